"""openai-responses: request bodies, decisions from fixture bodies, errors, second turn, usage."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.adapters import GET_ORDER, GET_ORDER_PARAMS, SYSTEM, USER, body, build, html_502
from toolstand.adapters.base import RequestSettings, ToolResult
from toolstand.adapters.openai_responses import OpenAIResponsesAdapter

API = "openai-responses"
adapter = OpenAIResponsesAdapter()


def expected_body(**extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": "test-model",
        "instructions": SYSTEM,
        "input": [{"role": "user", "content": USER}],
        "tools": [
            {
                "type": "function",
                "name": "get_order",
                "description": "Get an order's state by its exact id.",
                "parameters": GET_ORDER_PARAMS,
                "strict": False,
            }
        ],
    }
    out.update(extra)
    out.update({"temperature": 0.0, "max_output_tokens": 500})
    return out


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("get_order", {"type": "function", "name": "get_order"}),
    ],
)
@pytest.mark.parametrize("parallel", [None, True, False])
def test_build_every_tool_choice_and_parallel_setting(
    choice: str, wire: Any, parallel: Any
) -> None:
    built = build(adapter, [GET_ORDER], tool_choice=choice, parallel_tool_calls=parallel)
    extra: dict[str, Any] = {"tool_choice": wire}
    if parallel is not None:
        extra["parallel_tool_calls"] = parallel
    assert built.http.body == expected_body(**extra)
    assert built.http.url == "https://api.example.test/v1/responses"
    assert built.api_settings == {"strict": False}
    assert built.schema_notes == []


@pytest.mark.parametrize("tools", [None, []])
def test_no_tools_control(tools: Any) -> None:
    built = build(adapter, tools, tool_choice="get_order", parallel_tool_calls=True)
    assert built.http.body == {
        "model": "test-model",
        "instructions": SYSTEM,
        "input": [{"role": "user", "content": USER}],
        "temperature": 0.0,
        "max_output_tokens": 500,
    }
    decision = adapter.parse_decision(body(API, "a_text"))
    assert decision.kind == "text" and decision.calls == []


def test_build_strict_and_store_options() -> None:
    built = build(
        adapter, [GET_ORDER], options={"strict": True, "store": False}, base_url="http://h/v1/"
    )
    assert built.http.body["tools"][0]["strict"] is True
    assert built.http.body["store"] is False
    assert built.http.url == "http://h/v1/responses"


def test_auth() -> None:
    assert adapter.auth("k", RequestSettings()) == ({"authorization": "Bearer k"}, {})


def test_parse_text() -> None:
    d = adapter.parse_decision(body(API, "a_text"))
    assert (d.kind, d.finish_reason, d.truncated) == ("text", "completed", False)
    assert d.text == "Пожалуйста, укажите номер заказа в формате ORD-123456."


def test_parse_one_call_uses_call_id_not_item_id() -> None:
    [call] = adapter.parse_decision(body(API, "b_tool_call")).calls
    assert (call.call_id, call.raw_arguments, call.arguments) == (
        "call_R5pL2x",
        '{"order_id":"ORD-123456"}',
        {"order_id": "ORD-123456"},
    )


def test_parse_parallel_calls() -> None:
    d = adapter.parse_decision(body(API, "c_parallel_tool_calls"))
    assert d.kind == "tool_call"
    assert [(c.name, c.call_id) for c in d.calls] == [
        ("get_order", "call_R5pA"),
        ("quote_delivery", "call_R5pB"),
    ]


def test_parse_invalid_arguments() -> None:
    d = adapter.parse_decision(body(API, "f_invalid_arguments"))
    assert d.kind == "tool_call"
    assert d.calls[0].arguments is None and d.calls[0].parse_error is not None
    assert d.calls[0].raw_arguments == '{"origin": "Казань", "weight_kg": 2,5}'


def test_parse_refusal_item() -> None:
    d = adapter.parse_decision(body(API, "d_refusal"))
    assert (d.kind, d.refusal) == ("refusal", "I'm sorry, I can't help with that.")


def test_parse_content_filter() -> None:
    d = adapter.parse_decision(body(API, "d_content_filter"))
    assert (d.kind, d.finish_reason, d.flags) == ("refusal", "content_filter", ["content_filter"])


def test_parse_truncated_text() -> None:
    d = adapter.parse_decision(body(API, "e_max_tokens"))
    assert (d.kind, d.truncated, d.finish_reason) == ("text", True, "max_output_tokens")


def test_parse_truncated_mid_call() -> None:
    d = adapter.parse_decision(body(API, "e_max_tokens_mid_tool_call"))
    assert (d.kind, d.truncated, d.calls) == ("invalid", True, [])
    assert [c.raw_arguments for c in d.partial_calls] == ['{"origin": "Каз']


def test_parse_reasoning_item_is_flagged() -> None:
    d = adapter.parse_decision(body(API, "g_reasoning"))
    assert (d.kind, d.text, d.flags) == ("tool_call", None, ["reasoning"])


def test_parse_failed_response_is_invalid() -> None:
    d = adapter.parse_decision(body(API, "h_failed_invalid_prompt"))
    assert (d.kind, d.finish_reason, d.flags) == ("invalid", "failed", ["response_failed"])


@pytest.mark.parametrize("status", ["queued", "in_progress"])
def test_a_status_that_is_not_final_is_malformed_response(status: str) -> None:
    """Background mode is never asked for: a queued or running response is a provider
    condition, out of every quality denominator, not a decision."""
    err = adapter.classify_error(200, {}, body(API, f"i_status_{status}"))
    assert err is not None and err.code == "malformed_response"
    assert repr(status) in err.message and "not a final answer" in err.message


def test_hosted_items_beside_a_message_keep_the_text() -> None:
    d = adapter.parse_decision(body(API, "j_hosted_items_with_text"))
    assert (d.kind, d.text, d.flags) == ("text", "Вот схема доставки.", ["reasoning"])
    assert d.notes == ["output item 'image_generation_call' not read (kept in the raw body)"]
    assert adapter.classify_error(200, {}, body(API, "j_hosted_items_with_text")) is None


def test_hosted_items_beside_a_function_call_keep_the_call() -> None:
    d = adapter.parse_decision(body(API, "j_hosted_items_with_call"))
    assert (d.kind, [c.name for c in d.calls], d.calls[0].call_id) == (
        "tool_call",
        ["get_order"],
        "call_Rz2",
    )
    # a hosted tool's call (even one the client runs) is not one of the contract's calls
    assert d.notes == [
        "output item 'tool_search_call' not read (kept in the raw body)",
        "output item 'web_search_call' not read (kept in the raw body)",
    ]


def test_only_hosted_items_leave_nothing_readable() -> None:
    d = adapter.parse_decision(body(API, "j_hosted_items_only"))
    assert (d.kind, d.flags) == ("invalid", ["reasoning", "empty_response"])
    assert d.notes == [
        "output item 'mcp_call' not read (kept in the raw body)",
        "output item 'file_search_call' not read (kept in the raw body)",
    ]


def test_unknown_status_and_message_part_are_noted() -> None:
    response = body(API, "a_text")
    response["status"] = "paused"
    response["output"][0]["content"].append({"type": "output_audio", "data": "AAAA"})
    d = adapter.parse_decision(response)
    assert (d.kind, d.text) == ("text", "Пожалуйста, укажите номер заказа в формате ORD-123456.")
    assert d.notes == [
        "status 'paused' not in the adapter's table; decided from the content",
        "message part 'output_audio' not read (kept in the raw body)",
    ]


@pytest.mark.parametrize("value", [None, 3, "text", [], {}, {"output": "x"}, {"output": [None, 1]}])
def test_unusable_bodies_are_invalid(value: Any) -> None:
    assert adapter.parse_decision(value).kind == "invalid"


def test_classify() -> None:
    assert adapter.classify_error(200, {}, body(API, "b_tool_call")) is None
    assert adapter.classify_error(200, {}, body(API, "h_failed_invalid_prompt")) is None
    err = adapter.classify_error(200, {}, body(API, "h_failed_server_error"))
    assert err is not None and (err.code, err.message) == (
        "server_error",
        "The model failed to generate a response.",
    )
    err = adapter.classify_error(400, {}, body(API, "error_400_missing_tool_output"))
    assert err is not None and (err.code, err.message) == (
        "bad_request",
        "No tool output found for function call call_R5pL2x.",
    )
    err = adapter.classify_error(429, {"retry-after": "1"}, body(API, "error_429"))
    assert err is not None and (err.code, err.retry_after_s) == ("rate_limited", 1.0)
    err = adapter.classify_error(502, {}, html_502())
    assert err is not None and err.code == "server_error"
    err = adapter.classify_error(200, {}, html_502())
    assert err is not None and err.code == "malformed_response"
    err = adapter.classify_error(200, {}, {"choices": []})
    assert err is not None and err.code == "malformed_response"


def test_append_tool_result_replays_output_items_then_outputs() -> None:
    built = build(adapter, [GET_ORDER], tool_choice="required")
    response = body(API, "g_reasoning")
    decision = adapter.parse_decision(response)
    second = adapter.append_tool_result(
        request_body=built.http.body,
        response_body=response,
        decision=decision,
        results=[
            ToolResult(
                "call_Rz1", False, "get_order", {"ok": False, "error": {"code": "ORDER_NOT_FOUND"}}
            )
        ],
    )
    assert second == {
        **built.http.body,
        "tool_choice": "auto",
        "input": [
            {"role": "user", "content": USER},
            response["output"][0],
            response["output"][1],
            {
                "type": "function_call_output",
                "call_id": "call_Rz1",
                "output": '{"ok":false,"error":{"code":"ORDER_NOT_FOUND"}}',
            },
        ],
    }
    assert second["input"][1]["type"] == "reasoning"
    assert built.http.body["tool_choice"] == "required"


def test_append_tool_result_without_output_rebuilds_calls_and_skips_synthesized_ids() -> None:
    built = build(adapter, [GET_ORDER])
    decision = adapter.parse_decision(body(API, "b_tool_call"))
    decision.calls[0].call_id_synthesized = True
    second = adapter.append_tool_result(
        request_body=built.http.body,
        response_body={},
        decision=decision,
        results=[ToolResult(decision.calls[0].call_id, True, "get_order", {"ok": True})],
    )
    assert second["input"][1:] == [
        {
            "type": "function_call",
            "name": "get_order",
            "arguments": '{"order_id":"ORD-123456"}',
        },
        {"type": "function_call_output", "output": '{"ok":true}'},
    ]


def test_usage() -> None:
    u = adapter.usage(body(API, "g_reasoning"))
    assert (u.input_tokens, u.output_tokens) == (80, 150)
    assert adapter.usage(None).input_tokens is None


@pytest.mark.parametrize(
    ("status", "name", "code"),
    [
        (401, "error_401", "auth_error"),
        (429, "error_429_insufficient_quota", "rate_limited"),
        (500, "error_500", "server_error"),
        (503, "error_503", "overloaded"),
        (529, "error_503", "overloaded"),
    ],
)
def test_classify_shares_the_chat_error_envelope(status: int, name: str, code: str) -> None:
    chat_body = body("openai-chat", name)
    err = adapter.classify_error(status, {}, chat_body)
    assert err is not None and (err.code, err.message) == (code, chat_body["error"]["message"])
    assert err.should_retry is (code in ("server_error", "overloaded"))


def test_an_incomplete_item_in_a_completed_response_is_cut() -> None:
    response = body(API, "b_tool_call")
    [item] = [i for i in response["output"] if i["type"] == "function_call"]
    item.update(status="incomplete", arguments='{"order_id": "ORD-12')
    d = adapter.parse_decision(response)
    assert (d.kind, d.truncated, d.calls, len(d.partial_calls)) == ("invalid", True, [], 1)
