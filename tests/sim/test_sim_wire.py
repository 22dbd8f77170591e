"""sim-careful on all four wire APIs: exact shapes, tool choice, second turns, pairing errors."""

from __future__ import annotations

from collections import Counter

import httpx
import pytest

from tests.support.simwire import (
    FOLLOWUP_CASES,
    ask,
    build,
    call_key,
    fake_execute,
    for_case,
    second,
    send,
)
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract
from toolstand.types import APIS

pytestmark = pytest.mark.parametrize("api", APIS)


async def test_careful_answers_every_case_as_expected(
    api: str, client: httpx.AsyncClient, cases: list[Case], contract: Contract
) -> None:
    for case in cases:
        _, got = await ask(client, api, "sim-careful", for_case(api, "sim-careful", case, contract))
        exp = case.expect
        if exp.kind == "tool_call":
            assert got.kind == "tool_call", case.id
            want = Counter(call_key(c.tool, c.arguments) for c in exp.expected_calls)
            assert Counter(call_key(c.name, c.arguments) for c in got.calls) == want, case.id
        else:
            assert got.kind == exp.kind, case.id
            if exp.kind == "text" and exp.contains_any:
                assert exp.contains_any[0].lower() in got.text.lower(), case.id


async def test_call_shape_ids_usage_and_labels(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    body = for_case(api, "sim-careful", by_id["direct_lookup"], contract)
    resp = await send(client, api, "sim-careful", body)
    data = resp.json()
    assert resp.headers["x-toolstand-simulator"] == "1"
    if api == "openai-chat":
        assert data["id"].startswith("chatcmpl-sim-") and data["object"] == "chat.completion"
        assert data["model"] == "sim-careful"
        choice = data["choices"][0]
        assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
        call = choice["message"]["tool_calls"][0]
        assert call["id"].startswith("call_sim") and call["type"] == "function"
        assert call["function"] == {"name": "get_order", "arguments": '{"order_id":"ORD-123456"}'}
        usage = data["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
        assert resp.headers["x-request-id"].startswith("req_sim")
    elif api == "openai-responses":
        assert data["id"].startswith("resp_sim") and data["object"] == "response"
        assert data["status"] == "completed" and data["model"] == "sim-careful"
        (item,) = data["output"]
        assert item["type"] == "function_call" and item["id"].startswith("fc_sim")
        assert (
            item["call_id"].startswith("call_sim")
            and item["arguments"] == '{"order_id":"ORD-123456"}'
        )
        assert (
            data["usage"]["total_tokens"]
            == data["usage"]["input_tokens"] + data["usage"]["output_tokens"]
        )
        assert data["instructions"] == body["instructions"] and data["tools"] == body["tools"]
    elif api == "anthropic":
        assert (
            data["id"].startswith("msg_sim")
            and data["type"] == "message"
            and data["role"] == "assistant"
        )
        assert data["stop_reason"] == "tool_use" and data["model"] == "sim-careful"
        (block,) = data["content"]
        assert block["type"] == "tool_use" and block["id"].startswith("toolu_sim")
        assert block["input"] == {"order_id": "ORD-123456"}
        assert {"input_tokens", "output_tokens", "cache_read_input_tokens"} <= set(data["usage"])
        assert resp.headers["request-id"].startswith("req_sim")
    else:
        (cand,) = data["candidates"]
        assert cand["finishReason"] == "STOP" and cand["content"]["role"] == "model"
        (part,) = cand["content"]["parts"]
        assert part["functionCall"] == {"name": "get_order", "args": {"order_id": "ORD-123456"}}
        assert part["thoughtSignature"]
        assert data["modelVersion"] == "sim-careful"
        meta = data["usageMetadata"]
        assert meta["totalTokenCount"] == meta["promptTokenCount"] + meta["candidatesTokenCount"]


async def test_text_and_refusal_shapes(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    data, got = await ask(
        client, api, "sim-careful", for_case(api, "sim-careful", by_id["missing_id"], contract)
    )
    assert got.kind == "text" and "номер" in got.text
    assert (
        got.finish
        == {
            "openai-chat": "stop",
            "openai-responses": "completed",
            "anthropic": "end_turn",
            "gemini": "STOP",
        }[api]
    )
    data, got = await ask(
        client, api, "sim-careful", for_case(api, "sim-careful", by_id["refuse_forgery"], contract)
    )
    assert got.kind == "refusal"
    if api == "openai-chat":
        assert (
            data["choices"][0]["message"]["content"] is None
            and data["choices"][0]["finish_reason"] == "stop"
        )
    if api == "anthropic":
        assert data["stop_details"]["type"] == "refusal"
    if api == "gemini":
        assert "content" not in data["candidates"][0]


async def test_parallel_calls_and_switch(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["parallel_lookup"]
    _, got = await ask(client, api, "sim-careful", for_case(api, "sim-careful", case, contract))
    assert [c.arguments for c in got.calls] == [
        {"order_id": "ORD-111111"},
        {"order_id": "ORD-222222"},
    ]
    if api != "gemini":  # Gemini sends no call ids and has no parallel switch
        assert len({c.call_id for c in got.calls}) == 2
        body = for_case(api, "sim-careful", case, contract, parallel=False)
        _, got = await ask(client, api, "sim-careful", body)
        assert len(got.calls) == 1


@pytest.mark.parametrize("persona", ["careful", "eager", "sloppy", "positional"])
async def test_no_tools_and_choice_none_never_call(
    api: str, persona: str, client: httpx.AsyncClient, cases: list[Case], contract: Contract
) -> None:
    model = f"sim-{persona}"
    for case in cases:
        for choice in (None, "none"):
            _, got = await ask(client, api, model, for_case(api, model, case, contract, choice))
            assert got.kind in ("text", "refusal"), (case.id, choice)


async def test_forced_tool_is_called(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    body = for_case(api, "sim-careful", by_id["cancel_explicit"], contract, "cancel_order")
    _data, got = await ask(client, api, "sim-careful", body)
    assert [call_key(c.name, c.arguments) for c in got.calls] == [
        call_key("cancel_order", {"order_id": "ORD-654321", "reason": "changed_mind"})
    ]
    if api == "openai-chat":  # api.openai.com reports "stop" for a named forced call
        assert got.finish == "stop"
    # forcing a tool on a case that expects text still calls it, with made-up values
    _, got = await ask(
        client,
        api,
        "sim-careful",
        for_case(api, "sim-careful", by_id["missing_id"], contract, "get_order"),
    )
    assert [c.name for c in got.calls] == ["get_order"] and got.calls[0].arguments == {
        "order_id": "ORD-000000"
    }


async def test_unknown_conversation_says_it_is_a_simulator(
    api: str, client: httpx.AsyncClient, contract: Contract
) -> None:
    body = build(api, "sim-careful", [{"role": "user", "content": "Hello there"}], contract.tools)
    _, got = await ask(client, api, "sim-careful", body)
    assert got.kind == "text" and "simulator" in got.text and "does not know" in got.text


@pytest.mark.parametrize(
    "case_id",
    [*FOLLOWUP_CASES, "parallel_lookup"],
)
async def test_careful_second_turn_reports_truthfully(
    api: str, case_id: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id[case_id]
    first = for_case(api, "sim-careful", case, contract)
    data, got = await ask(client, api, "sim-careful", first)
    results = [fake_execute(case, c) for c in got.calls]
    _, reply = await ask(client, api, "sim-careful", second(api, first, data, results))
    assert reply.kind == "text"
    if case.followup is not None:
        assert case.followup.contains_any
        assert any(w.lower() in reply.text.lower() for w in case.followup.contains_any)
        assert not any(w.lower() in reply.text.lower() for w in case.followup.must_not_contain)
    else:
        assert "ORDER_NOT_FOUND" in reply.text  # neither order exists in the fake executor


async def test_result_for_unknown_call_is_400(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["direct_lookup"]
    first = for_case(api, "sim-careful", case, contract)
    data, _got = await ask(client, api, "sim-careful", first)
    body = second(api, first, data, [{"ok": True}])
    if api == "openai-chat":
        body["messages"][-1]["tool_call_id"] = "call_wrong"
    elif api == "openai-responses":
        body["input"][-1]["call_id"] = "call_wrong"
    elif api == "anthropic":
        body["messages"][-1]["content"][0]["tool_use_id"] = "toolu_wrong"
    else:  # a synthesized id sent back is what the APIs forbid
        body["contents"][-1]["parts"][0]["functionResponse"]["id"] = "gemini-call-0"
    resp = await send(client, api, "sim-careful", body)
    assert resp.status_code == 400
    err = resp.json()
    if api in ("openai-chat", "openai-responses"):
        assert err["error"]["type"] == "invalid_request_error" and err["error"]["message"]
    elif api == "anthropic":
        assert err["type"] == "error" and err["error"]["type"] == "invalid_request_error"
        assert "unexpected `tool_use_id`" in err["error"]["message"] and err[
            "request_id"
        ].startswith("req_")
    else:
        assert err["error"]["status"] == "INVALID_ARGUMENT" and err["error"]["code"] == 400


async def test_unanswered_call_is_400(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["parallel_lookup"]
    first = for_case(api, "sim-careful", case, contract)
    data, _got = await ask(client, api, "sim-careful", first)
    body = second(api, first, data, [{"ok": True}, {"ok": True}])
    if api == "openai-chat":
        body["messages"].pop()
    elif api == "openai-responses":
        body["input"].pop()
    elif api == "anthropic":
        body["messages"][-1]["content"].pop()
    else:  # Gemini is lenient about missing responses, but not about lost thought signatures
        del body["contents"][-2]["parts"][0]["thoughtSignature"]
    resp = await send(client, api, "sim-careful", body)
    assert resp.status_code == 400, resp.text


async def test_token_limit_truncates(
    api: str, client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    data, got = await ask(
        client,
        api,
        "sim-careful",
        for_case(api, "sim-careful", by_id["missing_id"], contract, max_tokens=2),
    )
    want = {
        "openai-chat": "length",
        "openai-responses": "incomplete",
        "anthropic": "max_tokens",
        "gemini": "MAX_TOKENS",
    }[api]
    assert got.finish == want and len(got.text) <= 8
    data, got = await ask(
        client,
        api,
        "sim-careful",
        for_case(api, "sim-careful", by_id["quote_complete"], contract, max_tokens=3),
    )
    assert got.finish == want
    if api in ("openai-chat", "openai-responses"):
        assert got.calls[0].arguments is None  # the arguments string was cut mid-way
    if api == "openai-responses":
        assert data["incomplete_details"] == {"reason": "max_output_tokens"}
