"""sim-flaky's faults as a client meets them, each forced, then all of them in a natural run."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import httpx
import pytest

from tests.support.simwire import HEADERS, for_case, path
from toolstand.sim import SimServer
from toolstand.sim.personas import FLAKY_FAULT_RATES
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract
from toolstand.types import APIS


async def post_flaky(
    server: SimServer, api: str, case: Case, contract: Contract, timeout: float = 5.0
) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.root, timeout=timeout) as client:
        body = for_case(api, "sim-flaky", case, contract)
        return await client.post(path(api, "sim-flaky"), json=body, headers=HEADERS[api])


@pytest.mark.parametrize("api", APIS)
async def test_rate_limited_with_retry_hints(
    api: str, cases: list[Case], contract: Contract
) -> None:
    async with SimServer(
        cases, contract, retry_after_s=1.5, fault_rates={"rate_limited": 1.0}
    ) as server:
        resp = await post_flaky(server, api, cases[0], contract)
    assert resp.status_code == 429
    data = resp.json()
    if api in ("openai-chat", "openai-responses"):
        assert resp.headers["retry-after"] == "1.5" and resp.headers["retry-after-ms"] == "1500"
        assert data["error"]["code"] == "rate_limit_exceeded"
    elif api == "anthropic":
        assert resp.headers["retry-after"] == "1.5" and data["error"]["type"] == "rate_limit_error"
    else:
        assert data["error"]["status"] == "RESOURCE_EXHAUSTED"
        retry = [d for d in data["error"]["details"] if d["@type"].endswith("google.rpc.RetryInfo")]
        assert retry == [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}
        ]


@pytest.mark.parametrize("api", APIS)
async def test_server_errors_and_overload(api: str, cases: list[Case], contract: Contract) -> None:
    async with SimServer(cases, contract, fault_rates={"server_error": 1.0}) as server:
        resp = await post_flaky(server, api, cases[0], contract)
    assert resp.status_code == 500 and "error" in resp.json()
    async with SimServer(cases, contract, fault_rates={"overloaded": 1.0}) as server:
        resp = await post_flaky(server, api, cases[0], contract)
    if api == "anthropic":
        assert resp.status_code == 529 and resp.json()["error"]["type"] == "overloaded_error"
    else:
        assert resp.status_code == 503
    if api == "gemini":
        assert resp.json()["error"]["status"] == "UNAVAILABLE"


@pytest.mark.parametrize("api", APIS)
async def test_html_502_torn_body_and_reset(
    api: str, cases: list[Case], contract: Contract
) -> None:
    async with SimServer(cases, contract, fault_rates={"html_502": 1.0}) as server:
        resp = await post_flaky(server, api, cases[0], contract)
    assert resp.status_code == 502 and resp.headers["content-type"] == "text/html"
    assert resp.text.startswith("<html>")
    async with SimServer(cases, contract, fault_rates={"torn_body": 1.0}) as server:
        with pytest.raises(httpx.RemoteProtocolError):
            await post_flaky(server, api, cases[0], contract)
    async with SimServer(cases, contract, fault_rates={"reset": 1.0}) as server:
        with pytest.raises(httpx.TransportError):
            await post_flaky(server, api, cases[0], contract)


async def test_timeout_holds_until_the_client_gives_up_and_stop_ends_holds(
    cases: list[Case], contract: Contract
) -> None:
    server = SimServer(cases, contract, fault_rates={"timeout": 1.0})
    await server.start()
    with pytest.raises(httpx.ReadTimeout):
        await post_flaky(server, "openai-chat", cases[0], contract, timeout=0.2)
    # a held connection whose client is still waiting ends when the server stops
    client = httpx.AsyncClient(base_url=server.root, timeout=30.0)
    pending = asyncio.create_task(
        client.post(
            path("openai-chat", "sim-flaky"),
            json=for_case("openai-chat", "sim-flaky", cases[0], contract),
            headers=HEADERS["openai-chat"],
        )
    )
    while server.in_flight == 0:
        await asyncio.sleep(0)  # yield until the request is being held
    started = time.monotonic()
    await server.stop()
    with pytest.raises(httpx.TransportError):
        await pending
    assert time.monotonic() - started < 5
    await client.aclose()


async def test_natural_run_shows_every_fault(cases: list[Case], contract: Contract) -> None:
    seen: Counter[str] = Counter()
    async with (
        SimServer(cases, contract, seed=3) as server,
        httpx.AsyncClient(base_url=server.root, timeout=0.3) as client,
    ):
        body = for_case("openai-chat", "sim-flaky", cases[0], contract)
        for _ in range(300):
            try:
                resp = await client.post(
                    path("openai-chat", "sim-flaky"), json=body, headers=HEADERS["openai-chat"]
                )
            except httpx.ReadTimeout:
                seen["timeout"] += 1
                continue
            except (httpx.RemoteProtocolError, httpx.ReadError):
                seen["torn_or_reset"] += 1
                continue
            seen[str(resp.status_code)] += 1
        outcomes = server.outcomes
    assert set(outcomes) == {*FLAKY_FAULT_RATES, "calls"}
    assert seen["429"] == outcomes["rate_limited"] and seen["500"] == outcomes["server_error"]
    assert seen["503"] == outcomes["overloaded"] and seen["502"] == outcomes["html_502"]
    assert seen["timeout"] == outcomes["timeout"] and seen["200"] == outcomes["calls"]
    assert seen["torn_or_reset"] == outcomes["torn_body"] + outcomes["reset"]
