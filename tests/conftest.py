from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from toolstand.spec.cases import CaseFile, load_cases
from toolstand.spec.contract import Contract, load_contract

ROOT = Path(__file__).resolve().parent.parent

# The suite is deterministic: property tests draw the same examples on every run
# (set HYPOTHESIS_PROFILE=explore for fresh random draws while hunting bugs).
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def contract() -> Contract:
    return load_contract(ROOT / "contracts" / "delivery_tools.json")


@pytest.fixture(scope="session")
def casefile() -> CaseFile:
    return load_cases(ROOT / "cases" / "delivery.jsonl")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The Pilot tests first (each starts an app: ~1-2 s, against milliseconds for most
    others), so that with ``--dist loadfile --no-loadscope-reorder`` (``make test``) the
    workers end on short files together instead of one of them running a long TUI file
    alone at the end; the order within each part is the collection's."""
    items.sort(key=lambda item: "tests/tui/" not in item.nodeid)
