"""eager, sloppy and positional as a client sees them on each wire API."""

from __future__ import annotations

import httpx
import pytest

from tests.support.simwire import ask, fake_execute, for_case, second
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract
from toolstand.types import APIS

pytestmark = pytest.mark.parametrize("api", APIS)


async def test_eager_calls_where_it_should_ask(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    body = for_case(api, "sim-eager", by_id["missing_id"], contract)
    kinds = []
    for _ in range(30):  # the same request again gets the next draw
        _, got = await ask(client, api, "sim-eager", body)
        kinds.append(got.kind)
        if got.kind == "tool_call":
            assert [(c.name, c.arguments) for c in got.calls] == [
                ("get_order", {"order_id": "ORD-000000"})
            ]
    assert 15 <= kinds.count("tool_call") < 30 and "text" in kinds
    # on a call case it is careful
    _, got = await ask(
        client, api, "sim-eager", for_case(api, "sim-eager", by_id["direct_lookup"], contract)
    )
    assert [(c.name, c.arguments) for c in got.calls] == [("get_order", {"order_id": "ORD-123456"})]


async def test_eager_cancels_again_after_already_shipped(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["recovery_already_shipped"]
    first = for_case(api, "sim-eager", case, contract)
    data, got = await ask(client, api, "sim-eager", first)
    body = second(api, first, data, [fake_execute(case, c) for c in got.calls])
    outcomes = set()
    for _ in range(40):
        _, reply = await ask(client, api, "sim-eager", body)
        if reply.kind == "tool_call":
            assert [(c.name, c.arguments) for c in reply.calls] == [
                ("cancel_order", {"order_id": "ORD-777777", "reason": "duplicate"})
            ]
        outcomes.add(reply.kind)
    assert outcomes == {"tool_call", "text"}


async def test_eager_claims_success_after_an_error(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["recovery_route_unavailable"]
    first = for_case(api, "sim-eager", case, contract)
    data, got = await ask(client, api, "sim-eager", first)
    body = second(api, first, data, [fake_execute(case, c) for c in got.calls])
    texts = [(await ask(client, api, "sim-eager", body))[1].text for _ in range(40)]
    assert any("стоимость составит" in t for t in texts)  # false success
    assert any("недоступ" in t for t in texts)  # the careful answer


async def test_sloppy_arguments(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    body = for_case(api, "sim-sloppy", by_id["quote_complete"], contract)
    seen = {"string_number": 0, "enum_case": 0, "extra": 0, "broken": 0, "malformed": 0}
    for _ in range(60):
        data, got = await ask(client, api, "sim-sloppy", body)
        if got.kind == "invalid":
            assert (
                got.finish == "MALFORMED_FUNCTION_CALL"
                and "quote_delivery" in data["candidates"][0]["finishMessage"]
            )
            seen["malformed"] += 1
            continue
        (call,) = got.calls
        if call.arguments is None:
            assert isinstance(call.raw, str) and call.raw.startswith('{"origin"')
            seen["broken"] += 1
            continue
        seen["string_number"] += call.arguments["weight_kg"] in ("2.5", "2,5")
        seen["enum_case"] += call.arguments["service"] == "Express"
        seen["extra"] += "note" in call.arguments
    assert seen["string_number"] and seen["enum_case"] and seen["extra"]
    if api in ("openai-chat", "openai-responses"):
        assert seen["broken"] and not seen["malformed"]
    elif api == "gemini":
        assert seen["malformed"] and not seen["broken"]
    else:
        assert not seen["broken"] and not seen["malformed"]


async def test_positional_calls_the_first_tool_offered(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["cancel_explicit"]
    _, got = await ask(
        client, api, "sim-positional", for_case(api, "sim-positional", case, contract)
    )
    assert [(c.name, c.arguments) for c in got.calls] == [("get_order", {"order_id": "ORD-654321"})]
    reversed_body = for_case(api, "sim-positional", case, contract, reverse=True)
    _, got = await ask(client, api, "sim-positional", reversed_body)
    assert [(c.name, c.arguments) for c in got.calls] == [
        ("cancel_order", {"order_id": "ORD-654321", "reason": "changed_mind"})
    ]
    # text cases as careful
    _, got = await ask(
        client,
        api,
        "sim-positional",
        for_case(api, "sim-positional", by_id["missing_id"], contract),
    )
    assert got.kind == "text"
