"""Server-sent events framing (WHATWG HTML, "event stream interpretation"): bytes in,
events out, incrementally.

The rules every API here relies on (providers.md S1):

- a line ends at CRLF, LF or CR, mixed in one stream; a CRLF split across two reads is
  one line end, not two;
- lines are split as **bytes** and each complete line is decoded as UTF-8 afterwards, so
  a multi-byte character cut by the network is whole again, and U+2028 or U+0085 inside
  a JSON string never ends a line;
- an empty line dispatches the event; an event with no ``data:`` line is not dispatched;
- ``:`` starts a comment; ``field: value`` drops one space after the colon; a line
  without a colon is a field with an empty value; unknown fields are ignored (a line
  that is no SSE field at all is kept in ``stray``: Gemini may end a stream with a bare
  JSON error object, S5.7);
- several ``data:`` lines are joined with ``\\n``; ``event:`` names the event (default
  ``message``); ``id:`` is kept unless it holds NUL; ``retry:`` is read and unused;
- a partly built event at the end of the stream is discarded;
- one leading byte-order mark is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class SseEvent:
    """One dispatched event: its name, its data (``data:`` lines joined) and ``id``."""

    event: str
    data: str
    id: str | None = None


class SseDecoder:
    """Feed it bytes as they arrive; each ``feed`` returns the events completed by them.

    ``comments`` counts comment lines (keep-alives); ``stray`` holds the lines that were
    no SSE field (decoded, without their line end), at most ``MAX_STRAY`` of them."""

    MAX_STRAY = 256

    __slots__ = ("_buf", "_cr", "_data", "_event", "_id", "_started", "comments", "stray")

    def __init__(self) -> None:
        self._buf = b""
        self._cr = False  # the last byte fed was a CR: a LF right after it is its pair
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._started = False
        self.comments = 0
        self.stray: list[str] = []

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if not chunk:
            return []
        if (
            chunk[-2:] == b"\n\n"
            and chunk[:6] == b"data: "
            and self._started
            and not self._buf
            and not self._data
            and not self._cr
            and chunk.count(b"\n") == 2
            and b"\r" not in chunk
        ):
            # a read holding exactly one event of one data line (most reads of a token
            # stream): what the loop below makes of it, without splitting it
            name, self._event = self._event or "message", ""
            return [SseEvent(name, chunk[6:-2].decode("utf-8", "replace"), self._id)]
        if self._cr:
            self._cr = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        buf = self._buf + chunk if self._buf else chunk
        if not self._started:
            if len(buf) < 3 and _BOM.startswith(buf):
                self._buf = buf
                return []
            self._started = True
            if buf.startswith(_BOM):
                buf = buf[3:]
        out: list[SseEvent] = []
        if b"\r" in buf:
            lines = _split_any(buf)
            if buf.endswith(b"\r"):
                self._cr = True
        else:
            lines = buf.split(b"\n")
        self._buf = lines.pop()
        data = self._data
        for raw in lines:
            # the two lines of nearly every event, inline: "data: ..." and the blank one
            if raw[:5] == b"data:":
                value = raw[6:] if raw[5:6] == b" " else raw[5:]
                data.append(value.decode("utf-8", "replace"))
            elif not raw:
                if data:
                    out.append(SseEvent(self._event or "message", "\n".join(data), self._id))
                    data = self._data = []
                self._event = ""
            else:
                self._line(raw)
        return out

    def close(self) -> list[SseEvent]:
        """The end of the stream: a partly built event is discarded (never dispatched);
        an unterminated last line that is no field is kept in ``stray``."""
        rest, self._buf = self._buf, b""
        if rest and not self._started and rest.startswith(_BOM):
            rest = rest[3:]
        if rest:
            text = rest.decode("utf-8", "replace")
            if not _is_field(text):
                self._keep_stray(text)
        self._data, self._event, self._id = [], "", None
        return []

    def _line(self, raw: bytes) -> None:
        """A line that is neither blank nor ``data:``: a comment or another field."""
        if raw[:1] == b":":
            self.comments += 1
            return
        text = raw.decode("utf-8", "replace")
        colon = text.find(":")
        if colon < 0:
            name, value = text, ""
        else:
            name = text[:colon]
            value = text[colon + 1 :]
            if value[:1] == " ":
                value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name != "retry":
            self._keep_stray(text)

    def _keep_stray(self, text: str) -> None:
        if len(self.stray) < self.MAX_STRAY:
            self.stray.append(text)


def _is_field(text: str) -> bool:
    name = text.split(":", 1)[0]
    return text.startswith(":") or name in ("data", "event", "id", "retry")


def _split_any(buf: bytes) -> list[bytes]:
    """``buf`` split at CRLF, LF and CR; the last element is the unfinished line (empty
    when ``buf`` ends with a line end)."""
    return buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")


def decode_reads(
    reads: list[bytes], whole: bytes | None = None
) -> tuple[list[SseEvent], list[int], SseDecoder]:
    """The events of a stream read as ``reads`` (``whole``: their join, when the caller
    has it), each with the index of the read that completed it, and the decoder, closed:
    what feeding the reads one by one and then ``close`` gives.

    Nearly every token stream is LF-only events of one ``data: `` line each; those are
    split over the whole buffer at once. Anything else (a CR, a comment, ``event:``,
    ``id:``, several data lines, a BOM) is fed read by read to the full decoder."""
    whole = b"".join(reads) if whole is None else whole
    parts = whole.split(b"\n\n")
    rest = parts.pop()
    if (
        whole[:6] == b"data: "
        and b"\r" not in whole
        and b"\n" not in rest
        and whole.count(b"\n") == 2 * len(parts)
        and all(part[:6] == b"data: " for part in parts)
    ):
        return _single_lines(reads, parts, rest)
    decoder = SseDecoder()
    events: list[SseEvent] = []
    ends: list[int] = []
    for i, chunk in enumerate(reads):
        got = decoder.feed(chunk)
        if got:
            events += got
            ends += [i] * len(got)
    decoder.close()
    return events, ends, decoder


def _single_lines(
    reads: list[bytes], parts: list[bytes], rest: bytes
) -> tuple[list[SseEvent], list[int], SseDecoder]:
    """``decode_reads`` of events that are each one ``data: `` line and a blank line;
    ``rest`` is the unfinished line after the last one. An event completes with its
    second LF: the read holding that byte is the read that dispatched it."""
    events = [SseEvent("message", part[6:].decode("utf-8", "replace")) for part in parts]
    ends: list[int] = []
    i, bound = 0, len(reads[0])
    last = -1  # the index in the whole body of the event's second LF
    for part in parts:
        last += len(part) + 2
        while last >= bound:
            i += 1
            bound += len(reads[i])
        ends.append(i)
    decoder = SseDecoder()
    decoder._started, decoder._buf = True, rest
    decoder.close()
    return events, ends, decoder


def decode_events(raw: bytes) -> tuple[list[SseEvent], SseDecoder]:
    """Every event of a whole recorded body (as ``feed`` of it all, then ``close``)."""
    decoder = SseDecoder()
    events = decoder.feed(raw)
    decoder.close()
    return events, decoder
