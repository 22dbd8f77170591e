"""openai-chat: request bodies, decisions from fixture bodies, errors, second turn, usage."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.support.adapters import (
    GET_ORDER,
    GET_ORDER_PARAMS,
    MESSAGES,
    SYSTEM,
    TOOLS,
    USER,
    body,
    build,
    html_502,
)
from toolstand.adapters.base import RequestSettings, ToolResult
from toolstand.adapters.openai_chat import OpenAIChatAdapter

API = "openai-chat"
adapter = OpenAIChatAdapter()


def expected_body(**extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": "test-model",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_order",
                    "description": "Get an order's state by its exact id.",
                    "parameters": GET_ORDER_PARAMS,
                },
            }
        ],
    }
    out.update(extra)
    out.update({"temperature": 0.0, "max_completion_tokens": 500})
    return out


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("get_order", {"type": "function", "function": {"name": "get_order"}}),
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
    assert built.http.method == "POST"
    assert built.http.url == "https://api.example.test/v1/chat/completions"
    assert built.http.headers == {"content-type": "application/json"}
    assert built.schema_notes == []
    assert built.api_settings == {}


@pytest.mark.parametrize("tools", [None, []])
def test_no_tools_control_sends_no_tools_and_no_tool_choice(tools: Any) -> None:
    built = build(adapter, tools, tool_choice="required", parallel_tool_calls=False)
    assert built.http.body == {
        "model": "test-model",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        "temperature": 0.0,
        "max_completion_tokens": 500,
    }
    decision = adapter.parse_decision(body(API, "a_text"))
    assert decision.kind == "text" and decision.calls == []


def test_build_trailing_slash_none_settings_and_no_system() -> None:
    built = build(
        adapter,
        None,
        base_url="http://localhost:11434/v1/",
        system=None,
        temperature=None,
        max_output_tokens=None,
    )
    assert built.http.url == "http://localhost:11434/v1/chat/completions"
    assert built.http.body == {"model": "test-model", "messages": MESSAGES}


def test_build_max_tokens_param_option_for_ollama() -> None:
    built = build(adapter, None, options={"max_tokens_param": "max_tokens"})
    assert built.http.body["max_tokens"] == 500
    assert "max_completion_tokens" not in built.http.body
    assert built.api_settings == {"max_tokens_param": "max_tokens"}
    with pytest.raises(ValueError, match="allowed: max_completion_tokens, max_tokens"):
        build(adapter, None, options={"max_tokens_param": "n_predict"})


def test_build_strips_x_normalize_and_notes_it() -> None:
    built = build(adapter, TOOLS)
    sent = built.http.body["tools"][1]["function"]["parameters"]
    assert "x-normalize" not in sent["properties"]["origin"]
    assert sent["properties"]["weight_kg"] == {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": 1000,
    }
    assert [(n.tool, n.path, n.action, n.keyword) for n in built.schema_notes] == [
        ("quote_delivery", "$.properties.origin", "dropped", "x-normalize"),
        ("quote_delivery", "$.properties.destination", "dropped", "x-normalize"),
    ]
    # the contract itself is untouched
    assert "x-normalize" in TOOLS[1].parameters["properties"]["origin"]


def test_auth_is_a_bearer_header() -> None:
    assert adapter.auth("sk-1", RequestSettings()) == ({"authorization": "Bearer sk-1"}, {})


# --- parse_decision ---------------------------------------------------------------


def test_parse_text() -> None:
    d = adapter.parse_decision(body(API, "a_text"))
    assert (d.kind, d.finish_reason, d.truncated, d.flags) == ("text", "stop", False, [])
    assert d.text is not None and "ORD-123456" in d.text


def test_parse_one_call_keeps_raw_arguments_verbatim() -> None:
    d = adapter.parse_decision(body(API, "b_tool_call"))
    assert d.kind == "tool_call" and d.finish_reason == "tool_calls"
    [call] = d.calls
    assert call.to_dict() == {
        "name": "get_order",
        "arguments": {"order_id": "ORD-123456"},
        "raw_arguments": '{"order_id":"ORD-123456"}',
        "call_id": "call_k3Vq81",
        "call_id_synthesized": False,
        "raw_reserialized": False,
        "parse_error": None,
    }


def test_parse_forced_call_with_finish_stop_is_still_a_call() -> None:
    d = adapter.parse_decision(body(API, "b_tool_call_forced"))
    assert d.kind == "tool_call" and d.finish_reason == "stop"
    assert d.calls[0].raw_arguments == '{"order_id": "ORD-123456"}'


def test_parse_parallel_calls() -> None:
    d = adapter.parse_decision(body(API, "c_parallel_tool_calls"))
    assert [(c.name, c.call_id) for c in d.calls] == [
        ("get_order", "call_p4r1"),
        ("quote_delivery", "call_p4r2"),
    ]
    assert d.calls[1].arguments == {
        "origin": "Казань",
        "destination": "Самара",
        "weight_kg": 2.5,
        "service": "express",
    }


def test_parse_invalid_argument_json_is_a_call_without_arguments() -> None:
    d = adapter.parse_decision(body(API, "f_invalid_arguments"))
    assert d.kind == "tool_call"
    [call] = d.calls
    assert call.name == "quote_delivery" and call.arguments is None
    assert call.raw_arguments is not None and '"weight_kg": 2,5' in call.raw_arguments
    assert call.parse_error is not None and call.parse_error.startswith("not valid JSON")


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("[1, 2]", "arguments are a JSON array, not an object"),
        ("null", "arguments are a JSON null, not an object"),
    ],
)
def test_parse_arguments_that_are_json_but_not_an_object(raw: str, error: str) -> None:
    b = body(API, "b_tool_call")
    b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = raw
    call = adapter.parse_decision(b).calls[0]
    assert (call.arguments, call.raw_arguments, call.parse_error) == (None, raw, error)


def test_parse_refusal_field() -> None:
    d = adapter.parse_decision(body(API, "d_refusal"))
    assert (d.kind, d.refusal, d.finish_reason) == (
        "refusal",
        "I'm sorry, but I can't help with that request.",
        "stop",
    )


def test_parse_content_filter_is_a_refusal_without_text() -> None:
    d = adapter.parse_decision(body(API, "d_content_filter"))
    assert (d.kind, d.refusal, d.flags) == ("refusal", None, ["content_filter"])


def test_parse_truncated_text() -> None:
    d = adapter.parse_decision(body(API, "e_max_tokens"))
    assert (d.kind, d.truncated, d.finish_reason, d.calls) == ("text", True, "length", [])


def test_parse_truncated_mid_call_is_invalid_with_a_partial_call() -> None:
    d = adapter.parse_decision(body(API, "e_max_tokens_mid_tool_call"))
    assert (d.kind, d.truncated, d.calls) == ("invalid", True, [])
    [partial] = d.partial_calls
    assert partial.name == "quote_delivery" and partial.arguments is None
    assert partial.raw_arguments == '{"origin": "Казань", "destination": "Сам'


def test_parse_reasoning_is_flagged_not_text() -> None:
    d = adapter.parse_decision(body(API, "g_reasoning_vllm"))
    assert d.kind == "tool_call" and d.text is None and d.flags == ["reasoning"]
    assert d.calls[0].call_id == "chatcmpl-tool-5b2c0d9e"


def test_compat_empty_tool_calls_follows_the_content() -> None:
    d = adapter.parse_decision(body(API, "compat_empty_tool_calls"))
    assert (d.kind, d.finish_reason, d.flags) == ("text", "tool_calls", ["empty_tool_calls"])


def test_compat_arguments_object_is_reserialized() -> None:
    d = adapter.parse_decision(body(API, "compat_arguments_object"))
    [call] = d.calls
    assert call.raw_reserialized is True
    assert call.raw_arguments == '{"order_id":"ORD-123456","note":"x"}'
    assert call.arguments == {"order_id": "ORD-123456", "note": "x"}
    assert d.flags == ["arguments_object"]


def test_compat_ollama_empty_content_is_no_text() -> None:
    d = adapter.parse_decision(body(API, "compat_ollama_tool_call"))
    assert (d.kind, d.text, d.flags) == ("tool_call", None, ["reasoning"])


def test_missing_call_id_is_synthesized() -> None:
    b = body(API, "b_tool_call")
    del b["choices"][0]["message"]["tool_calls"][0]["id"]
    call = adapter.parse_decision(b).calls[0]
    assert (call.call_id, call.call_id_synthesized) == ("openai-chat-call-0", True)


def test_unknown_finish_reason_is_noted_and_the_text_read() -> None:
    d = adapter.parse_decision(body(API, "h_unknown_finish_reason"))
    assert (d.kind, d.text, d.finish_reason) == (
        "text",
        "Пожалуйста, укажите номер заказа.",
        "eos_token",
    )
    assert d.notes == [
        "finish_reason 'eos_token' not in the adapter's table; decided from the content"
    ]


def test_custom_tool_calls_are_noted_not_malformed() -> None:
    response = body(API, "b_tool_call")
    response["choices"][0]["message"]["tool_calls"].append(
        {"id": "call_x", "type": "custom", "custom": {"name": "grep", "input": "ORD"}}
    )
    d = adapter.parse_decision(response)
    assert (d.kind, [c.name for c in d.calls]) == ("tool_call", ["get_order"])
    assert d.notes == ["tool call 'custom' not read (kept in the raw body)"]


@pytest.mark.parametrize(
    ("value", "flag"),
    [
        (None, "malformed_body"),
        ([], "malformed_body"),
        ("x", "malformed_body"),
        ({}, "no_choices"),
        ({"choices": []}, "no_choices"),
        ({"error": {"message": "x"}}, "error_body"),
        ({"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}, "malformed_tool_call"),
    ],
)
def test_unusable_bodies_are_invalid(value: Any, flag: str) -> None:
    d = adapter.parse_decision(value)
    assert d.kind == "invalid" and flag in d.flags and d.calls == []


# --- classify_error ---------------------------------------------------------------


def test_classify_a_usable_answer_is_none() -> None:
    assert adapter.classify_error(200, {}, body(API, "b_tool_call")) is None


@pytest.mark.parametrize(
    ("status", "name", "code", "message"),
    [
        (400, "error_400", "bad_request", "Invalid schema for function 'get_order'"),
        (401, "error_401", "auth_error", "Incorrect API key provided"),
        (403, "error_401", "auth_error", "Incorrect API key provided"),
        (404, "error_400", "bad_request", "Invalid schema"),
        (429, "error_429", "rate_limited", "Rate limit reached"),
        (500, "error_500", "server_error", "The server had an error"),
        (503, "error_503", "overloaded", "The engine is currently overloaded"),
        (529, "error_503", "overloaded", "The engine"),
        (400, "vllm_error_400", "bad_request", '"auto" tool choice requires'),
        (400, "vllm_error_400_legacy", "bad_request", '"auto" tool choice requires'),
        (401, "vllm_error_401", "auth_error", "Unauthorized"),
    ],
)
def test_classify_error_statuses(status: int, name: str, code: str, message: str) -> None:
    err = adapter.classify_error(status, {}, body(API, name))
    assert err is not None and err.code == code and err.message.startswith(message)


def test_classify_429_reads_retry_headers() -> None:
    err = adapter.classify_error(
        429, {"Retry-After-Ms": "2500", "retry-after": "9"}, body(API, "error_429")
    )
    assert err is not None and (err.retry_after_s, err.should_retry) == (2.5, True)
    err = adapter.classify_error(429, {"Retry-After": "3"}, body(API, "error_429"))
    assert err is not None and err.retry_after_s == 3.0


def test_classify_insufficient_quota_is_not_retried() -> None:
    err = adapter.classify_error(429, {}, body(API, "error_429_insufficient_quota"))
    assert err is not None and err.code == "rate_limited" and err.should_retry is False


def test_classify_x_should_retry_false_overrides() -> None:
    err = adapter.classify_error(500, {"x-should-retry": "false"}, body(API, "error_500"))
    assert err is not None and err.code == "server_error" and err.should_retry is False


def test_classify_html_502() -> None:
    err = adapter.classify_error(502, {"content-type": "text/html"}, html_502())
    assert err is not None and err.code == "server_error"
    assert err.message.startswith("HTTP 502: <html> <head><title>502 Bad Gateway")


@pytest.mark.parametrize("value", [html_502(), "", {"object": "list"}, [1, 2]])
def test_classify_2xx_that_is_not_a_completion_is_malformed(value: Any) -> None:
    err = adapter.classify_error(200, {}, value)
    assert err is not None and err.code == "malformed_response"


def test_classify_openrouter_error_inside_a_200() -> None:
    err = adapter.classify_error(200, {}, body(API, "compat_openrouter_choice_error"))
    assert err is not None and (err.code, err.message) == (
        "server_error",
        "Upstream provider returned an error",
    )
    err = adapter.classify_error(200, {}, {"error": {"code": 429, "message": "slow down"}})
    assert err is not None and err.code == "rate_limited"


# --- second turn and usage --------------------------------------------------------


def test_append_tool_result_second_turn_body() -> None:
    built = build(adapter, [GET_ORDER], tool_choice="get_order", parallel_tool_calls=False)
    response = body(API, "c_parallel_tool_calls")
    decision = adapter.parse_decision(response)
    results = [
        ToolResult("call_p4r1", False, "get_order", {"ok": True, "status": "in_transit"}),
        ToolResult(
            "call_p4r2",
            False,
            "quote_delivery",
            {"ok": False, "error": {"code": "ROUTE_UNAVAILABLE"}},
        ),
    ]
    second = adapter.append_tool_result(
        request_body=built.http.body, response_body=response, decision=decision, results=results
    )
    wire_calls = response["choices"][0]["message"]["tool_calls"]
    assert second == {
        **built.http.body,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": USER},
            {"role": "assistant", "content": None, "tool_calls": wire_calls},
            {
                "role": "tool",
                "tool_call_id": "call_p4r1",
                "content": '{"ok":true,"status":"in_transit"}',
            },
            {
                "role": "tool",
                "tool_call_id": "call_p4r2",
                "content": '{"ok":false,"error":{"code":"ROUTE_UNAVAILABLE"}}',
            },
        ],
    }
    # the first request is not modified
    assert built.http.body["tool_choice"] == {"type": "function", "function": {"name": "get_order"}}
    assert orjson.loads(second["messages"][4]["content"]) == results[1].result


def test_append_tool_result_never_sends_a_synthesized_id() -> None:
    built = build(adapter, [GET_ORDER])
    response = body(API, "b_tool_call")
    second = adapter.append_tool_result(
        request_body=built.http.body,
        response_body=response,
        decision=adapter.parse_decision(response),
        results=[ToolResult("openai-chat-call-0", True, "get_order", {"ok": True})],
    )
    assert second["messages"][-1] == {"role": "tool", "content": '{"ok":true}'}


def test_usage() -> None:
    u = adapter.usage(body(API, "c_parallel_tool_calls"))
    assert (u.input_tokens, u.output_tokens) == (140, 61)
    assert adapter.usage({"usage": {"prompt_tokens": True}}).input_tokens is None
    assert adapter.usage("nope").output_tokens is None
