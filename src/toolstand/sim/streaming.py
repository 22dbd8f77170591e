"""Whether a request asks for a stream (each API's own way), and the events that answer it.

Chat Completions, Responses and Anthropic take ``"stream": true`` in the body (Chat
also ``stream_options.include_usage``); Gemini takes the path
``…:streamGenerateContent``, with ``?alt=sse`` for server-sent events (without it the API
streams one JSON array; so does the simulator).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolstand.sim.stream import Framing, Splitter, Sse
from toolstand.sim.stream_anthropic import anthropic_events
from toolstand.sim.stream_chat import chat_events
from toolstand.sim.stream_gemini import gemini_events
from toolstand.sim.stream_responses import responses_events
from toolstand.sim.turn import Answer, WireError

# what a streamed request carries that its unstreamed twin does not
STREAM_KEYS = ("stream", "stream_options")
SSE_TYPE = "text/event-stream; charset=utf-8"


@dataclass(slots=True, frozen=True)
class StreamAsk:
    """A request's streaming options."""

    include_usage: bool = False  # Chat Completions' stream_options.include_usage
    # stream_options.include_obfuscation (default on): an ``obfuscation`` padding string on
    # every Chat chunk and every Responses delta event, as OpenAI sends
    obfuscation: bool = True
    sse: bool = True  # Gemini without alt=sse: one JSON array instead


def stream_ask(
    api: str, body: dict[str, Any], gemini_stream: bool, query: dict[str, str]
) -> StreamAsk | None:
    """The request's streaming options, or None for an unstreamed request; a malformed
    ``stream`` or ``stream_options`` is the API's 400."""
    if api == "gemini":
        return StreamAsk(sse=query.get("alt") == "sse") if gemini_stream else None
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise WireError(
            "bad_request",
            f"Invalid type for 'stream': expected a boolean, got {stream!r}.",
            "stream",
        )
    options = body.get("stream_options")
    if api == "openai-chat" and options is not None:
        if not stream:
            raise WireError(
                "bad_request",
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                "stream_options",
            )
        if not isinstance(options, dict):
            raise WireError(
                "bad_request",
                "Invalid type for 'stream_options': expected an object.",
                "stream_options",
            )
    if not stream:
        return None
    usage = isinstance(options, dict) and options.get("include_usage") is True
    hidden = not (isinstance(options, dict) and options.get("include_obfuscation") is False)
    return StreamAsk(include_usage=usage, obfuscation=hidden and api.startswith("openai-"))


def unstreamed(raw: bytes) -> bytes:
    """The bytes of the request's unstreamed twin: ``raw`` (a JSON object) with its top-level
    ``stream`` and ``stream_options`` members cut out, separators and all, so a client that
    serializes both requests alike sends exactly these bytes unstreamed."""
    members = _members(raw)
    kept = [(i, m) for i, m in enumerate(members) if m[2] not in STREAM_KEYS]
    if len(kept) == len(members):
        return raw
    if not kept:
        return raw[: members[0][0]] + raw[members[-1][1] :]
    out = [raw[: members[0][0]]]
    for n, (i, (start, end, _)) in enumerate(kept):
        if n:
            out.append(raw[members[i - 1][1] : start])  # the separator written before it
        out.append(raw[start:end])
    out.append(raw[members[-1][1] :])
    return b"".join(out)


def _members(raw: bytes) -> list[tuple[int, int, str]]:
    """(start, end, key) of each top-level member of a JSON object's text."""
    out: list[tuple[int, int, str]] = []
    depth, i, start, key = 0, 0, -1, ""
    in_string = False
    string_start = 0
    while i < len(raw):
        ch = raw[i]
        if in_string:
            if ch == 0x5C:  # backslash: skip the escaped byte
                i += 1
            elif ch == 0x22:
                in_string = False
                if depth == 1 and start < 0:
                    start, key = string_start, raw[string_start + 1 : i].decode("utf-8", "replace")
        elif ch == 0x22:
            in_string, string_start = True, i
        elif ch in b"{[":
            depth += 1
        elif ch in b"}]" or (ch == 0x2C and depth == 1):
            if depth == 1 and start >= 0:
                end = i
                while raw[end - 1] in b" \t\r\n":
                    end -= 1
                out.append((start, end, key))
                start = -1
            if ch != 0x2C:
                depth -= 1
        i += 1
    return out


def stream_events(
    api: str,
    data: dict[str, Any],
    answer: Answer,
    ask: StreamAsk,
    splitter: Splitter,
    faults: frozenset[str],
) -> list[Sse]:
    """The events of the streamed form of ``data`` (the unstreamed body)."""
    if api == "openai-chat":
        return _obfuscated(chat_events(data, splitter, faults, ask.include_usage), ask)
    if api == "openai-responses":
        return _obfuscated(responses_events(data, splitter, faults), ask)
    if api == "anthropic":
        return anthropic_events(data, answer, splitter, faults)
    return gemini_events(data, splitter, faults)


_PADDING = "toolstandSimObfuscationPad"


def _obfuscated(events: list[Sse], ask: StreamAsk) -> list[Sse]:
    """OpenAI's ``obfuscation`` strings (random-length padding; clients ignore them)."""
    if not ask.obfuscation:
        return events
    for n, event in enumerate(events):
        data = event.data
        if isinstance(data, dict) and (
            data.get("object") == "chat.completion.chunk"
            or str(data.get("type")).endswith(".delta")
        ):
            data["obfuscation"] = _PADDING[: 2 + n % (len(_PADDING) - 2)]
    return events


def framing(api: str, faults: frozenset[str]) -> Framing:
    return Framing(
        crlf=api == "gemini",
        comments="comment_keepalive" in faults,
        data_first="field_order" in faults,
        padding="json_padding" in faults,
    )
