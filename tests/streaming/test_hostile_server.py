"""H1 and H2 against a real HTTP server on 127.0.0.1 (port 0): a gzip bomb and a server
that trickles a byte at a time, through the run's own client (issue 31)."""

from __future__ import annotations

import asyncio
import gzip

from tests.support.streams import server
from toolstand.adapters import get_adapter
from toolstand.adapters.base import RequestSettings
from toolstand.transport import Exchange, RetryPolicy, exchange, make_client


async def send(base_url: str, policy: RetryPolicy) -> Exchange:
    adapter = get_adapter("openai-chat")
    built = adapter.build_request(
        base_url=base_url, model="m", system=None, messages=[{"role": "user", "content": "x"}],
        tools=None, settings=RequestSettings(),
    )  # fmt: skip
    async with make_client(plain_http=True, read_timeout=3.0) as client:
        return await exchange(client, adapter, built, None, RequestSettings(), policy)


async def test_a_gzip_bomb_from_a_real_server_is_capped() -> None:
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)

    async def answer(writer: asyncio.StreamWriter, _body: bytes) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
            + f"content-length: {len(bomb)}\r\n\r\n".encode()
            + bomb
        )
        await writer.drain()

    async with server(answer) as url:
        ex = await send(url, RetryPolicy(max_retries=0, max_response_bytes=1024 * 1024))
    assert ex.error is not None and ex.error.code == "response_too_large"
    assert len(ex.response_record()["body"]) <= 64 * 1024


async def test_a_slow_loris_is_cut_at_the_request_deadline() -> None:
    async def answer(writer: asyncio.StreamWriter, _body: bytes) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n"
        )
        for _ in range(100000):  # one byte every 50 ms: httpx's read timeout never fires
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(0.05)

    loop = asyncio.get_running_loop()
    async with server(answer) as url:
        t0 = loop.time()
        ex = await send(url, RetryPolicy(max_retries=0, request_s=0.5, total_budget_s=10.0))
        took = loop.time() - t0
    assert ex.error is not None and ex.error.code == "timeout"
    assert took < 3.0
