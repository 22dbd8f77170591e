"""The plain-HTTP transport (transport_plain): what httpx's own transport does, read the
same way, on servers of our own on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from toolstand.transport import make_client
from toolstand.transport_plain import PlainHttpTransport

Answer = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]
OK = b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 12\r\n\r\n{"ok": true}'


async def _request(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    length = next(
        (
            int(x.split(b":")[1])
            for x in head.split(b"\r\n")
            if x.lower().startswith(b"content-length")
        ),
        0,
    )
    return head + await reader.readexactly(length)


@contextlib.asynccontextmanager
async def serve(answer: Answer) -> AsyncIterator[tuple[str, list[int]]]:
    """A server that calls ``answer`` per request (True: keep the connection); yields
    its URL and a one-item list counting the connections it accepted."""
    accepted = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted[0] += 1
        try:
            while await _request(reader) is not None:
                if not await answer(reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # cancelled: the test is over and asyncio.run ends the handler
        finally:
            writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}/v1/x", accepted
    finally:
        srv.close()


async def keep_alive(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    writer.write(OK)
    await writer.drain()
    return True


async def close_after(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    writer.write(OK)  # no "connection: close": the FIN follows right behind the answer
    await writer.drain()
    return False


async def torn(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    writer.write(b'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"half":')
    await writer.drain()
    return False


async def chunked(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    for i in range(3):
        data = f"data: {i}\n\n".encode()
        writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True


def test_plain_http_clients_take_the_plain_transport_and_reuse_connections() -> None:
    async def go() -> tuple[list[bytes], int]:
        async with serve(keep_alive) as (url, accepted):
            client = make_client(plain_http=True, max_connections=2)
            async with client:
                bodies = [(await client.post(url, content=b"{}")).content for _ in range(5)]
            return bodies, accepted[0]

    bodies, accepted = asyncio.run(go())
    assert bodies == [b'{"ok": true}'] * 5
    assert accepted == 1


def test_a_server_that_closes_after_each_answer_gets_a_fresh_connection_each_time() -> None:
    async def go() -> tuple[list[int], int]:
        async with serve(close_after) as (url, accepted):
            async with httpx.AsyncClient(transport=PlainHttpTransport(1)) as client:
                codes = []
                for _ in range(4):
                    codes.append((await client.post(url, content=b"{}")).status_code)
            return codes, accepted[0]

    codes, accepted = asyncio.run(go())
    assert codes == [200] * 4
    assert accepted == 4


def test_a_torn_body_raises_what_httpx_own_transport_raises() -> None:
    async def one(transport: httpx.AsyncBaseTransport | None) -> str:
        async with serve(torn) as (url, _), httpx.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx.RemoteProtocolError) as caught:
                await client.post(url, content=b"{}")
            return str(caught.value)

    ours = asyncio.run(one(PlainHttpTransport(1)))
    theirs = asyncio.run(one(None))
    assert ours == theirs
    assert "peer closed connection without sending complete message body" in ours


def test_a_chunked_stream_arrives_piece_by_piece_and_whole() -> None:
    async def go() -> tuple[list[str], bytes]:
        async with serve(chunked) as (url, _):
            async with httpx.AsyncClient(transport=PlainHttpTransport(1)) as client:
                async with client.stream("POST", url, content=b"{}") as resp:
                    lines = [x async for x in resp.aiter_lines() if x]
                again = (await client.post(url, content=b"{}")).content
            return lines, again

    lines, again = asyncio.run(go())
    assert lines == ["data: 0", "data: 1", "data: 2"]
    assert again == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"


def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def go() -> None:
        async with httpx.AsyncClient(transport=PlainHttpTransport(1)) as client:
            await client.post(f"http://127.0.0.1:{port}/", content=b"{}")

    with pytest.raises(httpx.ConnectError):
        asyncio.run(go())


def test_https_is_refused_by_the_plain_transport() -> None:
    async def go() -> None:
        async with httpx.AsyncClient(transport=PlainHttpTransport(1)) as client:
            await client.get("https://127.0.0.1:1/")

    with pytest.raises(httpx.UnsupportedProtocol):
        asyncio.run(go())


def _answering(raw: bytes) -> Answer:
    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(raw)
        await writer.drain()
        return False

    return answer


HOSTILE = {
    "nothing": b"",
    "garbage": b"\x00\x1b[2Jnot http at all\r\n\r\n",
    "huge header": b"HTTP/1.1 200 OK\r\nx-big: " + b"a" * 200_000 + b"\r\n\r\n",
    "control in header": b"HTTP/1.1 200 OK\r\nx-c: a\x07\x1bb\r\ncontent-length: 2\r\n\r\n{}",
    "bad length": b"HTTP/1.1 200 OK\r\ncontent-length: -5\r\n\r\n{}",
    "short key": b"HTTP/1.1 200 OK\r\n: v\r\ncontent-length: 2\r\n\r\n{}",
}


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_answer_reads_as_httpx_own_transport_reads_it(raw: bytes) -> None:
    """What a server sends back is hostile input: each answer gives the same outcome
    (the same exception class, or the same status and body) as httpx's own transport."""

    async def one(transport: httpx.AsyncBaseTransport | None) -> tuple[str, object]:
        async with (
            serve(_answering(raw)) as (url, _),
            httpx.AsyncClient(transport=transport) as client,
        ):
            try:
                resp = await client.post(url, content=b"{}")
            except httpx.HTTPError as exc:
                return "raised", type(exc).__name__
            return "answered", (resp.status_code, resp.content)

    assert asyncio.run(one(PlainHttpTransport(1))) == asyncio.run(one(None))
