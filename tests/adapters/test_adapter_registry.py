"""The registry, and properties every adapter shares (never raising, the same codes)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.adapters import PLANTED_KEY, TOOLS, build
from toolstand.adapters import APIS, UnknownApiError, get_adapter
from toolstand.adapters.base import RETRYABLE_CODES, RequestSettings
from toolstand.decision import DECISION_KINDS


def test_api_names_and_versions() -> None:
    assert APIS == ("openai-chat", "openai-responses", "anthropic", "gemini")
    for api in APIS:
        adapter = get_adapter(api)
        assert adapter.api == api
        assert adapter.version == f"{api}/2"


@pytest.mark.parametrize("name", ["openai", "", "Gemini", None, ["gemini"]])
def test_unknown_api_lists_the_allowed_names(name: Any) -> None:
    with pytest.raises(UnknownApiError) as info:
        get_adapter(name)
    assert str(info.value).endswith("allowed: openai-chat, openai-responses, anthropic, gemini")
    assert isinstance(info.value, ValueError)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
# shapes near the real ones, so that the deeper code paths are reached as well
near_keys = st.sampled_from(
    [
        "choices",
        "message",
        "tool_calls",
        "function",
        "arguments",
        "name",
        "content",
        "output",
        "type",
        "candidates",
        "parts",
        "functionCall",
        "args",
        "input",
        "stop_reason",
        "finish_reason",
        "finishReason",
        "status",
        "error",
        "usage",
        "usageMetadata",
        "promptFeedback",
        "text",
        "thought",
        "refusal",
        "id",
        "call_id",
    ]
)
near_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=6)
    | st.sampled_from(
        ["tool_use", "function_call", "message", "text", "STOP", "length", "MAX_TOKENS", "{}", "{"]
    ),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(near_keys, children, max_size=5)
    ),
    max_leaves=25,
)


@pytest.mark.parametrize("api", APIS)
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=json_values | near_values)
def test_nothing_raises_on_arbitrary_json(api: str, value: Any) -> None:
    adapter = get_adapter(api)
    decision = adapter.parse_decision(value)
    assert decision.kind in DECISION_KINDS
    assert "adapter_error" not in decision.flags  # the guard exists, but is never needed
    for status in (200, 429, 502):
        err = adapter.classify_error(status, {}, value)
        assert err is None or err.code in RETRYABLE_CODES | {
            "bad_request",
            "auth_error",
            "malformed_response",
        }
    adapter.usage(value)
    decision.to_dict()


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "bad_request"),
        (401, "auth_error"),
        (403, "auth_error"),
        (404, "bad_request"),
        (422, "bad_request"),
        (429, "rate_limited"),
        (500, "server_error"),
        (502, "server_error"),
        (503, "overloaded"),
        (504, "server_error"),
        (529, "overloaded"),
    ],
)
def test_status_codes_mean_the_same_everywhere(api: str, status: int, code: str) -> None:
    err = get_adapter(api).classify_error(status, {}, "")
    assert err is not None and err.code == code and err.message == f"HTTP {status}"


@pytest.mark.parametrize("api", APIS)
def test_the_key_is_never_in_the_built_request(api: str) -> None:
    adapter = get_adapter(api)
    for version in ("2023-06-01", "2026-10-21"):
        options = {"anthropic_version": version}
        built = build(adapter, TOOLS, options=options)
        headers, params = adapter.auth(PLANTED_KEY, RequestSettings(options=options))
        assert PLANTED_KEY in str(headers) + str(params)
        assert PLANTED_KEY not in str(built)
