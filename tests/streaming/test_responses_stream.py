"""Responses API streams (providers.md S3): the terminal response checked against the deltas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.streams import decide, responses_stream, sse
from toolstand.adapters import get_adapter
from toolstand.judge.verdict import judge
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract

STREAMS = Path(__file__).parent.parent / "fixtures" / "streams"
API = "openai-responses"
CALL = {"id": "fc_1", "type": "function_call", "status": "completed",
        "arguments": '{"order_id":"ORD-1"}', "call_id": "call_1", "name": "get_order"}  # fmt: skip
BODY = {"id": "resp_1", "object": "response", "status": "completed", "output": [CALL],
        "usage": {"input_tokens": 3, "output_tokens": 4}}  # fmt: skip


def ev(kind: str, **fields: Any) -> str:
    return sse({"type": kind, **fields}, kind)


def test_the_recorded_stream_reads_as_its_terminal_response() -> None:
    reading, d = decide(API, (STREAMS / "openai-responses-tool-call.sse").read_text())
    assert d is not None and [(c.name, c.arguments) for c in d.calls] == [
        ("get_weather", {"city": "Edinburgh", "unit": "celsius"})]  # fmt: skip
    assert d.stream_mismatch == [] and reading.body["usage"]["output_tokens"] == 19


def test_deltas_that_differ_from_done_and_completed_are_a_mismatch_with_both_readings() -> None:
    stream = responses_stream(BODY, (100,)).replace(
        '"delta": "{\\"order_id\\":\\"ORD-1\\"}"', '"delta": "{\\"order_id\\":\\"ORD-2\\"}"'
    )
    _, d = decide(API, stream)
    assert d is not None
    whats = [m["what"] for m in d.stream_mismatch]
    assert len(whats) == 3 and all("arguments of function call call_1" in w for w in whats)
    assert {m["deltas"] for m in d.stream_mismatch} == {'{"order_id":"ORD-2"}'}
    assert {m["whole"] for m in d.stream_mismatch} == {'{"order_id":"ORD-1"}'}
    case = Case.model_validate({"id": "c", "user": "u", "category": "positive",
        "expect": {"kind": "tool_call", "tool": "get_order", "arguments": {"order_id": "ORD-1"}}})  # fmt: skip
    contract = Contract.model_validate({"name": "t", "version": "1", "tools": [
        {"name": "get_order", "description": "d", "effect": "read", "parameters": {
            "type": "object", "properties": {"order_id": {"type": "string"}}}}]})  # fmt: skip
    j = judge(case, d, contract)
    errors = [e for e in j["errors"] if e["code"] == "stream_mismatch"]
    assert len(errors) == 3 and j["verdict"] == "fail"
    assert (
        errors[0]["expected"] == '{"order_id":"ORD-1"}'
        and errors[0]["actual"] == '{"order_id":"ORD-2"}'
    )


def test_a_call_missing_from_the_terminal_response_is_a_count_mismatch() -> None:
    stream = responses_stream(BODY, (5,))
    stream = stream.replace(json.dumps({**BODY}), json.dumps({**BODY, "output": []}))
    _, d = decide(API, stream)
    assert d is not None
    assert any(m["what"] == "number of function calls" for m in d.stream_mismatch)


def test_a_text_difference_is_a_mismatch() -> None:
    msg = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}  # fmt: skip
    stream = responses_stream({**BODY, "output": [msg]}, (100,)).replace(
        '"delta": "Hello"', '"delta": "Help"'
    )
    _, d = decide(API, stream)
    assert d is not None and d.text == "Hello"
    assert [m["deltas"] for m in d.stream_mismatch] == ["Help", "Help"]


def test_error_event_nested_and_flat_end_the_attempt() -> None:
    nested = (
        ev("response.created", response={"id": "r", "status": "in_progress", "output": []})
        + ev(
            "error",
            error={"type": "insufficient_quota", "code": "insufficient_quota", "message": "quota"},
        )
        + ev(
            "response.failed",
            response={
                "id": "r",
                "status": "failed",
                "output": [],
                "error": {"code": "insufficient_quota", "message": "quota"},
            },
        )
    )
    reading, d = decide(API, nested)
    assert d is None and reading.error is not None and reading.error.code == "rate_limited"
    assert reading.error.should_retry is False
    flat = ev("error", code="server_error", message="boom", param=None)
    reading, _ = decide(API, flat)
    assert reading.error is not None and reading.error.code == "server_error"


def test_failed_and_incomplete_terminal_events() -> None:
    failed = ev("response.failed", response={"id": "r", "status": "failed", "output": [],
                "error": {"code": "server_error", "message": "oops"}})  # fmt: skip
    reading, _ = decide(API, failed)
    assert reading.error is not None and reading.error.code == "server_error"
    incomplete = {**BODY, "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
                  "output": [{**CALL, "status": "incomplete", "arguments": '{"order'}]}  # fmt: skip
    _, d = decide(API, responses_stream(incomplete, (3,)))
    assert d == get_adapter(API).parse_decision(incomplete) and d is not None and d.truncated


def test_no_terminal_event_is_interrupted_and_done_extra_is_ignored() -> None:
    cut = responses_stream(BODY, (3,)).split("event: response.completed")[0]
    reading, _ = decide(API, cut)
    assert reading.error is not None and reading.error.code == "stream_interrupted"
    _, d = decide(API, responses_stream(BODY, (3,)) + sse("[DONE]"))
    assert d is not None and "done_extra" in d.flags


def test_field_order_and_a_missing_sequence_number() -> None:
    raw = responses_stream(BODY, (3,)).replace("event: ", "x-tmp: ")
    lines = []
    for block in raw.split("\n\n")[:-1]:
        head, data = block.split("\n")
        lines.append(f"{data}\n{head.replace('x-tmp: ', 'event: ')}\n\n")
    _, d = decide(API, "".join(lines))
    assert d is not None and d.calls[0].arguments == {"order_id": "ORD-1"}
