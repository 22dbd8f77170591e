"""Sending one built request: the httpx client, retries with backoff, and what is kept.

``exchange`` never raises for a network problem: every failure becomes an ``ErrorClass``
with a transport code, and every try is recorded. Classification of answers is the
adapter's (``classify_error``); this module only adds what happens below HTTP:

- httpx timeouts (connect, read, write, pool) are ``timeout``;
- refused or reset connections (``ConnectError``, ``ReadError``, ``RemoteProtocolError``
  ...) are ``connect_error``, including a body torn off mid-transfer: the connection
  broke, the server did not answer wrongly, so it is retried;
- a 2xx body that arrived whole but is not the API's JSON is the adapter's
  ``malformed_response`` and is not retried;
- errors that retrying cannot fix (an invalid URL, an unsupported scheme) are
  ``connect_error`` marked not retryable.

The key is added here from ``Adapter.auth`` and nothing returned holds it: the useful
response headers are a short allow-list, and body and messages are scrubbed of the key
(and of every other configured one) in case a server echoes it. A client keeps no
cookies: a ``Set-Cookie`` from one answer must not travel with the next request, to
this provider or another (a test stand carries no state between attempts).
"""

from __future__ import annotations

import asyncio
import functools
import random
import ssl
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.cookiejar import Cookie, CookieJar
from typing import Any

import httpx
import orjson

from toolstand.adapters.base import (
    Adapter,
    BuiltRequest,
    ErrorClass,
    HttpRequest,
    RequestSettings,
    reserialize,
)
from toolstand.types import TransportErrorRecord
from toolstand.util.canonical import canonical_hash
from toolstand.util.redact import redact_headers, redact_url, scrub, scrubbable

USEFUL_HEADERS = frozenset(
    {
        "content-type",
        "retry-after",
        "retry-after-ms",
        "x-should-retry",
        "request-id",
        "x-request-id",
    }
)


@dataclass
class RetryPolicy:
    """Bounded exponential backoff with jitter, within a total time budget."""

    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    total_budget_s: float = 120.0
    jitter: float = 0.25  # the backoff is shortened by up to this fraction

    def delay(self, retry_index: int, retry_after_s: float | None, rng: random.Random) -> float:
        """The wait before retry number ``retry_index`` (0-based): the jittered backoff,
        but never sooner than the server asked."""
        backoff = min(self.max_delay_s, self.base_delay_s * 2**retry_index)
        backoff *= 1.0 - self.jitter * rng.random()
        return backoff if retry_after_s is None else max(retry_after_s, backoff)


@dataclass
class Try:
    """One HTTP try: what came back and how long we waited after it."""

    status: int | None
    error_code: str | None
    elapsed_ms: float
    retry_after_s: float | None = None
    waited_s: float | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # by hand: dataclasses.asdict deep-copies, and this runs for every try
        return {
            "status": self.status,
            "error_code": self.error_code,
            "elapsed_ms": self.elapsed_ms,
            "retry_after_s": self.retry_after_s,
            "waited_s": self.waited_s,
            "message": self.message,
        }


@dataclass
class Exchange:
    """The outcome of a request after all its tries; ``status``/``headers``/``body`` are
    those of the final try (``status`` None when it got no response)."""

    status: int | None
    headers: dict[str, str]
    body: Any
    body_is_json: bool
    tries: list[Try] = field(default_factory=list)
    error: ErrorClass | None = None
    elapsed_ms: float = 0.0
    latency_ms: float | None = None

    @property
    def retries(self) -> int:
        return max(0, len(self.tries) - 1)

    def response_record(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "headers": dict(self.headers),
            "body": self.body,
            "body_is_json": self.body_is_json,
        }

    def transport_error_record(self) -> TransportErrorRecord | None:
        if self.error is None:
            return None
        return {"code": self.error.code, "message": self.error.message, "status": self.status}


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


