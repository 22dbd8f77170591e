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
