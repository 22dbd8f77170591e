"""The httpx client of a run: a small pool, no cookies, no redirects, and TLS loaded
only where a base URL needs it (re-exported by toolstand.transport)."""

from __future__ import annotations

import functools
import ssl
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
    if transport is None and no_tls and (loopback_only or proxy is None):
        # no TLS and no proxy: toolstand's lean HTTP/1.1 (transport_plain)
        transport = PlainHttpTransport(max_connections)
    return httpx.AsyncClient(
        timeout=timeout,
        limits=limits,
        transport=transport,
        mounts={"https://": NoTls()} if no_tls else None,
        cookies=NoCookies(),
        trust_env=False,
        proxy=None if loopback_only else proxy,
        verify=False if no_tls else tls_context(),
        follow_redirects=False,
    )


__all__ = ["NoCookies", "NoTls", "make_client", "tls_context"]
