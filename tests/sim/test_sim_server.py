"""The server itself: determinism under concurrency, parallelism, HTTP/1.1 details, ways to run it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import Any

import httpx
import orjson
import pytest

from tests.support.simwire import HEADERS, ROOT, for_case, path
from toolstand.sim import SimServer, banner, serve_in_thread, sim_base_url
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract


def stable(body: dict[str, Any]) -> bytes:
    """A response body without its wall-clock timestamp."""
    body = dict(body)
    body.pop("created", None)
    return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)


async def run_eager(
    cases: list[Case], contract: Contract, by_id: dict[str, Case], *, seed: int, concurrent: bool
) -> list[bytes]:
    async with (
        SimServer(cases, contract, seed=seed) as server,
        httpx.AsyncClient(base_url=server.root) as client,
    ):
        body = for_case("openai-chat", "sim-eager", by_id["missing_id"], contract)

        async def one() -> bytes:
            resp = await client.post(
                path("openai-chat", "sim-eager"), json=body, headers=HEADERS["openai-chat"]
            )
            return stable(resp.json())

        if concurrent:
            return list(await asyncio.gather(*(one() for _ in range(40))))
        return [await one() for _ in range(40)]


async def test_outcomes_fixed_by_seed_whatever_the_concurrency(
    cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    sequential = await run_eager(cases, contract, by_id, seed=5, concurrent=False)
    concurrent = await run_eager(cases, contract, by_id, seed=5, concurrent=True)
    assert Counter(sequential) == Counter(concurrent)
    assert len(set(sequential)) == 40  # every repetition is a fresh draw with fresh ids
    other = await run_eager(cases, contract, by_id, seed=6, concurrent=False)
    kinds = [b"tool_calls" in b for b in sequential], [b"tool_calls" in b for b in other]
    assert kinds[0] != kinds[1]


async def test_max_in_flight_reaches_the_concurrency(
    cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    n = 16
    limits = httpx.Limits(max_connections=n)
    async with (
        SimServer(cases, contract, latency_s=0.2) as server,
        httpx.AsyncClient(base_url=server.root, limits=limits) as client,
    ):
        body = for_case("openai-chat", "sim-careful", by_id["direct_lookup"], contract)
        started = time.monotonic()
        replies = await asyncio.gather(
            *(
                client.post(
                    path("openai-chat", "sim-careful"), json=body, headers=HEADERS["openai-chat"]
                )
                for _ in range(n)
            )
        )
        elapsed = time.monotonic() - started
    assert all(r.status_code == 200 for r in replies)
    assert server.max_in_flight == n and server.requests_total == n and server.in_flight == 0
    # delayed; in parallel rather than one after another, as max_in_flight == n shows
    # (an upper bound on the time would measure the machine's load, not the server)
    assert elapsed >= 0.2


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
    body = await reader.readexactly(int(headers["content-length"]))
    return int(lines[0].split()[1]), headers, body


async def test_keep_alive_close_and_chunked(
    sim: SimServer, contract: Contract, by_id: dict[str, Case]
) -> None:
    body = orjson.dumps(for_case("openai-chat", "sim-careful", by_id["direct_lookup"], contract))
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"
        b"Content-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    reader, writer = await asyncio.open_connection(sim.host, sim.port)
    for _ in range(3):  # three requests on one connection
        writer.write(request)
        status, headers, data = await read_response(reader)
        assert status == 200 and headers["connection"] == "keep-alive" and b"get_order" in data
    writer.write(request.replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n"))
    status, headers, _ = await read_response(reader)
    assert status == 200 and headers["connection"] == "close"
    assert await reader.read() == b""  # the server closed it
    writer.close()

    reader, writer = await asyncio.open_connection(sim.host, sim.port)
    writer.write(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    )
    status, _, _ = await read_response(reader)
    assert status == 411
    writer.close()


def test_serve_in_thread_for_sync_callers(
    cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    body = for_case("anthropic", "sim-careful", by_id["direct_lookup"], contract)
    with serve_in_thread(cases, contract, seed=1) as root:
        resp = httpx.post(
            sim_base_url(root, "anthropic") + "/v1/messages",
            json=body,
            headers=HEADERS["anthropic"],
        )
        assert resp.status_code == 200 and resp.json()["stop_reason"] == "tool_use"
    with pytest.raises(httpx.ConnectError):
        httpx.post(root + "/v1/messages", json=body, headers=HEADERS["anthropic"])


def test_sim_base_url_and_banner() -> None:
    root = "http://127.0.0.1:9"
    assert [
        sim_base_url(root + "/", api)
        for api in ("openai-chat", "openai-responses", "anthropic", "gemini")
    ] == [root + "/v1", root + "/v1", root, root]
    with pytest.raises(ValueError, match="unknown api"):
        sim_base_url(root, "cohere")
    text = banner(root)
    assert "simulat" in text and f"base_url {root}/v1" in text and "sim-flaky" in text


def test_serve_forever_prints_the_urls_and_serves() -> None:
    # through the command line, so the flags' wiring is covered too
    cmd = [sys.executable, "-m", "toolstand", "sim", "--port", "0", "--seed", "3"]
    cmd += [
        "--cases",
        str(ROOT / "cases/delivery.jsonl"),
        "--tools",
        str(ROOT / "contracts/delivery_tools.json"),
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        # Ctrl-C as at a terminal: a job started with `&` (nohup, a CI runner) ignores
        # SIGINT, its children inherit that, and Python then never sees the signal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "toolstand simulator" in first and "not a real model" in first
        root = first.rsplit(" ", 1)[1].strip()
        resp = httpx.get(root + "/")
        assert resp.json()["simulator"] == "toolstand"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
    assert proc.returncode == 0
