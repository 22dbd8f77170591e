"""One streamed answer read off the wire, and how it is recorded and read again.

A 2xx ``text/event-stream`` body is fed to the SSE decoder and the API's assembler as
it arrives (transport_read.read_stream). The record keeps the body as received, byte for
byte (``response.body``, base64 only when it is not UTF-8), and beside it
``response.stream``: each event's arrival in ms since the request (``event_ms``, in
dispatch order, so reading the body again pairs them up), whether the terminal event
came, and ``first_token_ms`` / ``first_call_ms``. A stream that ends early or goes idle
is ``stream_interrupted`` (retried like a timeout) and keeps what arrived; an error event
after the 200 is the transport error of its kind.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from toolstand.adapters.base import Adapter, ErrorClass
from toolstand.adapters.sse import SseDecoder, SseEvent
from toolstand.adapters.streaming import (
    StreamReading,
    assemble,
    assembler,
    read_assembled,
    stream_decision,
)
from toolstand.decision import ModelDecision
from toolstand.transport_read import StreamRead, body_of, read_stream
from toolstand.util.redact import scrub


@dataclass
class StreamTrace:
    """A streamed try as read: what is recorded and the reading of it."""

    sse: bool = True
    text: str = ""
    encoding: str = "utf-8"  # or "base64": the body was not UTF-8
    event_ms: list[float] = field(default_factory=list)
    reading: StreamReading | None = None
    idle: bool = False
    first_token_ms: float | None = None
    first_call_ms: float | None = None

    @property
    def complete(self) -> bool:
        return self.reading is not None and self.reading.assembled.complete

    def record(self) -> dict[str, Any]:
        if not self.sse:
            return {"sse": False}
        out: dict[str, Any] = {
            "events": len(self.event_ms),
            "complete": self.complete,
            "event_ms": self.event_ms,
            "first_token_ms": self.first_token_ms,
            "first_call_ms": self.first_call_ms,
        }
        if self.idle:
            out["idle"] = True
        if self.encoding != "utf-8":
            out["encoding"] = self.encoding
        return out


def is_event_stream(status: int | None, headers: dict[str, str]) -> bool:
    """A 2xx SSE answer (a refusal before the stream is ordinary JSON, providers.md S1)."""
    kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return status is not None and 200 <= status < 300 and kind == "text/event-stream"


async def read_streamed(
    got: Any,
    adapter: Adapter,
    response: httpx.Response,
    headers: dict[str, str],
    cap: int,
    idle_s: float,
    secrets: list[str],
    clock: Callable[[], float],
    began: float,
) -> None:
    """Read a 2xx event stream into ``got`` (transport._Got): ``stream`` is set first and
    completed whatever stops the read (end, idle, deadline, reset, the cap), so the
    events received so far are always kept."""
    trace = got.stream = StreamTrace()
    read = StreamRead()
    asm = assembler(adapter.api)
    # without a content encoding the raw reads are the body: read_stream caps them
    plain = not response.is_stream_consumed and not response.headers.get("content-encoding")
    body = _raw_reads(response) if plain else body_of(response, cap)
    try:
        await read_stream(body, asm, read, idle_s=idle_s, cap=cap, clock=clock, began=began)
    finally:
        read.decoder.close()
        _settle(got, trace, read, asm.finish(read.decoder), adapter, headers, secrets, idle_s)


def _raw_reads(response: httpx.Response) -> AsyncIterable[bytes]:
    """The network reads of an unencoded body. A stream is ~100 reads: the response's
    byte stream itself, not ``aiter_raw``, which adds a generator and a chunker per read
    (the reads arrive whole either way; ``_one_try`` closes the response)."""
    stream = response.stream
    if isinstance(stream, httpx.AsyncByteStream):
        response.is_stream_consumed = True  # as aiter_raw would mark it
        return stream
    return response.aiter_raw()


def _settle(
    got: Any,
    trace: StreamTrace,
    read: StreamRead,
    asm: Any,
    adapter: Adapter,
    headers: dict[str, str],
    secrets: list[str],
    idle_s: float,
) -> None:
    raw = bytes(read.raw)
    trace.event_ms, trace.idle = read.event_ms, read.idle
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        trace.text, trace.encoding = base64.b64encode(raw).decode("ascii"), "base64"
    else:
        # the stream is read as received (issue 31 M6); the text kept is scrubbed
        trace.text = scrub(text, secrets) if secrets else text
    reading = read_assembled(adapter.api, adapter, got.status, headers, asm)
    if read.idle and reading.error is not None and reading.error.code == "stream_interrupted":
        reading.error.message += f" (idle for more than {idle_s:g} s)"
    trace.reading = reading
    got.body, got.is_json, got.error = reading.body, False, reading.error
    if asm.first_token is not None and asm.first_token < len(read.event_ms):
        trace.first_token_ms = read.event_ms[asm.first_token]
    if asm.first_call is not None and asm.first_call < len(read.event_ms):
        trace.first_call_ms = read.event_ms[asm.first_call]


def interrupted(trace: StreamTrace, why: str) -> ErrorClass:
    """A stream cut by the request deadline or the network: ``stream_interrupted``."""
    events = len(trace.event_ms)
    return ErrorClass("stream_interrupted", f"{why} after {events} events; what arrived is kept")


def exchange_decision(adapter: Adapter, body: Any, trace: StreamTrace | None) -> ModelDecision:
    """The decision of an answered exchange: the adapter's parse, and for a stream the
    stream's flags and its mismatches beside it."""
    if trace is not None and trace.reading is not None:
        return stream_decision(adapter, trace.reading)
    return adapter.parse_decision(body)


