"""transport_client.send: a run's client sends through its plain transport without
httpx's client layer, and what goes on the wire is what httpx's client would send."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import httpx
import pytest

from toolstand.transport import make_client
from toolstand.transport_client import RunClient, send, wire_headers

URL = httpx.URL("http://127.0.0.1:8080/v1/chat/completions")

HEADERS: dict[str, dict[str, str]] = {
    "adapter's": {"accept-encoding": "gzip, deflate", "content-type": "application/json"},
    "a default in other case": {"ACCEPT": "application/json", "x-toolstand-repetition": "3"},
    "own host and length": {"Host": "example.test", "Content-Length": "2"},
    "none": {},
}


@pytest.mark.parametrize("headers", HEADERS.values(), ids=HEADERS.keys())
@pytest.mark.parametrize("method, content", [("POST", b"{}"), ("POST", b""), ("GET", b"")])
def test_the_header_lines_are_those_of_build_request(
    headers: dict[str, str], method: str, content: bytes
) -> None:
    client = make_client(loopback_only=True)
    built = client.build_request(method, URL, headers=headers, content=content)
    assert wire_headers(client.headers.raw, method, URL, headers, content) == built.headers.raw


ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 12\r\n\r\n"


async def _capture(answer: bytes) -> tuple[str, list[bytes], asyncio.Server]:
    """A server on 127.0.0.1 that keeps each request's bytes and gives ``answer``."""
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = [x for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")]
        body = await reader.readexactly(int(length[0].split(b":")[1])) if length else b""
        seen.append(head + body)
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/x", seen, server


async def _both(
    answer: bytes, headers: Mapping[str, str], content: bytes
) -> list[tuple[str, object]]:
    """The lean path and httpx's client path, each to the same server: what each got
    back (or raised), and the bytes the server read from each."""
    url, seen, server = await _capture(answer)
    out: list[tuple[str, object]] = []
    try:
        for client in (make_client(loopback_only=True), make_client(loopback_only=True)):
            assert isinstance(client, RunClient) and client.plain is not None
            lean = not out
            if not lean:  # the same client, made to take httpx's path
                client.plain = None
            async with client:
                try:
                    response = await send(client, "POST", httpx.URL(url), headers, None, content)
                    body = await response.aread()
                    out.append(("answered", (response.status_code, body)))
                except httpx.HTTPError as exc:
                    out.append(("raised", f"{type(exc).__name__}: {exc}"))
    finally:
        server.close()
    assert len(seen) == 2
    assert seen[0] == seen[1]
    return out


def test_the_lean_path_sends_the_bytes_httpx_sends_and_reads_the_same_answer() -> None:
    headers = {"accept-encoding": "identity", "content-type": "application/json", "x-a": "1"}
    lean, full = asyncio.run(_both(ANSWER + b'{"ok": true}', headers, b'{"q": 1}'))
    assert lean == full == ("answered", (200, b'{"ok": true}'))


REDIRECTS = {
    "a location that is no URL": b"HTTP/1.1 302 Found\r\nlocation: http://[::1\r\n"
    b"content-length: 0\r\n\r\n",
    "a relative location": b"HTTP/1.1 307 Temporary Redirect\r\nlocation: /elsewhere\r\n"
    b"content-length: 0\r\n\r\n",
}


@pytest.mark.parametrize("answer", REDIRECTS.values(), ids=REDIRECTS.keys())
def test_a_redirect_ends_as_it_ends_through_httpx_client(answer: bytes) -> None:
    lean, full = asyncio.run(_both(answer, {}, b"{}"))
    assert lean == full


def test_a_closed_client_refuses_as_httpx_does() -> None:
    async def go() -> None:
        client = make_client(loopback_only=True)
        await client.aclose()
        await send(client, "POST", URL, {}, None, b"{}")

    with pytest.raises(RuntimeError, match="client has been closed"):
        asyncio.run(go())


# a key or a config's header with a line break, a control character, a non-ASCII letter,
# an empty or spaced name, padding, or a huge value: refused (or sent) as httpx refuses it
HOSTILE_HEADERS = {
    "a line break (header injection)": {"x-api-key": "sk-1\r\nInjected: 1"},
    "a NUL": {"x-api-key": "\x00"},
    "a non-ASCII letter": {"x-api-key": "clé"},
    "an empty name": {"": "v"},
    "a name with a space": {"x api": "v"},
    "a padded value": {"x-api-key": " sk-1 "},
    "a 200 KB value": {"x-api-key": "a" * 200_000},
}


async def _outcome(url: str, headers: Mapping[str, str], lean: bool) -> str:
    client = make_client(loopback_only=True)
    assert isinstance(client, RunClient) and client.plain is not None
    if not lean:
        client.plain = None  # the same client on httpx's own path
    async with client:
        try:
            response = await send(client, "POST", httpx.URL(url), headers, None, b"{}")
            return f"answered {response.status_code} {await response.aread()!r}"
        except Exception as exc:
            return f"raised {type(exc).__name__}: {exc}"


@pytest.mark.parametrize("headers", HOSTILE_HEADERS.values(), ids=HOSTILE_HEADERS.keys())
def test_hostile_request_headers_end_as_they_end_through_httpx_client(
    headers: dict[str, str],
) -> None:
    async def go() -> tuple[str, str]:
        url, _, server = await _capture(ANSWER + b'{"ok": true}')
        try:
            return await _outcome(url, headers, True), await _outcome(url, headers, False)
        finally:
            server.close()

    lean, full = asyncio.run(go())
    assert lean == full
