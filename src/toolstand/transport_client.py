"""The httpx client of a run: a small pool, no cookies, no redirects, and TLS loaded
only where a base URL needs it; ``send``, a request through it (re-exported by
toolstand.transport)."""

from __future__ import annotations

import functools
import logging
import ssl
from collections.abc import Mapping
from http.cookiejar import Cookie, CookieJar
from typing import Any

import httpx

from toolstand.transport_plain import PlainHttpTransport


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default verifying context, built once per process: loading the CA bundle
    takes 30-70 ms, and the runner makes one client per few requests in flight."""
    return httpx.create_ssl_context()


class NoCookies(CookieJar):
    """A cookie jar that keeps nothing: every ``Set-Cookie`` is dropped on arrival, so
    no request ever carries a ``Cookie`` header."""

    def set_cookie(self, cookie: Cookie) -> None:
        pass

    def extract_cookies(self, response: Any, request: Any) -> None:
        pass


class NoTls(httpx.AsyncBaseTransport):
    """Mounted on ``https://`` in a client made for plain HTTP: that client verifies no
    certificate, so an https URL must never go through it (httpx follows no redirect
    here anyway; this makes it impossible, not just unlikely)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise httpx.UnsupportedProtocol(
            f"this client is for plain-http base URLs only; refused {request.url.scheme} "
            f"to {request.url.host}",
            request=request,
        )


class RunClient(httpx.AsyncClient):
    """make_client's client; ``plain``: the PlainHttpTransport it sends ``http://``
    requests through (None: httpx's own transport), which ``send`` calls directly."""

    def __init__(self, *, plain: PlainHttpTransport | None = None, **kwargs: Any) -> None:
        super().__init__(transport=plain, **kwargs)
        self.plain = plain
        self.timeouts = self.timeout.as_dict()  # as build_request puts it on a request


async def send(
    client: httpx.AsyncClient,
    method: str,
    url: httpx.URL,
    headers: Mapping[str, str],
    params: Mapping[str, str] | None,
    content: bytes,
) -> httpx.Response:
    """``client.send(client.build_request(...), stream=True)``: the response, its body
    unread. To a plain-http URL through a RunClient's own transport, the same header
    lines go out without httpx's client layer: its header, cookie and URL merging, the
    auth and redirect flows, the cookie jar's wrappers around every answer (NoCookies
    keeps nothing anyway): about a sixth of the runner's CPU a request at 64 in flight
    (bench/README.md, issue 28)."""
    plain = client.plain if isinstance(client, RunClient) else None
    if plain is None or params or url.scheme != "http":
        request = client.build_request(method, url, headers=headers, params=params, content=content)
        return await client.send(request, stream=True)
    if client.is_closed:  # as client.send says it
        raise RuntimeError("Cannot send a request, as the client has been closed.")
    assert isinstance(client, RunClient)
    lines = wire_headers(client.headers.raw, method, url, headers, content)
    response = await plain.send(method, url, lines, content, client.timeouts)
    if response.has_redirect_location:
        try:
            _redirect_url(url, response)
        except BaseException:
            await response.aclose()
            raise
    if _LOG.isEnabledFor(logging.INFO):
        _LOG.info(
            'HTTP Request: %s %s "%s %d %s"',
            method,
            url,
            response.http_version,
            response.status_code,
            response.reason_phrase,
        )
    return response


_LOG = logging.getLogger("httpx")  # where httpx's client logs each request


def wire_headers(
    defaults: list[tuple[bytes, bytes]],
    method: str,
    url: httpx.URL,
    headers: Mapping[str, str],
    content: bytes,
) -> list[tuple[bytes, bytes]]:
    """The header lines ``build_request`` makes of a client's ``defaults`` and
    ``headers`` for ``content``: a name given replaces the default of that name and
    goes after them (Headers.update), then Content-Length, and Host first
    (Request._prepare). tests/test_transport_client.py holds it to httpx's own."""
    ours = [(k.encode("ascii"), v.encode("ascii")) for k, v in headers.items()]
    given = {k.lower() for k, _ in ours}
    lines = [(k, v) for k, v in defaults if k.lower() not in given] + ours
    names = given | {k.lower() for k, _ in defaults}
    if content and b"content-length" not in names:
        lines.append((b"Content-Length", str(len(content)).encode("ascii")))
        names.add(b"content-length")
    auto = []
    if b"host" not in names and url.host:
        auto.append((b"Host", url.netloc))
    if not names & {b"content-length", b"transfer-encoding"} and method in ("POST", "PUT", "PATCH"):
        auto.append((b"Content-Length", b"0"))
    return auto + lines