def recorded_answer(
    adapter: Adapter, response: dict[str, Any]
) -> tuple[ErrorClass | None, ModelDecision | None]:
    """A recorded response (status set) read again with the current code: the transport
    failure it is, else its decision; a streamed one from its recorded events (rejudge)."""
    cap = response.get("too_large")
    if isinstance(cap, int) and not isinstance(cap, bool):
        return ErrorClass("response_too_large", f"decoded body larger than {cap} bytes"), None
    reading = recorded_reading(adapter.api, adapter, response)
    if reading is not None:
        if reading.error is not None:
            return reading.error, None
        return None, stream_decision(adapter, reading)
    body = response.get("body")
    err = adapter.classify_error(response["status"], response.get("headers") or {}, body)
    if err is not None:
        return err, None
    return None, adapter.parse_decision(body)


def recorded_reading(api: str, adapter: Adapter, response: dict[str, Any]) -> StreamReading | None:
    """A recorded streamed response read again (rejudge); None when it was not an SSE
    stream. Raises ValueError for a body that cannot be what was recorded."""
    stream = response.get("stream")
    if not isinstance(stream, dict) or stream.get("sse") is False:
        return None
    body = response.get("body")
    if not isinstance(body, str):
        raise ValueError("response.body of a streamed record is not text")
    if stream.get("encoding") == "base64":
        try:
            raw = base64.b64decode(body, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"response.body is not base64: {exc}") from None
    else:
        raw = body.encode("utf-8")
    _, asm = assemble(api, raw)
    status = response.get("status")
    headers = response.get("headers") or {}
    return read_assembled(api, adapter, status if isinstance(status, int) else 200, headers, asm)


def recorded_events(response: dict[str, Any]) -> list[SseEvent] | None:
    """The events of a recorded streamed response, in dispatch order (so they pair with
    ``stream.event_ms``); None when it was no SSE stream or its body is base64."""
    stream = response.get("stream")
    body = response.get("body")
    if not isinstance(stream, dict) or stream.get("sse") is False or not isinstance(body, str):
        return None
    if stream.get("encoding") == "base64":
        return None
    decoder = SseDecoder()
    events = decoder.feed(body.encode("utf-8"))
    decoder.close()
    return events
