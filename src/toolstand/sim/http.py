"""A minimal HTTP/1.1 server side on asyncio streams: keep-alive, Content-Length requests,
Content-Length or chunked responses (streams).

It is all the simulator needs (clients send JSON bodies with Content-Length), and it
keeps toolstand free of a web framework. Faults that a real stack would never
produce on purpose (torn bodies, resets) are written here at the byte level.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote

MAX_BODY = 64 * 1024 * 1024

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    411: "Length Required",
    413: "Payload Too Large",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Site Overloaded",
}

BAD_GATEWAY_PAGE = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    b"</body>\r\n</html>\r\n"
)


@dataclass(slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    body: bytes
    keep_alive: bool


class HttpError(Exception):
    """A request too broken to route; answered with a bare status, then the connection closes."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on a connection, or None when the client closed it cleanly."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise HttpError(400) from None
        return None
    except asyncio.LimitOverrunError:
        raise HttpError(431) from None
    lines = head[:-4].decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ", 2)
    except ValueError:
        raise HttpError(400) from None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "transfer-encoding" in headers:
        raise HttpError(411)
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise HttpError(400) from None
    if length < 0:  # "-5" parses as a number, and no body has that length
        raise HttpError(400)
    if length > MAX_BODY:
        raise HttpError(413)
    body = await reader.readexactly(length) if length else b""
    path, _, qs = target.partition("?")
    connection = headers.get("connection", "").lower()
    keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
    return Request(
        method, unquote(path), dict(parse_qsl(qs)) if qs else {}, headers, body, keep_alive
    )


def encode_response(
    status: int,
    body: bytes,
    headers: dict[str, str],
    *,
    content_type: str = "application/json",
    keep_alive: bool = True,
    declared_length: int | None = None,
) -> bytes:
    """Status line, headers and body; ``declared_length`` lies about the size (torn bodies)."""
    length = len(body) if declared_length is None else declared_length
    lines = [
        f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}",
        f"content-type: {content_type}",
        f"content-length: {length}",
        "x-toolstand-simulator: 1",
        "server: toolstand-sim",
        f"connection: {'keep-alive' if keep_alive else 'close'}",
    ]
    lines.extend(f"{k}: {v}" for k, v in headers.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST rather than a FIN: what a crashed proxy looks like to a client."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def encode_stream_head(
    status: int, headers: dict[str, str], content_type: str, keep_alive: bool
) -> bytes:
    """Status line and headers of a chunked response (a stream whose length is not known)."""
    lines = [
        f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}",
        f"content-type: {content_type}",
        "transfer-encoding: chunked",
        "cache-control: no-cache",
        "x-toolstand-simulator: 1",
        "server: toolstand-sim",
        f"connection: {'keep-alive' if keep_alive else 'close'}",
    ]
    lines.extend(f"{k}: {v}" for k, v in headers.items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def encode_chunk(data: bytes) -> bytes:
    """One chunk of a chunked body; ``b""`` is the last chunk."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"
