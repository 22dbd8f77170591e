"""gemini: request bodies and both schema forms, decisions, errors, second turn, usage."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.adapters import (
    GET_ORDER,
    GET_ORDER_PARAMS,
    QUOTE_DELIVERY,
    SYSTEM,
    TOOLS,
    USER,
    body,
    build,
    html_502,
)
from toolstand.adapters.base import RequestSettings, ToolResult
from toolstand.adapters.gemini import GeminiAdapter

API = "gemini"
adapter = GeminiAdapter()
BASE = "https://generativelanguage.googleapis.com"


def expected_body(config: dict[str, Any]) -> dict[str, Any]:
    return {
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "contents": [{"role": "user", "parts": [{"text": USER}]}],
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "get_order",
                        "description": "Get an order's state by its exact id.",
                        "parametersJsonSchema": GET_ORDER_PARAMS,
                    }
                ]
            }
        ],
        "toolConfig": {"functionCallingConfig": config},
        "generationConfig": {"temperature": 0.0, "maxOutputTokens": 500},
    }


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ("get_order", {"mode": "ANY", "allowedFunctionNames": ["get_order"]}),
    ],
)
@pytest.mark.parametrize("parallel", [None, True, False])
def test_build_every_tool_choice_and_parallel_setting(
    choice: str, config: Any, parallel: Any
) -> None:
    built = build(
        adapter,
        [GET_ORDER],
        base_url=BASE + "/",
        model="models/gemini-test",
        tool_choice=choice,
        parallel_tool_calls=parallel,
    )
    # there is no parallel switch on this API: nothing is sent and the record says so
    assert built.http.body == expected_body(config)
    assert built.http.url == f"{BASE}/v1beta/models/gemini-test:generateContent"
    expected_settings: dict[str, Any] = {"schema_field": "parametersJsonSchema"}
    if parallel is not None:
        expected_settings["unsent_settings"] = ["parallel_tool_calls"]
    assert built.api_settings == expected_settings
    assert built.schema_notes == []


@pytest.mark.parametrize("tools", [None, []])
def test_no_tools_control(tools: Any) -> None:
    built = build(adapter, tools, base_url=BASE, tool_choice="required", parallel_tool_calls=True)
    assert built.http.body == {
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "contents": [{"role": "user", "parts": [{"text": USER}]}],
        "generationConfig": {"temperature": 0.0, "maxOutputTokens": 500},
    }
    decision = adapter.parse_decision(body(API, "a_text"))
    assert decision.kind == "text" and decision.calls == []


def test_build_maps_assistant_role_and_omits_empty_generation_config() -> None:
    messages = [
        {"role": "user", "content": "Где мой заказ?"},
        {"role": "assistant", "content": "Назовите номер."},
        {"role": "user", "content": "ORD-123456"},
    ]
    built = build(
        adapter,
        None,
        base_url=BASE,
        messages=messages,
        system=None,
        temperature=None,
        max_output_tokens=None,
    )
    assert built.http.body == {
        "contents": [
            {"role": "user", "parts": [{"text": "Где мой заказ?"}]},
            {"role": "model", "parts": [{"text": "Назовите номер."}]},
            {"role": "user", "parts": [{"text": "ORD-123456"}]},
        ]
    }


def test_parameters_json_schema_keeps_every_constraint() -> None:
    built = build(adapter, [QUOTE_DELIVERY], base_url=BASE)
    sent = built.http.body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]
    assert sent["additionalProperties"] is False
    assert sent["properties"]["weight_kg"]["exclusiveMinimum"] == 0
    assert [(n.action, n.keyword) for n in built.schema_notes] == [("dropped", "x-normalize")] * 2


def test_parameters_openapi_form_drops_and_the_check_reports_losses() -> None:
    built = build(adapter, TOOLS, base_url=BASE, options={"gemini_schema": "parameters"})
    decls = built.http.body["tools"][0]["functionDeclarations"]
    assert "parametersJsonSchema" not in decls[0]
    assert decls[1]["parameters"] == {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "minLength": 1},
            "destination": {"type": "string", "minLength": 1},
            "weight_kg": {"type": "number", "maximum": 1000},
            "service": {"type": "string", "enum": ["standard", "express"]},
        },
        "required": ["origin", "destination", "weight_kg", "service"],
    }
    # pattern is a field of Gemini's Schema and stays
    assert decls[0]["parameters"]["properties"]["order_id"]["pattern"] == "^ORD-[0-9]{6}$"
    notes = {(n.tool, n.path, n.action, n.keyword) for n in built.schema_notes}
    assert notes == {
        ("quote_delivery", "$.properties.origin", "dropped", "x-normalize"),
        ("quote_delivery", "$.properties.destination", "dropped", "x-normalize"),
        ("get_order", "$", "dropped", "additionalProperties"),
        ("quote_delivery", "$", "dropped", "additionalProperties"),
        ("quote_delivery", "$.properties.weight_kg", "dropped", "exclusiveMinimum"),
        ("cancel_order", "$", "dropped", "additionalProperties"),
        ("get_order", "$", "lost", "additionalProperties"),
        ("quote_delivery", "$", "lost", "additionalProperties"),
        ("cancel_order", "$", "lost", "additionalProperties"),
    }
    assert built.api_settings == {"schema_field": "parameters"}


def test_bad_schema_option_is_refused() -> None:
    with pytest.raises(ValueError, match="allowed: parametersJsonSchema, parameters"):
        build(adapter, [GET_ORDER], options={"gemini_schema": "openapi"})


def test_auth_header() -> None:
    assert adapter.auth("AIza-1", RequestSettings()) == ({"x-goog-api-key": "AIza-1"}, {})


def test_parse_text_joins_parts() -> None:
    d = adapter.parse_decision(body(API, "a_text"))
    assert (d.kind, d.text, d.finish_reason) == (
        "text",
        "Пожалуйста, укажите номер заказа в формате ORD-123456.",
        "STOP",
    )


def test_parse_call_without_id_gets_a_synthesized_one() -> None:
    d = adapter.parse_decision(body(API, "b_tool_call"))
    assert (d.kind, d.finish_reason) == ("tool_call", "STOP")
    assert d.calls[0].to_dict() == {
        "name": "get_order",
        "arguments": {"order_id": "ORD-123456"},
        "raw_arguments": '{"order_id":"ORD-123456"}',
        "call_id": "gemini-call-0",
        "call_id_synthesized": True,
        "raw_reserialized": True,
        "parse_error": None,
    }


def test_parse_call_with_provider_id() -> None:
    [call] = adapter.parse_decision(body(API, "b_tool_call_with_id")).calls
    assert (call.call_id, call.call_id_synthesized) == ("fc-8d2a", False)


def test_parse_call_without_args_has_empty_arguments() -> None:
    [call] = adapter.parse_decision(body(API, "b_tool_call_no_args")).calls
    assert (call.arguments, call.raw_arguments) == ({}, "{}")


def test_parse_parallel() -> None:
    d = adapter.parse_decision(body(API, "c_parallel_tool_calls"))
    assert [(c.name, c.call_id) for c in d.calls] == [
        ("get_order", "gemini-call-0"),
        ("quote_delivery", "gemini-call-1"),
    ]


def test_parse_args_not_an_object() -> None:
    [call] = adapter.parse_decision(body(API, "f_args_not_object")).calls
    assert (call.arguments, call.raw_arguments) == (None, '["ORD-123456"]')
    assert call.parse_error == "arguments are a JSON array, not an object"


def test_parse_refusals() -> None:
    d = adapter.parse_decision(body(API, "d_refusal_prompt_blocked"))
    assert (d.kind, d.finish_reason, d.flags) == (
        "refusal",
        "SAFETY",
        ["prompt_blocked", "content_filter"],
    )
    d = adapter.parse_decision(body(API, "d_refusal_candidate_safety"))
    assert (d.kind, d.finish_reason, d.text, d.flags) == (
        "refusal",
        "SAFETY",
        None,
        ["content_filter"],
    )


def test_parse_truncation() -> None:
    d = adapter.parse_decision(body(API, "e_max_tokens"))
    assert (d.kind, d.truncated) == ("text", True)
    d = adapter.parse_decision(body(API, "e_max_tokens_mid_call"))
    assert (d.kind, d.truncated, d.calls, len(d.partial_calls)) == ("invalid", True, [], 1)
    d = adapter.parse_decision(body(API, "e_max_tokens_thinking_no_parts"))
    assert (d.kind, d.truncated, d.flags) == ("invalid", True, ["empty_response"])


def test_parse_malformed_function_call() -> None:
    d = adapter.parse_decision(body(API, "f_malformed_function_call"))
    assert (d.kind, d.calls, d.flags, d.finish_reason) == (
        "invalid",
        [],
        ["malformed_function_call"],
        "MALFORMED_FUNCTION_CALL",
    )
    d = adapter.parse_decision({"candidates": [{"finishReason": "TOO_MANY_TOOL_CALLS"}]})
    assert (d.kind, d.flags) == ("invalid", ["too_many_tool_calls"])


def test_parse_unexpected_tool_call_is_a_call() -> None:
    """UNEXPECTED_TOOL_CALL arrives with a normal functionCall part naming a tool that was
    not declared: the model called; the judge rules on the name."""
    d = adapter.parse_decision(body(API, "f_unexpected_tool_call"))
    assert (d.kind, d.finish_reason, d.flags) == (
        "tool_call",
        "UNEXPECTED_TOOL_CALL",
        ["unexpected_tool_call"],
    )
    [call] = d.calls
    assert (call.name, call.arguments, call.parse_error) == ("list_files", {}, None)
    # without a part there is nothing readable: invalid, and not a malformed call
    d = adapter.parse_decision({"candidates": [{"finishReason": "UNEXPECTED_TOOL_CALL"}]})
    assert (d.kind, d.flags) == ("invalid", ["unexpected_tool_call", "empty_response"])


@pytest.mark.parametrize(
    ("finish", "flag"),
    [
        ("MODEL_ARMOR", "content_filter"),
        ("JAILBREAK", "content_filter"),
        ("SPII", "content_filter"),
        ("IMAGE_PROHIBITED_CONTENT", "content_filter"),
        ("RECITATION", "recitation"),
        ("IMAGE_RECITATION", "recitation"),
        ("LANGUAGE", "unsupported_language"),
    ],
)
def test_provider_blocks_are_refusals(finish: str, flag: str) -> None:
    d = adapter.parse_decision({"candidates": [{"finishReason": finish, "index": 0}]})
    assert (d.kind, d.finish_reason, d.flags, d.notes) == ("refusal", finish, [flag], [])


def test_parse_model_armor_candidate_without_parts() -> None:
    d = adapter.parse_decision(body(API, "d_refusal_model_armor"))
    assert (d.kind, d.finish_reason, d.text, d.flags) == (
        "refusal",
        "MODEL_ARMOR",
        None,
        ["content_filter"],
    )


@pytest.mark.parametrize(
    "finish", ["OTHER", "FINISH_REASON_UNSPECIFIED", "IMAGE_OTHER", "NO_IMAGE"]
)
def test_uninformative_finish_reasons_are_decided_from_the_content(finish: str) -> None:
    d = adapter.parse_decision(
        {"candidates": [{"content": {"parts": [{"text": "Да."}]}, "finishReason": finish}]}
    )
    assert (d.kind, d.text, d.notes) == ("text", "Да.", [])


def test_unknown_finish_reason_and_part_are_noted_and_the_text_read() -> None:
    d = adapter.parse_decision(body(API, "g_unknown_finish_reason"))
    assert (d.kind, d.text, d.finish_reason) == (
        "text",
        "Заказ ORD-123456 в пути.",
        "SOMETHING_NEW",
    )
    assert d.notes == [
        "part 'executableCode' not read (kept in the raw body)",
        "finishReason 'SOMETHING_NEW' not in the adapter's table; decided from the content",
    ]


def test_parse_thought_parts_are_not_text() -> None:
    d = adapter.parse_decision(body(API, "g_thinking"))
    assert (d.kind, d.text, d.flags) == ("tool_call", None, ["reasoning"])


@pytest.mark.parametrize(
    ("status", "name", "code", "message"),
    [
        (400, "error_400", "bad_request", "Invalid JSON payload received."),
        (400, "error_400_api_key_invalid", "auth_error", "API key not valid."),
        (403, "error_403", "auth_error", "Method doesn't allow unregistered callers"),
        (429, "error_429_retry_info", "rate_limited", "You exceeded your current quota"),
        (500, "error_500", "server_error", "An internal error has occurred."),
        (503, "error_503", "overloaded", "The model is overloaded."),
    ],
)
def test_classify_error_statuses(status: int, name: str, code: str, message: str) -> None:
    err = adapter.classify_error(status, {}, body(API, name))
    assert err is not None and err.code == code and err.message.startswith(message)


def test_classify_retry_info_delay() -> None:
    err = adapter.classify_error(429, {}, body(API, "error_429_retry_info"))
    assert err is not None and (err.retry_after_s, err.should_retry) == (1.5, True)
    # a header and the body both count: never sooner than either
    err = adapter.classify_error(429, {"Retry-After": "4"}, body(API, "error_429_retry_info"))
    assert err is not None and err.retry_after_s == 4.0


def test_classify_per_day_quota_is_not_retried() -> None:
    err = adapter.classify_error(429, {}, body(API, "error_429_per_day"))
    assert err is not None and (err.code, err.retry_after_s, err.should_retry) == (
        "rate_limited",
        34.0,
        False,
    )


def test_classify_2xx_shapes() -> None:
    assert adapter.classify_error(200, {}, body(API, "b_tool_call")) is None
    assert adapter.classify_error(200, {}, body(API, "d_refusal_prompt_blocked")) is None
    values: list[Any] = [html_502(), {"choices": []}, None]
    for value in values:
        err = adapter.classify_error(200, {}, value)
        assert err is not None and err.code == "malformed_response"
    err = adapter.classify_error(502, {}, html_502())
    assert err is not None and err.code == "server_error"


def test_append_tool_result_model_turn_then_function_responses() -> None:
    built = build(adapter, [GET_ORDER], base_url=BASE, tool_choice="get_order")
    response = body(API, "c_parallel_tool_calls")
    response["candidates"][0]["content"]["parts"][1]["functionCall"]["id"] = "fc-real-2"
    decision = adapter.parse_decision(response)
    assert [(c.call_id, c.call_id_synthesized) for c in decision.calls] == [
        ("gemini-call-0", True),
        ("fc-real-2", False),
    ]
    results = [
        ToolResult(c.call_id, c.call_id_synthesized, c.name, r)
        for c, r in zip(
            decision.calls,
            [
                {"ok": True, "status": "in_transit"},
                {"ok": False, "error": {"code": "ROUTE_UNAVAILABLE"}},
            ],
            strict=True,
        )
    ]
    second = adapter.append_tool_result(
        request_body=built.http.body, response_body=response, decision=decision, results=results
    )
    assert second == {
        **built.http.body,
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "contents": [
            {"role": "user", "parts": [{"text": USER}]},
            response["candidates"][0]["content"],
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "get_order",
                            "response": {"output": {"ok": True, "status": "in_transit"}},
                        }
                    },
                    {
                        "functionResponse": {
                            "name": "quote_delivery",
                            "id": "fc-real-2",
                            "response": {
                                "error": {"ok": False, "error": {"code": "ROUTE_UNAVAILABLE"}}
                            },
                        }
                    },
                ],
            },
        ],
    }
    # thought signatures go back untouched
    assert second["contents"][1]["parts"][0]["thoughtSignature"] == "CiQBsig1"
    assert "gemini-call-0" not in str(second)


def test_usage_counts_thoughts_as_output() -> None:
    u = adapter.usage(body(API, "b_tool_call"))
    assert (u.input_tokens, u.output_tokens) == (88, 85)
    u = adapter.usage(body(API, "e_max_tokens_thinking_no_parts"))
    assert (u.input_tokens, u.output_tokens) == (88, 500)
    assert adapter.usage({}).output_tokens is None