def useful_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Request ids, retry hints, rate-limit state and content type; nothing else."""
    kept = {}
    for name, value in headers.items():
        low = name.lower()
        if low in USEFUL_HEADERS or "ratelimit" in low or low.endswith("-request-id"):
            kept[low] = value
    return redact_headers(kept)


def decode_body(raw: bytes) -> tuple[Any, bool]:
    """(parsed JSON, True), else (the text, False)."""
    if not raw:
        return "", False
    try:
        return orjson.loads(raw), True
    except orjson.JSONDecodeError:
        return raw.decode("utf-8", errors="replace"), False


def sanitize_request(http: HttpRequest, secrets: list[str] | None = None) -> dict[str, Any]:
    """The request as it may be recorded: no auth headers, no ``key=`` parameter."""
    url = str(httpx.URL(http.url).copy_merge_params(http.params)) if http.params else http.url
    record = {
        "method": http.method,
        "url": redact_url(url),
        "headers": redact_headers(http.headers),
        "body": http.body,
    }
    return scrub(record, secrets) if secrets else record


def request_hash(body: Any) -> str:
    """SHA-256 of the canonical JSON of a request body."""
    return canonical_hash(body)


def _network_error(exc: Exception) -> ErrorClass:
    message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return ErrorClass("timeout", message)
    if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError):
        return ErrorClass("connect_error", message)
    if isinstance(exc, httpx.DecodingError):  # the body arrived but cannot be decoded
        return ErrorClass("malformed_response", message)
    return ErrorClass("connect_error", message, retryable=False)


def _classify(
    adapter: Adapter, status: int, headers: dict[str, str], body: Any
) -> ErrorClass | None:
    try:
        return adapter.classify_error(status, headers, body)
    except Exception as exc:  # an adapter bug must not crash the run loop
        return ErrorClass("malformed_response", f"classify_error failed: {exc!r}", retryable=False)


async def exchange(
    client: httpx.AsyncClient,
    adapter: Adapter,
    built: BuiltRequest,
    key: str | None,
    settings: RequestSettings,
    policy: RetryPolicy | None = None,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    rng: random.Random | None = None,
    secrets: Iterable[str] = (),
) -> Exchange:
    """Send ``built`` with retries; return every try and the final answer or failure.
    ``secrets``: the other configured keys, scrubbed like ``key`` from what is kept."""
    policy = policy or RetryPolicy()
    rng = rng or random.Random()
    secrets = scrubbable([key, *secrets])
    auth_headers, auth_params = adapter.auth(key, settings) if key else ({}, {})
    http = built.http
    headers = {**http.headers, **auth_headers}
    params = {**http.params, **auth_params}
    content = reserialize(http.body).encode()
    start = clock()
    tries: list[Try] = []
    while True:
        began = clock()
        status: int | None = None
        kept: dict[str, str] = {}
        body: Any = None
        is_json = False
        try:
            response = await client.request(
                http.method, http.url, headers=headers, params=params or None, content=content
            )
        except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
            error: ErrorClass | None = _network_error(exc)
        else:
            status = response.status_code
            all_headers = {k.lower(): v for k, v in response.headers.items()}
            kept = useful_headers(all_headers)
            body, is_json = decode_body(response.content)
            # scrubbed before anything derives a message from it: a message keeps only
            # the start of a page, and could cut an echoed key in half
            body = scrub(body, secrets)
            error = _classify(adapter, status, all_headers, body)
        latency_ms = (clock() - began) * 1000.0
        if error is not None and secrets:
            error.message = scrub(error.message, secrets)
        this = Try(
            status=status,
            error_code=error.code if error else None,
            elapsed_ms=latency_ms,
            retry_after_s=error.retry_after_s if error else None,
            message=error.message if error else None,
        )
        tries.append(this)
        if error is None or not error.should_retry or len(tries) > policy.max_retries:
            break
        wait = policy.delay(len(tries) - 1, error.retry_after_s, rng)
        if (clock() - start) + wait > policy.total_budget_s:
            break  # the next try could not happen inside the budget: report this failure
        this.waited_s = wait
        await sleep(wait)
    return Exchange(
        status=status,
        headers=scrub(kept, secrets),
        body=body,
        body_is_json=is_json,
        tries=tries,
        error=error,
        elapsed_ms=(clock() - start) * 1000.0,
        latency_ms=latency_ms,
    )
