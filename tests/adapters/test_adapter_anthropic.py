"""anthropic: both API versions, request bodies, decisions, errors, second turn, usage."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.adapters import GET_ORDER, GET_ORDER_PARAMS, SYSTEM, USER, body, build, html_502
from toolstand.adapters.anthropic import AnthropicAdapter
from toolstand.adapters.base import RequestSettings, ToolResult

API = "anthropic"
adapter = AnthropicAdapter()
BASE = "https://api.anthropic.com"


def expected_body(**extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": "test-model",
        "max_tokens": 500,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": USER}],
        "tools": [
            {
                "name": "get_order",
                "description": "Get an order's state by its exact id.",
                "input_schema": GET_ORDER_PARAMS,
            }
        ],
    }
    out.update(extra)
    out["temperature"] = 0.0
    return out


@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        ("auto", None, {"type": "auto"}),
        ("auto", True, {"type": "auto", "disable_parallel_tool_use": False}),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("none", None, {"type": "none"}),
        ("none", False, {"type": "none"}),
        ("required", None, {"type": "any"}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        ("get_order", None, {"type": "tool", "name": "get_order"}),
        (
            "get_order",
            True,
            {"type": "tool", "name": "get_order", "disable_parallel_tool_use": False},
        ),
    ],
)
def test_build_every_tool_choice_and_parallel_setting(
    choice: str, parallel: Any, wire: Any
) -> None:
    built = build(
        adapter, [GET_ORDER], base_url=BASE, tool_choice=choice, parallel_tool_calls=parallel
    )
    assert built.http.body == expected_body(tool_choice=wire)
    assert built.http.url == "https://api.anthropic.com/v1/messages"
    assert built.http.headers == {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
    }
    assert built.api_settings == {"anthropic_version": "2023-06-01", "auth_header": "x-api-key"}


@pytest.mark.parametrize("tools", [None, []])
def test_no_tools_control(tools: Any) -> None:
    built = build(adapter, tools, base_url=BASE + "/", tool_choice="required")
    assert built.http.body == {
        "model": "test-model",
        "max_tokens": 500,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": USER}],
        "temperature": 0.0,
    }
    assert built.http.url == "https://api.anthropic.com/v1/messages"
    decision = adapter.parse_decision(body(API, "a_text"))
    assert decision.kind == "text" and decision.calls == []


def test_max_tokens_defaults_because_it_is_required() -> None:
    built = build(adapter, None, base_url=BASE, max_output_tokens=None, system=None)
    assert built.http.body["max_tokens"] == 1024
    assert "system" not in built.http.body


def test_version_2023_sends_x_api_key_and_temperature() -> None:
    s = RequestSettings(options={"anthropic_version": "2023-06-01"})
    assert adapter.auth("sk-ant-1", s) == ({"x-api-key": "sk-ant-1"}, {})
    assert adapter.auth("sk-ant-1", RequestSettings()) == ({"x-api-key": "sk-ant-1"}, {})


def test_version_2026_sends_bearer_and_no_sampling_params() -> None:
    options = {"anthropic_version": "2026-10-21"}
    built = build(adapter, [GET_ORDER], base_url=BASE, options=options, temperature=0.7)
    assert "temperature" not in built.http.body
    assert built.http.headers["anthropic-version"] == "2026-10-21"
    assert built.api_settings == {
        "anthropic_version": "2026-10-21",
        "auth_header": "authorization",
        "unsent_settings": ["temperature"],
    }
    assert adapter.auth("sk-ant-1", RequestSettings(options=options)) == (
        {"authorization": "Bearer sk-ant-1"},
        {},
    )


def test_bad_version_is_refused_with_the_allowed_form() -> None:
    with pytest.raises(ValueError, match="expected a date such as '2023-06-01'"):
        build(adapter, None, options={"anthropic_version": "latest"})


def test_parse_text() -> None:
    d = adapter.parse_decision(body(API, "a_text"))
    assert (d.kind, d.finish_reason) == ("text", "end_turn")


def test_parse_one_call_reserializes_input() -> None:
    d = adapter.parse_decision(body(API, "b_tool_call"))
    assert (d.kind, d.text, d.finish_reason) == ("tool_call", "Проверю заказ.", "tool_use")
    [call] = d.calls
    assert call.to_dict() == {
        "name": "get_order",
        "arguments": {"order_id": "ORD-123456"},
        "raw_arguments": '{"order_id":"ORD-123456"}',
        "call_id": "toolu_01Ab",
        "call_id_synthesized": False,
        "raw_reserialized": True,
        "parse_error": None,
    }


def test_parse_parallel_keeps_key_order() -> None:
    d = adapter.parse_decision(body(API, "c_parallel_tool_calls"))
    assert [c.call_id for c in d.calls] == ["toolu_01P1", "toolu_01P2"]
    assert d.calls[1].raw_arguments == (
        '{"weight_kg":2.5,"origin":"Казань","destination":"Самара","service":"express"}'
    )


def test_parse_input_that_is_not_an_object() -> None:
    [call] = adapter.parse_decision(body(API, "f_input_not_object")).calls
    assert call.arguments is None and call.parse_error is not None
    assert call.raw_arguments == '{"order_id": "ORD-1'


def test_parse_refusal() -> None:
    d = adapter.parse_decision(body(API, "d_refusal"))
    assert (d.kind, d.refusal, d.finish_reason) == (
        "refusal",
        "This request was declined by safety classifiers.",
        "refusal",
    )


def test_parse_truncated_text_and_truncated_call() -> None:
    d = adapter.parse_decision(body(API, "e_max_tokens"))
    assert (d.kind, d.truncated) == ("text", True)
    d = adapter.parse_decision(body(API, "e_max_tokens_mid_tool_use"))
    assert (d.kind, d.truncated, d.calls) == ("invalid", True, [])
    assert d.partial_calls[0].arguments == {"origin": "Казань"}


def test_parse_thinking_is_flagged() -> None:
    d = adapter.parse_decision(body(API, "g_thinking"))
    assert (d.kind, d.text, d.flags) == ("tool_call", None, ["reasoning"])


def test_server_tool_and_unknown_blocks_are_noted_and_the_text_read() -> None:
    d = adapter.parse_decision(body(API, "h_server_tool_blocks"))
    assert (d.kind, d.text, d.flags) == (
        "text",
        "Я не нашёл публичных сведений о заказе.",
        ["server_tool"],
    )
    assert d.notes == [
        "content block 'server_tool_use' not read (kept in the raw body)",
        "content block 'web_search_tool_result' not read (kept in the raw body)",
        "content block 'container_upload' not read (kept in the raw body)",
    ]


def test_unknown_stop_reason_is_noted() -> None:
    response = body(API, "a_text")
    response["stop_reason"] = "something_new"
    d = adapter.parse_decision(response)
    assert (d.kind, d.finish_reason) == ("text", "something_new")
    assert d.notes == [
        "stop_reason 'something_new' not in the adapter's table; decided from the content"
    ]


@pytest.mark.parametrize(
    "value", [None, "x", [], {}, {"content": None}, {"content": [{"type": "tool_use"}]}]
)
def test_unusable_bodies_are_invalid(value: Any) -> None:
    assert adapter.parse_decision(value).kind == "invalid"


@pytest.mark.parametrize(
    ("status", "name", "code", "message"),
    [
        (400, "error_400", "bad_request", "messages.2.content.0: unexpected `tool_use_id`"),
        (401, "error_401", "auth_error", "invalid x-api-key"),
        (429, "error_429", "rate_limited", "This request would exceed"),
        (500, "error_500", "server_error", "Internal server error"),
        (529, "error_529", "overloaded", "Overloaded"),
        (503, "error_529", "overloaded", "Overloaded"),
    ],
)
def test_classify_error_statuses(status: int, name: str, code: str, message: str) -> None:
    err = adapter.classify_error(status, {}, body(API, name))
    assert err is not None and err.code == code and err.message.startswith(message)


def test_classify_429_headers_and_2xx_shapes() -> None:
    err = adapter.classify_error(
        429, {"retry-after": "12", "x-should-retry": "true"}, body(API, "error_429")
    )
    assert err is not None and (err.retry_after_s, err.retryable) == (12.0, True)
    assert adapter.classify_error(200, {}, body(API, "b_tool_call")) is None
    err = adapter.classify_error(200, {}, body(API, "error_529"))
    assert err is not None and err.code == "overloaded"
    err = adapter.classify_error(200, {}, html_502())
    assert err is not None and err.code == "malformed_response"
    err = adapter.classify_error(502, {}, html_502())
    assert err is not None and err.code == "server_error"


def test_append_tool_result_assistant_content_then_one_user_turn() -> None:
    built = build(
        adapter, [GET_ORDER], base_url=BASE, tool_choice="required", parallel_tool_calls=False
    )
    response = body(API, "g_thinking")
    response["content"].append(
        {
            "type": "tool_use",
            "id": "toolu_01X2",
            "name": "get_order",
            "input": {"order_id": "ORD-000001"},
        }
    )
    decision = adapter.parse_decision(response)
    results = [
        ToolResult("toolu_01Th", False, "get_order", {"ok": True, "status": "in_transit"}),
        ToolResult(
            "toolu_01X2", False, "get_order", {"ok": False, "error": {"code": "ORDER_NOT_FOUND"}}
        ),
    ]
    second = adapter.append_tool_result(
        request_body=built.http.body, response_body=response, decision=decision, results=results
    )
    assert second == {
        **built.http.body,
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
        "messages": [
            {"role": "user", "content": USER},
            {"role": "assistant", "content": response["content"]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01Th",
                        "content": '{"ok":true,"status":"in_transit"}',
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01X2",
                        "content": '{"ok":false,"error":{"code":"ORDER_NOT_FOUND"}}',
                        "is_error": True,
                    },
                ],
            },
        ],
    }
    assert second["messages"][1]["content"][0]["type"] == "thinking"
    assert built.http.body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}


def test_usage_sums_cache_tokens() -> None:
    u = adapter.usage(
        {
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 100,
                "output_tokens": 7,
            }
        }
    )
    assert (u.input_tokens, u.output_tokens) == (115, 7)
    u = adapter.usage(body(API, "b_tool_call"))
    assert (u.input_tokens, u.output_tokens) == (420, 40)
    assert adapter.usage({"usage": "x"}).input_tokens is None
