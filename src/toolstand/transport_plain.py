"""An httpx transport for plain-HTTP origins without a proxy (the simulator, a model
server on this machine or the LAN): HTTP/1.1 parsed by h11 over an asyncio protocol,
with a small keep-alive pool (re-exported by toolstand.transport_client).

httpx's default transport goes through httpcore's pool and anyio's socket streams:
about 1 ms of CPU per request here, and six wake-ups of the task on the way (anyio
checkpoints, pool locks and events). With 64 requests in flight each wake-up waits for
every other ready task, so a burst of answers is served round-robin and every worker
of the burst is late: a bare httpx loop reached 87% of the ideal rate against a
200 ms server, a plain asyncio one 98% (bench/bench_runner.py (b), bench/README.md).
Here a request is one write and the reads its answer needs. h11 parses both ways, as
under httpcore, so a broken answer raises the same RemoteProtocolError text.

Errors are httpx's: ConnectError / ConnectTimeout while connecting, WriteError /
WriteTimeout, ReadError / ReadTimeout, RemoteProtocolError for a broken answer, and
PoolTimeout, so transport.exchange classifies them as before. https and proxies keep
httpx's own transport (transport_client.make_client chooses).
"""

from __future__ import annotations

import asyncio
import select
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import h11
import httpx

KEEPALIVE_S = 5.0  # an idle connection older than this is closed, as under httpcore
HIGH_WATER = 256 * 1024  # unread answer bytes at which the socket stops being read


class _Protocol(asyncio.Protocol):
    """One connection: the bytes received and not yet consumed, and its end."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: list[bytes] = []
        self.size = 0
        self.eof = False
        self.lost: Exception | None = None
        self.stray = False  # bytes arrived while no request was waiting for them
        self.busy = False
        self._waiter: asyncio.Future[None] | None = None
        self._drain: asyncio.Future[None] | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if not self.busy:
            self.stray = True
        self.chunks.append(data)
        self.size += len(data)
        if self.size >= HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.lost = exc
        self._wake()
        drain, self._drain = self._drain, None
        if drain is not None and not drain.done():
            drain.set_result(None)

    def pause_writing(self) -> None:
        self._drain = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        drain, self._drain = self._drain, None
        if drain is not None and not drain.done():
            drain.set_result(None)

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    @property
    def ready(self) -> bool:
        """Whether ``receive`` would return at once."""
        return bool(self.chunks) or self.eof

    @property
    def writing_paused(self) -> bool:
        return self._drain is not None

    async def drained(self) -> None:
        if self._drain is not None:
            await self._drain

    async def receive(self) -> bytes:
        """What arrived since the last call, waiting for it if need be; b"" at EOF."""
        if not self.chunks and not self.eof:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        if not self.chunks:
            return b""
        data = self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)
        self.chunks, self.size = [], 0
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return data


def _readable(transport: asyncio.Transport) -> bool:
    """Whether the socket has something to read (an EOF included), without waiting."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return True
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    return bool(poller.poll(0))


class _Connection:
    __slots__ = ("h11", "idle_since", "origin", "protocol", "transport")

    def __init__(
        self, protocol: _Protocol, transport: asyncio.Transport, origin: tuple[bytes, int]
    ) -> None:
        self.protocol = protocol
        self.transport = transport
        self.h11 = h11.Connection(h11.CLIENT)
        self.idle_since = 0.0
        self.origin = origin

    def reusable(self, now: float) -> bool:
        """Idle, not closed by the server meanwhile (EOF or stray bytes), not expired.
        The socket itself is asked too: a server that closes after each answer sends its
        FIN right behind it, before the loop has read it (httpcore asks the same way)."""
        p = self.protocol
        return (
            not self.transport.is_closing()
            and not p.eof
            and not p.stray
            and now - self.idle_since < KEEPALIVE_S
            and not _readable(self.transport)
        )

    def close(self) -> None:
        self.transport.close()

    async def next_event(self, timeout: float | None, request: httpx.Request | None) -> Any:
        """The next h11 event of the answer, reading as needed within ``timeout`` a read."""
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc), request=request) from None
            if event is not h11.NEED_DATA:
                return event
            try:
                if timeout is None or self.protocol.ready:  # no wait, no timer to set
                    data = await self.protocol.receive()
                else:
                    async with asyncio.timeout(timeout):
                        data = await self.protocol.receive()
            except TimeoutError:
                raise httpx.ReadTimeout("timed out", request=request) from None
            if not data and self.protocol.lost is not None:
                lost = self.protocol.lost
                raise httpx.ReadError(str(lost) or type(lost).__name__, request=request)
            self.h11.receive_data(data)


