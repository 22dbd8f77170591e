"""Streamed events as the Run and History screens list them (no Textual): each event's
arrival, its type and its delta, live from the transport's hook or from a record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from toolstand.transport_stream import recorded_events
from toolstand.util.printable import visible


class Event(Protocol):
    """A dispatched server-sent event (adapters.sse.SseEvent): its name and data."""

    event: str
    data: str


# where each API puts the piece an event adds (providers.md S2-S5): text, arguments,
# thinking; searched depth first, the first string found is the delta
_DELTA_KEYS = ("content", "text", "partial_json", "arguments", "thinking", "delta", "refusal")


@dataclass(frozen=True)
class EventRow:
    """One event: ms since the request (None: not recorded), its type, its delta."""

    ms: float | None
    type: str
    delta: str

    def line(self) -> str:
        when = f"{self.ms:8.1f}" if self.ms is not None else "       ?"
        return visible(f"{when}  {self.type}" + (f"  {self.delta}" if self.delta else ""))


def _delta(value: Any, depth: int = 0) -> str | None:
    if depth > 6:
        return None
    if isinstance(value, dict):
        name = value.get("name")
        # a call opens with its name (Gemini's whole call is below)
        opens = f"{name} " if isinstance(name, str) and name and "args" not in value else ""
        for key in _DELTA_KEYS:
            found = value.get(key)
            if isinstance(found, str) and found:
                return opens + found
        if opens:
            return opens
        for key in (
            *("delta", "choices", "candidates", "content", "parts", "tool_calls"),
            *("function", "content_block", "item"),
        ):
            if key in value:
                got = _delta(value[key], depth + 1)
                if got is not None:
                    return got
        call = value.get("functionCall")
        if isinstance(call, dict):  # Gemini sends a call whole, arguments as an object
            return f"{call.get('name')}({orjson.dumps(call.get('args')).decode()})"
    elif isinstance(value, list):
        for item in value:
            got = _delta(item, depth + 1)
            if got is not None:
                return got
    return None


def event_row(event: Event, ms: float | None) -> EventRow:
    """``event`` as a row: the ``type`` its data names (else its ``event:`` name, else
    its ``object``) and the text, arguments or thinking it adds."""
    if event.data.strip() == "[DONE]":
        return EventRow(ms, "[DONE]", "")
    try:
        data = orjson.loads(event.data)
    except orjson.JSONDecodeError:
        return EventRow(ms, event.event, event.data[:80])
    kind = event.event if event.event != "message" else ""
    if isinstance(data, dict):
        kind = str(data.get("type") or kind or data.get("object") or "message")
    return EventRow(ms, kind or "message", _delta(data) or "")


def recorded_rows(response: dict[str, Any] | None) -> list[EventRow] | None:
    """The events of a recorded streamed response, paired with its ``event_ms``; None
    when it was not streamed."""
    response = response or {}
    events = recorded_events(response)
    stream = response.get("stream")
    if events is None or not isinstance(stream, dict):
        if isinstance(stream, dict) and stream.get("encoding") == "base64":
            return [EventRow(None, "base64 body", "not UTF-8: y copies the record")]
        return None
    times = stream.get("event_ms") or []
    return [
        event_row(e, times[i] if i < len(times) and isinstance(times[i], int | float) else None)
        for i, e in enumerate(events)
    ]


def _ms(stream: dict[str, Any] | None, key: str) -> float | None:
    value = (stream or {}).get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def stream_titles(stream: dict[str, Any] | None, events: int) -> tuple[str, ...]:
    """The events pane's titles, the fullest first, for a half-width pane at 80 columns:
    how many, then first token and first call in ms (``stream_line`` says it in full).
    Narrow, the first token gives way before the first call, then both: a figure is
    never cut in the middle, however many digits a slow stream gives it."""
    token, call = _ms(stream, "first_token_ms"), _ms(stream, "first_call_ms")
    head = f"events · {events}"
    end = " · incomplete" if (stream or {}).get("complete") is False else ""
    bits = [f"token {token:.0f}"] if token is not None else []
    bits += [f"call {call:.0f}"] if call is not None else []
    titles = [" · ".join([head, *bits]) + " ms" + end] if bits else []
    if token is not None and call is not None:
        titles.append(f"{head} · call {call:.0f} ms{end}")
    return (*titles, head + end)


def stream_title(stream: dict[str, Any] | None, events: int) -> str:
    """The fullest of ``stream_titles``."""
    return stream_titles(stream, events)[0]


def stream_line(stream: dict[str, Any] | None) -> str:
    """The stream's timing for the verdict pane: first token and first call in ms."""
    token, call = _ms(stream, "first_token_ms"), _ms(stream, "first_call_ms")
    said = [f"first token {token:.0f} ms" if token is not None else "no token"]
    said.append(f"first call {call:.0f} ms" if call is not None else "no call")
    return "streamed: " + ", ".join(said)
