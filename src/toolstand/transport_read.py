"""Reading one response body within bounds: a cap on the decoded size, checked while
reading and while decompressing (a gzip bomb never gets past it), and, for a streamed
answer, the SSE events with their arrival times and an idle timer between reads.

The content encodings toolstand asks for (``gzip``, ``deflate``) are decoded here, a
bounded piece at a time, instead of by httpx, whose decoder inflates a whole network
chunk at once (a 64 KB chunk of a bomb is 64 MB).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import httpx

from toolstand.adapters.sse import SseDecoder, SseEvent, decode_reads
from toolstand.adapters.stream_base import StreamAssembler

ACCEPT_ENCODING = "gzip, deflate"
KEPT_WHEN_TOO_LARGE = 64 * 1024  # what a body over the cap keeps of itself


class BodyTooLarge(Exception):
    """The decoded body passed the cap; ``head`` is what had arrived, cut to the cap."""

    def __init__(self, head: bytes, cap: int) -> None:
        super().__init__(f"decoded body larger than {cap} bytes")
        self.head = head
        self.cap = cap


class UnsupportedEncoding(Exception):
    """A content encoding toolstand did not ask for and does not decode."""


class _Inflate:
    """One zlib stream (gzip or deflate) decoded at most ``room`` bytes at a time."""

    def __init__(self, encoding: str) -> None:
        self.deflate = encoding == "deflate"
        # gzip: header auto-detected; deflate: zlib-wrapped, or raw (servers send both)
        self.d = zlib.decompressobj(zlib.MAX_WBITS | 32 if not self.deflate else zlib.MAX_WBITS)
        self.first = True

    def decode(self, data: bytes, room: int) -> tuple[bytes, bool]:
        """Up to ``room + 1`` decoded bytes and whether input is left unread."""
        data = self.d.unconsumed_tail + data if self.d.unconsumed_tail else data
        if self.deflate and self.first and data:
            self.first = False
            try:
                out = self.d.decompress(data, room + 1)
            except zlib.error:
                self.d = zlib.decompressobj(-zlib.MAX_WBITS)
                out = self.d.decompress(data, room + 1)
        else:
            out = self.d.decompress(data, room + 1)
        return out, bool(self.d.unconsumed_tail)


def decoders(content_encoding: str | None) -> list[_Inflate]:
    """The decoders for a ``Content-Encoding`` value, in the order to apply them."""
    names = [p.strip().lower() for p in (content_encoding or "").split(",") if p.strip()]
    out = []
    for name in reversed(names):
        if name in ("identity", ""):
            continue
        if name in ("gzip", "x-gzip", "deflate"):
            out.append(_Inflate("deflate" if name == "deflate" else "gzip"))
        else:
            raise UnsupportedEncoding(f"content-encoding {name!r} is not one toolstand asked for")
    return out


async def body_of(response: httpx.Response, cap: int) -> AsyncIterator[bytes]:
    """``response``'s decoded body, piece by piece, as it arrives (``decoded``). A
    response built in memory (httpx's MockTransport) was read and decoded already."""
    if response.is_stream_consumed:
        raw: AsyncIterator[bytes] = _once(response.content)
        encoding = None
    else:
        raw, encoding = response.aiter_raw(), response.headers.get("content-encoding")
    async for piece in decoded(raw, encoding, cap):
        yield piece


async def _once(content: bytes) -> AsyncIterator[bytes]:
    yield content


async def decoded(
    raw: AsyncIterator[bytes], content_encoding: str | None, cap: int
) -> AsyncIterator[bytes]:
    """The decoded body, piece by piece; ``BodyTooLarge`` once it passes ``cap``."""
    chain = decoders(content_encoding)
    total = 0
    kept: list[bytes] = []  # the start of the body, for BodyTooLarge
    kept_len = 0
    async for chunk in raw:
        pieces = [chunk]
        for dec in chain:
            pieces = _through(dec, pieces, cap - total)
        for piece in pieces:
            if not piece:
                continue
            total += len(piece)
            if kept_len < KEPT_WHEN_TOO_LARGE:
                kept.append(piece[: KEPT_WHEN_TOO_LARGE - kept_len])
                kept_len += len(kept[-1])
            if total > cap:
                raise BodyTooLarge(b"".join(kept), cap)
            yield piece


def _through(dec: _Inflate, pieces: list[bytes], room: int) -> list[bytes]:
    """``pieces`` through one decoder, never more than ``room + 1`` bytes out in all."""
    out: list[bytes] = []
    produced = 0
    for piece in pieces:
        data: bytes = piece
        while True:
            got, more = dec.decode(data, max(0, room - produced))
            data = b""
            if got:
                out.append(got)
                produced += len(got)
            if produced > room or not more:
                break
        if produced > room:
            break
    return out


# who watches the events of the streamed reads in this task as they arrive (the Run
# screen's live session): called with each event and its arrival in ms since the request
EventHook = Callable[[SseEvent, float], None]
_WATCHER: ContextVar[EventHook | None] = ContextVar("toolstand_stream_watcher", default=None)


@contextmanager
def watching(hook: EventHook | None) -> Iterator[None]:
    """Call ``hook`` with every streamed event read inside the block (in this task)."""
    token = _WATCHER.set(hook)
    try:
        yield
    finally:
        _WATCHER.reset(token)


@dataclass
class StreamRead:
    """A streamed body as read: the bytes, each event's arrival (ms since the request,
    in dispatch order), and the assembler fed with every event."""

    raw: bytearray = field(default_factory=bytearray)
    event_ms: list[float] = field(default_factory=list)
    decoder: SseDecoder = field(default_factory=SseDecoder)
    idle: bool = False  # the stream went idle longer than the idle timeout


class _Watchdog:
    """The idle timer: one timer handle re-armed from the last activity only when it
    comes due, so a read costs a clock reading, not a new timer (a stream is ~100 reads).
    When the silence reaches ``idle_s`` it cancels the reading task (``fired``)."""

    __slots__ = ("fired", "handle", "idle_s", "last", "loop", "task")

    def __init__(self, idle_s: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.idle_s = idle_s
        self.last = self.loop.time()
        self.fired = False
        self.handle = self.loop.call_at(self.last + idle_s, self._due)

    def _due(self) -> None:
        if self.loop.time() - self.last >= self.idle_s:
            self.fired = True
            if self.task is not None:
                self.task.cancel()
        else:
            self.handle = self.loop.call_at(self.last + self.idle_s, self._due)


async def read_stream(
    body: AsyncIterable[bytes],
    asm: StreamAssembler,
    read: StreamRead,
    *,
    idle_s: float,
    cap: int,
    clock: Callable[[], float],
    began: float,
) -> None:
    """Feed ``body`` through the SSE decoder into ``asm`` until it ends; every received
    byte (a comment or a ping too) restarts the idle timer. On going idle, ``read.idle``
    is set and the read stops; past ``cap`` bytes, ``BodyTooLarge``; what arrived is
    kept in ``read`` either way.

    With no watcher (the headless runner) the reads and their arrival times are only
    kept while reading, and decoded and assembled once the stream stops, each event
    timed by the read that completed it: what decoding each read as it came gives."""
    dog = _Watchdog(idle_s)
    loop_time = dog.loop.time
    # arrival times as the clock reads them, made ms since ``began`` once at the end
    arrivals: list[float] = []
    watcher = _WATCHER.get()
    reads: list[bytes] = []  # headless: the reads, decoded when the stream stops
    read_at: list[float] = []
    try:
        if watcher is None:
            size = 0
            async for chunk in body:
                if not chunk:
                    continue  # no byte arrived (aiter_raw never yields these)
                dog.last = now = loop_time()
                size += len(chunk)
                if size > cap:
                    read.raw += b"".join(reads)
                    read.raw += chunk
                    raise BodyTooLarge(bytes(read.raw[:KEPT_WHEN_TOO_LARGE]), cap)
                reads.append(chunk)
                read_at.append(now)
        else:
            await _read_live(body, asm, read, dog, arrivals, cap, watcher, clock, began)
    except asyncio.CancelledError:
        if not dog.fired or dog.task is None:
            raise
        dog.task.uncancel()
        read.idle = True
    except BodyTooLarge:
        del read.raw[KEPT_WHEN_TOO_LARGE:]  # the record keeps the start, as of any body
        raise
    finally:
        dog.handle.cancel()
        if reads:
            whole = b"".join(reads)
            if not read.raw:
                read.raw += whole
            events, ends, read.decoder = decode_reads(reads, whole)
            for event, end in zip(events, ends, strict=True):
                arrivals.append(read_at[end])
                asm.feed(event)
        # the loop's clock and ``clock`` may differ (a test's fake one): offset them once
        offset = clock() - loop_time()
        read.event_ms += [round((t + offset - began) * 1000.0, 1) for t in arrivals]


async def _read_live(
    body: AsyncIterable[bytes],
    asm: StreamAssembler,
    read: StreamRead,
    dog: _Watchdog,
    arrivals: list[float],
    cap: int,
    watcher: EventHook,
    clock: Callable[[], float],
    began: float,
) -> None:
    """``read_stream`` for a watcher: each read decoded and assembled as it arrives."""
    decoder, raw = read.decoder, read.raw
    loop_time = dog.loop.time
    async for chunk in body:
        if not chunk:
            continue
        dog.last = now = loop_time()
        raw += chunk
        if len(raw) > cap:
            raise BodyTooLarge(bytes(raw[:KEPT_WHEN_TOO_LARGE]), cap)
        events = decoder.feed(chunk)
        if events:
            for event in events:
                arrivals.append(now)
                asm.feed(event)
                watcher(event, round((clock() - began) * 1000.0, 1))
