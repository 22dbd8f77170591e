from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.support.simwire import ROOT
from toolstand.sim import SimServer
from toolstand.spec.cases import Case, load_cases
from toolstand.spec.contract import Contract, load_contract


@pytest.fixture(scope="session")
def contract() -> Contract:
    return load_contract(ROOT / "contracts" / "delivery_tools.json")


@pytest.fixture(scope="session")
def cases() -> list[Case]:
    return load_cases(ROOT / "cases" / "delivery.jsonl").cases


@pytest.fixture(scope="session")
def by_id(cases: list[Case]) -> dict[str, Case]:
    return {c.id: c for c in cases}


@pytest.fixture
async def sim(cases: list[Case], contract: Contract) -> AsyncIterator[SimServer]:
    async with SimServer(cases, contract, seed=7) as server:
        yield server


@pytest.fixture
async def client(sim: SimServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=sim.root, timeout=5.0) as c:
        yield c
