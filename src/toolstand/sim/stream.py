"""What every streamed answer shares: SSE events, where fragments are cut, how events are framed.

A stream is built from the body the simulator would have sent unstreamed (the wire
modules' ``render``), so a streamed answer is the same answer, cut into events.
``sim.stream_chunks`` sets the cuts: ``token`` (the default) a few characters per event,
always cutting inside each JSON escape of an arguments string; ``whole`` one event per
part; ``random`` seeded cuts, and the bytes go to the socket in seeded pieces down to
single bytes (see ``server``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

import orjson

from toolstand.sim.turn import Draws

ChunkMode = Literal["token", "whole", "random"]
CHUNK_MODES: tuple[str, ...] = get_args(ChunkMode)
# characters per fragment in token mode: a fixed cycle, so token streams are the same bytes
# for the same answer whatever the seed
TOKEN_SIZES = (4, 3, 5, 2, 6)
RANDOM_MAX = 8  # random mode: fragments of 1..RANDOM_MAX characters
PIECE_MAX = 7  # random mode: socket writes of 1..PIECE_MAX bytes


@dataclass(slots=True)
class Sse:
    """One server-sent event: ``data`` is a JSON object (or the literal ``[DONE]``)."""

    data: Any
    name: str | None = None  # the ``event:`` line; None for APIs that send none
    raw: bool = False  # written bare, pretty-printed, with no ``data:`` (Gemini's error tail)


class Splitter:
    """Cuts a text into the fragments of successive delta events."""

    def __init__(self, mode: ChunkMode, draws: Draws) -> None:
        self.mode = mode
        self._draws = draws
        self._turn = 0

    def split(self, text: str, *, escapes: bool = False) -> list[str]:
        """Fragments that join to ``text``; never empty (an empty text is one ``""``).

        ``escapes``: the text is JSON, so token mode also cuts right after the backslash of
        every escape sequence (a client must never read fragments on their own).
        """
        if self.mode == "whole" or len(text) <= 1:
            return [text]
        cuts: set[int] = set()
        at = 0
        while at < len(text):
            at += self._size()
            cuts.add(min(at, len(text)))
        if escapes and self.mode == "token":
            cuts.update(i + 1 for i in _escape_starts(text))
        cuts.discard(0)
        cuts.add(len(text))
        out, prev = [], 0
        for cut in sorted(cuts):
            if cut > prev:
                out.append(text[prev:cut])
                prev = cut
        return out

    def _size(self) -> int:
        if self.mode == "random":
            return 1 + int(self._draws.uniform() * RANDOM_MAX)
        size = TOKEN_SIZES[self._turn % len(TOKEN_SIZES)]
        self._turn += 1
        return size


def _escape_starts(text: str) -> list[int]:
    """Positions of the backslashes that start an escape inside the JSON strings of ``text``."""
    out, i, in_string = [], 0, False
    while i < len(text):
        ch = text[i]
        if ch == '"':
            in_string = not in_string
        elif ch == "\\" and in_string:
            out.append(i)
            i += 1  # the escaped character
        i += 1
    return out


@dataclass(slots=True)
class Framing:
    """How events become bytes: line ends and the framing-level server bug classes."""

    crlf: bool = False  # Gemini ends every line with CRLF
    comments: bool = False  # comment_keepalive: ``: keep-alive`` lines between events
    data_first: bool = False  # field_order: ``data:`` before ``event:``
    padding: bool = False  # json_padding: spaces before the closing brace

    def encode(self, events: list[Sse]) -> list[bytes]:
        """One byte string per event (comments ride with the event that follows them)."""
        nl = b"\r\n" if self.crlf else b"\n"
        out = []
        for i, event in enumerate(events):
            if event.raw:
                out.append(
                    orjson.dumps(event.data, option=orjson.OPT_INDENT_2).replace(b"\n", nl) + nl
                )
                continue
            data = b"[DONE]" if event.data == "[DONE]" else orjson.dumps(event.data)
            if self.padding and data.endswith(b"}"):
                data = data[:-1] + b" " * (1 + i % 7) + b"}"
            lines = [b"data: " + data]
            if event.name is not None:
                name = b"event: " + event.name.encode()
                lines = [*lines, name] if self.data_first else [name, *lines]
            if self.comments and i % 2 == 0:
                lines.insert(0, b": toolstand-sim keep-alive")
            out.append(nl.join(lines) + nl + nl)
        return out


def pieces(blob: bytes, draws: Draws) -> list[bytes]:
    """The body cut into seeded socket writes of 1..PIECE_MAX bytes (random mode)."""
    out, at = [], 0
    while at < len(blob):
        size = 1 + int(draws.uniform() * PIECE_MAX)
        out.append(blob[at : at + size])
        at += size
    return out


def usage_share(total: int, done: int, parts: int) -> int:
    """A running token count after ``done`` of ``parts`` events, reaching ``total`` at the end."""
    return max(1, total * done // max(1, parts)) if total else 0