def _redirect_url(url: httpx.URL, response: httpx.Response) -> httpx.URL:
    """Where a 3xx points, as httpx's client works it out for ``next_request`` (it
    raises there on a Location that is no URL, and the answer is then an error)."""
    location = response.headers["Location"]
    try:
        target = httpx.URL(location)
    except httpx.InvalidURL as exc:
        raise httpx.RemoteProtocolError(f"Invalid URL in location header: {exc}.") from None
    if target.scheme and not target.host:
        target = target.copy_with(host=url.host)
    if target.is_relative_url:
        target = url.join(target)
    if url.fragment and not target.fragment:
        target = target.copy_with(fragment=url.fragment)
    return target


def lean(*, loopback_only: bool, plain_http: bool, proxy: str | None) -> bool:
    """Whether make_client with these flags sends through PlainHttpTransport (no TLS
    and no proxy apply), whose pool does no work per waiting request: one client can
    hold every request of a run."""
    return loopback_only or (plain_http and proxy is None)


def make_client(
    *,
    connect_timeout: float = 10.0,
    read_timeout: float = 60.0,
    max_connections: int = 16,
    transport: httpx.AsyncBaseTransport | None = None,
    loopback_only: bool = False,
    plain_http: bool = False,
    proxy: str | None = None,
) -> httpx.AsyncClient:
    """An AsyncClient with a small pool: httpx's pool slows down with many waiters, so
    the runner should spread load over several clients rather than enlarge one. It
    keeps no cookies (``NoCookies``) and follows no redirect (a 3xx is an answer to
    record).

    ``loopback_only``: every request goes to the embedded simulator in plain HTTP on
    127.0.0.1, so no proxy from the environment applies (it could not reach our
    loopback) and no TLS context is needed (no CA bundle to load at startup).
    ``plain_http``: the base URL is ``http://``, so no origin uses TLS and the CA
    bundle is not loaded either; an https proxy still verifies its certificate
    (httpcore gives the proxy connection its own default context, not the client's),
    and https URLs are refused (``NoTls``).
    ``proxy``: the run's own proxy, the only one taken: the environment's proxy
    variables (and .netrc) are ignored, or every request and its key would go to a
    host that no config names. The simulator on loopback never takes one."""
    # no pool timeout: waiting for a free connection is the runner's concurrency, not
    # the provider's slowness, and must not be recorded as a provider timeout
    timeout = httpx.Timeout(
        connect=connect_timeout, read=read_timeout, write=read_timeout, pool=None
    )
    limits = httpx.Limits(
        max_connections=max_connections, max_keepalive_connections=max_connections
    )
    no_tls = loopback_only or plain_http
    if transport is None and lean(loopback_only=loopback_only, plain_http=plain_http, proxy=proxy):
        # no TLS and no proxy: toolstand's lean HTTP/1.1 (transport_plain)
        transport = PlainHttpTransport(max_connections)
    options: dict[str, Any] = {
        "timeout": timeout,
        "limits": limits,
        "mounts": {"https://": NoTls()} if no_tls else None,
        "cookies": NoCookies(),
        "trust_env": False,
        "proxy": None if loopback_only else proxy,
        "verify": False if no_tls else tls_context(),
        "follow_redirects": False,
    }
    if isinstance(transport, PlainHttpTransport):
        return RunClient(plain=transport, **options)
    return httpx.AsyncClient(transport=transport, **options)


__all__ = [
    "NoCookies",
    "NoTls",
    "RunClient",
    "lean",
    "make_client",
    "send",
    "tls_context",
    "wire_headers",
]