class _Body(httpx.AsyncByteStream):
    """The answer's body as it arrives; closing it returns the connection to the pool
    when the exchange ended cleanly, else closes it."""

    def __init__(
        self,
        pool: PlainHttpTransport,
        conn: _Connection,
        request: httpx.Request | None,
        timeout: float | None,
    ) -> None:
        self._pool, self._conn, self._request, self._timeout = pool, conn, request, timeout
        self._done = False
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while not self._done:
            event = await self._conn.next_event(self._timeout, self._request)
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                self._done = True

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pool.release(self._conn, clean=self._done)


class PlainHttpTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 to ``http://`` origins, at most ``max_connections`` requests at once."""

    def __init__(self, max_connections: int = 16) -> None:
        self.max_connections = max(1, max_connections)
        self._idle: list[_Connection] = []
        self._slots: asyncio.Semaphore | None = None
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "http":
            raise httpx.UnsupportedProtocol(
                f"this transport is for plain-http URLs only; refused {request.url.scheme}",
                request=request,
            )
        body = await request.aread()
        timeouts = request.extensions.get("timeout", {})
        return await self.send(
            request.method, request.url, request.headers.raw, body, timeouts, request
        )

    async def send(
        self,
        method: str,
        url: httpx.URL,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeouts: Mapping[str, float | None],
        request: httpx.Request | None = None,
    ) -> httpx.Response:
        """One exchange of ``method`` to the ``http://`` ``url`` with exactly these
        header lines and ``body``; ``request``: the httpx request it stands for, if
        any, named by the errors raised (transport_client.send comes without one)."""
        await self._slot(timeouts.get("pool"), request)
        try:
            conn = await self._connection(url, timeouts.get("connect"), request)
        except BaseException:
            self._free_slot()
            raise
        try:
            return await self._exchange(conn, method, url, headers, body, timeouts, request)
        except BaseException:
            self.release(conn, clean=False)
            raise

    async def _slot(self, timeout: float | None, request: httpx.Request | None) -> None:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_connections)
        if not self._slots.locked():
            await self._slots.acquire()  # free: returns at once, no yield
            return
        try:
            async with asyncio.timeout(timeout):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("timed out waiting for a connection", request=request) from None

    def _free_slot(self) -> None:
        assert self._slots is not None
        self._slots.release()

    async def _connection(
        self, url: httpx.URL, timeout: float | None, request: httpx.Request | None
    ) -> _Connection:
        origin = (url.raw_host, url.port or 80)
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if conn.origin == origin and conn.reusable(now):
                return conn
            conn.close()
        loop = asyncio.get_running_loop()
        host = url.raw_host.decode("ascii")
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(_Protocol, host, origin[1])
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out", request=request) from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc), request=request) from None
        assert isinstance(transport, asyncio.Transport)
        return _Connection(protocol, transport, origin)

    async def _exchange(
        self,
        conn: _Connection,
        method: str,
        url: httpx.URL,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeouts: Mapping[str, float | None],
        request: httpx.Request | None,
    ) -> httpx.Response:
        conn.protocol.busy = True
        try:
            head = conn.h11.send(h11.Request(method=method, target=url.raw_path, headers=headers))
            parts = [head or b"", conn.h11.send(h11.Data(data=body)) or b"" if body else b""]
            parts.append(conn.h11.send(h11.EndOfMessage()) or b"")
        except h11.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(str(exc), request=request) from None
        write_s = timeouts.get("write")
        try:
            conn.transport.write(b"".join(parts))
            if conn.protocol.writing_paused:  # a large body: wait until it is sent
                async with asyncio.timeout(write_s):
                    await conn.protocol.drained()
        except TimeoutError:
            raise httpx.WriteTimeout("timed out", request=request) from None
        except OSError as exc:
            raise httpx.WriteError(str(exc), request=request) from None
        read_s = timeouts.get("read")
        while True:
            event = await conn.next_event(read_s, request)
            if isinstance(event, h11.InformationalResponse):
                continue  # 100 Continue and the like: the answer follows
            if isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response.", request=request
                )
            assert isinstance(event, h11.Response)
            return httpx.Response(
                status_code=event.status_code,
                headers=event.headers.raw_items(),
                stream=_Body(self, conn, request, read_s),
                extensions={
                    "http_version": b"HTTP/" + event.http_version,
                    "reason_phrase": event.reason,
                },
            )

    def release(self, conn: _Connection, *, clean: bool) -> None:
        """The exchange on ``conn`` is over: keep the connection for the next one when
        it ended cleanly (both sides done, nothing left over), else close it."""
        conn.protocol.busy = False
        self._free_slot()
        h = conn.h11
        if (
            clean
            and not self._closed
            and h.our_state is h11.DONE
            and h.their_state is h11.DONE
            and not h.trailing_data[0]
            and not conn.protocol.chunks
            and len(self._idle) < self.max_connections
        ):
            h.start_next_cycle()
            conn.idle_since = time.monotonic()
            self._idle.append(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


__all__ = ["PlainHttpTransport"]
