from __future__ import annotations

from pathlib import Path

import pytest

from toolstand.cases import CaseFile, load_cases
from toolstand.contract import Contract, load_contract

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def contract() -> Contract:
    return load_contract(ROOT / "contracts" / "delivery_tools.json")


@pytest.fixture(scope="session")
def casefile() -> CaseFile:
    return load_cases(ROOT / "cases" / "delivery.jsonl")
