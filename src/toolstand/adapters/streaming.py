"""Streamed requests and answers of the four APIs (design.md, Streaming): the streamed
form of a built request, the assembler of each API, and a streamed answer read into the
decision the adapter builds from a non-streamed body.

Pure like the adapters: the transport feeds bytes (``transport_stream``), rejudge feeds
the recorded body; both end here.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from toolstand.adapters.anthropic_stream import AnthropicAssembler
from toolstand.adapters.base import Adapter, BuiltRequest, ErrorClass, HttpRequest
from toolstand.adapters.gemini_stream import GeminiAssembler
from toolstand.adapters.openai_chat_stream import ChatAssembler
from toolstand.adapters.openai_responses_stream import ResponsesAssembler
from toolstand.adapters.sse import SseDecoder, SseEvent
from toolstand.adapters.stream_base import Assembled, StreamAssembler
from toolstand.decision import ModelDecision

ASSEMBLERS: dict[str, Callable[[], StreamAssembler]] = {
    "openai-chat": ChatAssembler,
    "openai-responses": ResponsesAssembler,
    "anthropic": AnthropicAssembler,
    "gemini": GeminiAssembler,
}
# what each API's complete stream ends with, for the interrupted-stream message
TERMINAL_NAMES = {
    "openai-chat": "data: [DONE]",
    "openai-responses": "response.completed / .incomplete / .failed",
    "anthropic": "message_stop",
    "gemini": "a chunk with finishReason",
}


def streamed(api: str, built: BuiltRequest) -> BuiltRequest:
    """``built`` in its API's streaming form (providers.md S0): Chat Completions
    ``stream: true`` with ``stream_options.include_usage``, Responses and Anthropic
    ``stream: true``, Gemini ``:streamGenerateContent?alt=sse`` with the body unchanged."""
    http = built.http
    body = copy.copy(http.body)
    url, params = http.url, dict(http.params)
    if api == "gemini":
        url = url.replace(":generateContent", ":streamGenerateContent")
        params["alt"] = "sse"
    else:
        body["stream"] = True
        if api == "openai-chat":
            body["stream_options"] = {"include_usage": True}
    headers = {**http.headers, "accept": "text/event-stream"}
    return replace(built, http=HttpRequest(http.method, url, headers, body, params), stream=True)


def assembler(api: str) -> StreamAssembler:
    return ASSEMBLERS[api]()


def assemble(api: str, raw: bytes) -> tuple[list[SseEvent], Assembled]:
    """A whole recorded stream read again: its events and what they amount to."""
    decoder = SseDecoder()
    events = decoder.feed(raw)
    decoder.close()
    asm = assembler(api)
    for event in events:
        asm.feed(event)
    return events, asm.finish(decoder)


@dataclass
class StreamReading:
    """A streamed answer read: the equivalent body, the failure it is (None: a usable
    answer), and what the decision carries beside the adapter's parse."""

    body: Any
    error: ErrorClass | None
    assembled: Assembled


def read_assembled(
    api: str, adapter: Adapter, status: int, headers: dict[str, str], asm: Assembled
) -> StreamReading:
    """The failure a 2xx stream is, in this order: an error sent after the 200, a stream
    that never reached its terminal event (``stream_interrupted``), then whatever the
    adapter finds wrong with the assembled body (a Responses ``failed`` status ...)."""
    if asm.error is not None:
        return StreamReading(asm.body, asm.error, asm)
    if not asm.complete:
        what = f"{asm.events} events" if asm.events != 1 else "1 event"
        message = f"stream ended after {what}, before {TERMINAL_NAMES[api]}"
        return StreamReading(asm.body, ErrorClass("stream_interrupted", message), asm)
    try:
        err = adapter.classify_error(status, headers, asm.body)
    except Exception as exc:  # an adapter bug must not crash the run loop
        err = ErrorClass("malformed_response", f"classify_error failed: {exc!r}", retryable=False)
    return StreamReading(asm.body, err, asm)


def stream_decision(adapter: Adapter, reading: StreamReading) -> ModelDecision:
    """The adapter's decision on the assembled body, with the stream's flags and the
    mismatches between its deltas and its whole answer."""
    decision = adapter.parse_decision(reading.body)
    for name in reading.assembled.flags:
        if name not in decision.flags:
            decision.flags.append(name)
    decision.stream_mismatch = list(reading.assembled.mismatches)
    return decision
