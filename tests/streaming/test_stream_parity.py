"""Any chunking of a stream, down to one byte per read, assembles to the decision the
adapter gives the equivalent non-streamed body, and nothing raises (issue 25, Tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.streams import STREAMERS, decide
from toolstand.adapters import get_adapter

BODIES = Path(__file__).parent.parent / "fixtures" / "bodies"
FIXTURES = {
    "openai-chat": ["a_text", "b_tool_call", "c_parallel_tool_calls", "d_refusal", "e_max_tokens",
                    "e_max_tokens_mid_tool_call", "f_invalid_arguments"],
    "openai-responses": ["a_text", "b_tool_call", "c_parallel_tool_calls", "d_refusal",
                         "e_max_tokens", "f_invalid_arguments"],
    "anthropic": ["a_text", "b_tool_call", "c_parallel_tool_calls", "d_refusal", "e_max_tokens",
                  "e_max_tokens_mid_tool_use", "g_thinking"],
    "gemini": ["a_text", "b_tool_call", "b_tool_call_no_args", "c_parallel_tool_calls",
               "d_refusal_candidate_safety", "e_max_tokens", "g_thinking"],
}  # fmt: skip
CASES = [(api, name) for api, names in FIXTURES.items() for name in names]


def body(api: str, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((BODIES / api / f"{name}.json").read_text())
    return data


@pytest.mark.parametrize(("api", "name"), CASES)
def test_each_recorded_body_streamed_one_byte_a_read_reads_the_same(api: str, name: str) -> None:
    b = body(api, name)
    raw = STREAMERS[api](b, (2, 5, 1)).encode()
    reading, decision = decide(api, raw, range(len(raw)))
    assert reading.error is None, reading.error
    assert decision == get_adapter(api).parse_decision(b)
    assert get_adapter(api).usage(reading.body) == get_adapter(api).usage(b)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.sampled_from(CASES),
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=6),
    cuts=st.lists(st.integers(0, 20_000), max_size=60),
)
def test_any_chunking_of_any_fragmenting_reads_the_same(
    case: tuple[str, str], sizes: list[int], cuts: list[int]
) -> None:
    api, name = case
    b = body(api, name)
    raw = STREAMERS[api](b, sizes).encode()
    reading, decision = decide(api, raw, cuts)
    assert reading.error is None
    assert decision == get_adapter(api).parse_decision(b)


ARG_VALUES = st.one_of(
    st.text(max_size=12), st.integers(-(10**6), 10**6), st.booleans(), st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)  # fmt: skip
ARGS = st.dictionaries(st.text(min_size=1, max_size=6), ARG_VALUES, max_size=4)
CALLS = st.lists(st.tuples(st.sampled_from(["get_order", "quote", "cancel"]), ARGS), max_size=3)


def chat_body(text: str | None, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
            for i, (n, a) in enumerate(calls)
        ]  # fmt: skip
    finish = "tool_calls" if calls else "stop"
    return {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": message, "finish_reason": finish}], "usage": {
        "prompt_tokens": 3, "completion_tokens": 4}}  # fmt: skip


def anthropic_body(text: str | None, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a}
                for i, (n, a) in enumerate(calls)]  # fmt: skip
    return {"id": "m", "type": "message", "role": "assistant", "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 2}}  # fmt: skip


def responses_body(text: str | None, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if text:
        output.append(
            {
                "id": "msg_1",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    output += [{"id": f"fc_{i}", "type": "function_call", "status": "completed",
                "arguments": json.dumps(a, ensure_ascii=False), "call_id": f"call_{i}", "name": n}
               for i, (n, a) in enumerate(calls)]  # fmt: skip
    return {"id": "resp_1", "object": "response", "status": "completed", "output": output,
            "usage": {"input_tokens": 1, "output_tokens": 2}}  # fmt: skip


def gemini_body(text: str | None, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts += [{"functionCall": {"name": n, "args": a}} for n, a in calls]
    return {"candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0,
                            "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2}}  # fmt: skip


MAKERS = {"openai-chat": chat_body, "openai-responses": responses_body,
          "anthropic": anthropic_body, "gemini": gemini_body}  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    api=st.sampled_from(list(MAKERS)),
    text=st.one_of(st.none(), st.text(min_size=1, max_size=40)),
    calls=CALLS,
    sizes=st.lists(st.integers(1, 7), min_size=1, max_size=5),
    cuts=st.lists(st.integers(0, 4000), max_size=80),
)
def test_generated_answers_any_chunking(
    api: str,
    text: str | None,
    calls: list[tuple[str, dict[str, Any]]],
    sizes: list[int],
    cuts: list[int],
) -> None:
    b = MAKERS[api](text, calls)
    raw = STREAMERS[api](b, sizes).encode()
    reading, decision = decide(api, raw, cuts)
    assert reading.error is None
    assert decision == get_adapter(api).parse_decision(b)


@settings(max_examples=80, deadline=None)
@given(api=st.sampled_from(list(MAKERS)), junk=st.binary(max_size=400),
       cuts=st.lists(st.integers(0, 400), max_size=20))  # fmt: skip
def test_arbitrary_bytes_never_raise(api: str, junk: bytes, cuts: list[int]) -> None:
    reading, decision = decide(api, junk, cuts)
    assert reading.error is not None or decision is not None
