"""Anthropic Messages (providers.md S4) and Gemini (S5) streams."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.streams import decide, sse

STREAMS = Path(__file__).parent.parent / "fixtures" / "streams"


def ant(kind: str, **fields: Any) -> str:
    return sse({"type": kind, **fields}, kind)


START = ant("message_start", message={"id": "m", "type": "message", "role": "assistant",
            "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}})  # fmt: skip


def tool_block(i: int, ident: str, name: str, *fragments: str, close: bool = True) -> str:
    out = ant("content_block_start", index=i,
              content_block={"type": "tool_use", "id": ident, "name": name, "input": {}})  # fmt: skip
    for f in fragments:
        out += ant(
            "content_block_delta", index=i, delta={"type": "input_json_delta", "partial_json": f}
        )
    return out + (ant("content_block_stop", index=i) if close else "")


def end(stop: str, output_tokens: int = 9) -> str:
    return ant("message_delta", delta={"stop_reason": stop, "stop_sequence": None},
               usage={"output_tokens": output_tokens}) + ant("message_stop")  # fmt: skip


def test_anthropic_recorded_stream_with_a_multibyte_text_ping_and_padding() -> None:
    raw = (STREAMS / "anthropic-tool-call.sse").read_bytes()
    reading, d = decide("anthropic", raw, range(len(raw)))
    assert d is not None and d.text == "I'll look up Edinburgh's weather \u2014 one moment."
    assert [(c.name, c.arguments, c.call_id) for c in d.calls] == [
        ("get_weather", {"city": "Edinburgh", "unit": "celsius"}, "toolu_01Wb5RkT8mQz2LxN7cVp3HsJ")]  # fmt: skip
    assert reading.body["usage"]["output_tokens"] == 71  # replaced, not added


def test_anthropic_parallel_calls_and_empty_input() -> None:
    raw = (
        START
        + tool_block(0, "t0", "a", "", '{"x":', "1}")
        + tool_block(1, "t1", "list_all", "")
        + end("tool_use")
    )
    _, d = decide("anthropic", raw)
    assert d is not None and [(c.name, c.arguments) for c in d.calls] == [
        ("a", {"x": 1}),
        ("list_all", {}),
    ]
    no_delta = START + tool_block(0, "t0", "list_all") + end("tool_use")
    _, d = decide("anthropic", no_delta)
    assert d is not None and d.calls[0].arguments == {}


def test_anthropic_unparsable_input_is_invalid_json_not_a_transport_error() -> None:
    raw = START + tool_block(0, "t0", "a", '{"x": 1, "y"') + end("tool_use")
    reading, d = decide("anthropic", raw)
    assert reading.error is None and d is not None
    assert d.calls[0].arguments is None and d.calls[0].raw_arguments == '{"x": 1, "y"'


def test_anthropic_truncated_tool_block_without_stop() -> None:
    raw = START + tool_block(0, "t0", "make_file", '{"lines": ["a', close=False) + end("max_tokens")
    _, d = decide("anthropic", raw)
    assert d is not None and d.kind == "invalid" and d.truncated and "block_unclosed" in d.flags


def test_anthropic_thinking_signature_replaced_and_refusal() -> None:
    raw = (START + ant("content_block_start", index=0, content_block={"type": "thinking", "thinking": "", "signature": ""})
           + ant("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "hm"})
           + ant("content_block_delta", index=0, delta={"type": "signature_delta", "signature": "SIG"})
           + ant("content_block_stop", index=0)
           + ant("content_block_start", index=1, content_block={"type": "text", "text": ""})
           + ant("content_block_delta", index=1, delta={"type": "text_delta", "text": "No."})
           + ant("content_block_stop", index=1) + end("refusal"))  # fmt: skip
    reading, d = decide("anthropic", raw)
    assert d is not None and d.kind == "refusal" and "reasoning" in d.flags
    assert reading.body["content"][0] == {"type": "thinking", "thinking": "hm", "signature": "SIG"}


def test_anthropic_overloaded_error_event_and_interrupted_stream() -> None:
    raw = START + ant("error", error={"type": "overloaded_error", "message": "Overloaded"})
    reading, _ = decide("anthropic", raw)
    assert (
        reading.error is not None
        and reading.error.code == "overloaded"
        and reading.error.should_retry
    )
    reading, _ = decide("anthropic", START + tool_block(0, "t0", "a", "{}"))
    assert reading.error is not None and reading.error.code == "stream_interrupted"
    assert "message_stop" in reading.error.message


def test_anthropic_unknown_events_are_skipped() -> None:
    raw = START + ant("future_event", x=1) + tool_block(0, "t0", "a", "{}") + end("tool_use")
    _, d = decide("anthropic", raw)
    assert d is not None and d.calls[0].arguments == {}


def gem(parts: list[dict[str, Any]], finish: str | None = None, **extra: Any) -> str:
    cand: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    return sse({"candidates": [cand], **extra}, crlf=True)


def test_gemini_recorded_stream_and_text_slices() -> None:
    raw = (STREAMS / "gemini-tool-call.sse").read_bytes()
    reading, d = decide("gemini", raw, range(0, len(raw), 3))
    assert d is not None and d.calls[0].arguments == {"city": "Edinburgh", "unit": "celsius"}
    parts = reading.body["candidates"][0]["content"]["parts"]
    assert parts[0]["thoughtSignature"].startswith("dG9vbHN0YW5k") and len(parts) == 1
    text = gem([{"text": "Hel"}], usageMetadata={"candidatesTokenCount": 1}) + gem(
        [{"text": "lo"}], "STOP", usageMetadata={"candidatesTokenCount": 5, "promptTokenCount": 2}
    )
    reading, d = decide("gemini", text)
    assert d is not None and d.text == "Hello"
    assert reading.body["usageMetadata"] == {"candidatesTokenCount": 5, "promptTokenCount": 2}


def test_gemini_parallel_calls_over_chunks_and_no_finish_is_interrupted() -> None:
    raw = (
        gem([{"functionCall": {"name": "a", "args": {}}}])
        + gem([{"functionCall": {"name": "b", "args": {"x": 1}}}])
        + gem([{"text": ""}], "STOP")
    )
    _, d = decide("gemini", raw)
    assert d is not None and [(c.name, c.arguments, c.call_id) for c in d.calls] == [
        ("a", {}, "gemini-call-0"), ("b", {"x": 1}, "gemini-call-1")]  # fmt: skip
    reading, _ = decide("gemini", gem([{"text": "partial"}]))
    assert reading.error is not None and reading.error.code == "stream_interrupted"


def test_gemini_error_chunk_and_bare_json_tail() -> None:
    chunk = gem([{"text": "a"}]) + sse(
        {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}, crlf=True
    )
    reading, _ = decide("gemini", chunk)
    assert reading.error is not None and reading.error.code == "overloaded"
    tail = (
        gem([{"text": "a"}])
        + '{\n  "error": {\n    "code": 429,\n    "message": "quota",\n    "status": "RESOURCE_EXHAUSTED"\n  }\n}\n'
    )
    reading, _ = decide("gemini", tail)
    assert reading.error is not None and reading.error.code == "rate_limited"


def test_gemini_malformed_function_call_and_blocked_prompt() -> None:
    _, d = decide("gemini", gem([], "MALFORMED_FUNCTION_CALL"))
    assert d is not None and d.kind == "invalid" and "malformed_function_call" in d.flags
    blocked = sse({"promptFeedback": {"blockReason": "SAFETY"}}, crlf=True)
    _, d = decide("gemini", blocked)
    assert d is not None and d.kind == "refusal"
