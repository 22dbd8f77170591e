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
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
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

# the client lives in transport_client; re-exported here, where callers import it
from toolstand.transport_client import NoCookies as NoCookies
from toolstand.transport_client import NoTls as NoTls
from toolstand.transport_client import lean as lean
from toolstand.transport_client import make_client as make_client
from toolstand.transport_client import send
from toolstand.transport_client import tls_context as tls_context
from toolstand.transport_read import (
    ACCEPT_ENCODING,
    KEPT_WHEN_TOO_LARGE,
    BodyTooLarge,
    UnsupportedEncoding,
    body_of,
)
from toolstand.transport_stream import StreamTrace, interrupted, is_event_stream, read_streamed
from toolstand.types import TransportErrorRecord
from toolstand.util.canonical import canonical_hash
from toolstand.util.depth import nests_deeper
from toolstand.util.lenient import loads_lenient
from toolstand.util.redact import redact_headers, redact_url, scrub, scrubbable

USEFUL_HEADERS = frozenset(
    {
        "content-type",
        "retry-after",
        "retry-after-ms",
        "x-should-retry",
        "request-id",
        "x-request-id",
        # the embedded simulator's stream faults applied to this answer (labelled, ours)
        "x-toolstand-sim-stream-faults",
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
    # how one try is read: its wall-clock deadline, the cap on the decoded body, and
    # the longest silence between two reads of a stream
    request_s: float = 300.0
    max_response_bytes: int = 8 * 1024 * 1024
    stream_idle_s: float = 30.0
    # the event loop's time by which the whole attempt must be done (None: no deadline
    # beyond the budget); every try of every turn ends by then
    deadline: float | None = None

    def delay(self, retry_index: int, retry_after_s: float | None, rng: random.Random) -> float:
        """The wait before retry number ``retry_index`` (0-based): the jittered backoff,
        but never sooner than the server asked."""
        backoff = min(self.max_delay_s, self.base_delay_s * 2**retry_index)
        backoff *= 1.0 - self.jitter * rng.random()
        return backoff if retry_after_s is None else max(retry_after_s, backoff)


@dataclass
class Try:
    """One HTTP try: what came back and how long we waited after it. A try that was
    retried and got an answer also keeps that answer's useful headers, e.g. the stream
    faults its server declared (else None, and not in the record: the final try's are
    the response's)."""

    status: int | None
    error_code: str | None
    elapsed_ms: float
    retry_after_s: float | None = None
    waited_s: float | None = None
    message: str | None = None
    headers: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        # by hand: dataclasses.asdict deep-copies, and this runs for every try
        out: dict[str, Any] = {
            "status": self.status,
            "error_code": self.error_code,
            "elapsed_ms": self.elapsed_ms,
            "retry_after_s": self.retry_after_s,
            "waited_s": self.waited_s,
            "message": self.message,
        }
        if self.headers is not None:  # a retried try's: most records have none to keep
            out["headers"] = self.headers
        return out


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
    # a streamed try: the body as received and each event's arrival (``body`` is then
    # the non-streamed body the events amount to)
    stream: StreamTrace | None = None
    ttfb_ms: float | None = None  # the final try's status line, ms after it was sent
    too_large: int | None = None  # the body passed this cap: only its start is kept
    # a JSON body nesting past RECORD_BODY_DEPTH: judged parsed, recorded as its text
    deep_text: str | None = None

    @property
    def retries(self) -> int:
        return max(0, len(self.tries) - 1)

    def response_record(self) -> dict[str, Any]:
        stream = self.stream
        if stream is not None and stream.sse:
            out: dict[str, Any] = {
                "status": self.status,
                "headers": dict(self.headers),
                "body": stream.text,
                "body_is_json": False,
                "stream": stream.record(),
            }
        else:
            out = {
                "status": self.status,
                "headers": dict(self.headers),
                "body": self.body,
                "body_is_json": self.body_is_json,
            }
            if stream is not None:
                out["stream"] = stream.record()
        if self.too_large is not None:
            out["too_large"] = self.too_large
        if self.deep_text is not None:  # no encoder can write it as JSON (issue 31 H4)
            out["body"], out["body_is_json"] = self.deep_text, False
            out["too_deep"] = RECORD_BODY_DEPTH
        return out

    def transport_error_record(self) -> TransportErrorRecord | None:
        if self.error is None:
            return None
        return {"code": self.error.code, "message": self.error.message, "status": self.status}


def useful_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Request ids, retry hints, rate-limit state and content type; nothing else."""
    kept = {}
    for name, value in headers.items():
        low = name.lower()
        if low in USEFUL_HEADERS or "ratelimit" in low or low.endswith("-request-id"):
            kept[low] = value
    return redact_headers(kept)


# JSON levels of a response body that a record can hold: the record wraps it in 2
# more, and orjson stops encoding at 255
RECORD_BODY_DEPTH = 200


def decode_body(raw: bytes) -> tuple[Any, bool]:
    """(parsed JSON, True), else (the text, False)."""
    if not raw:
        return "", False
    try:
        return orjson.loads(raw), True
    except orjson.JSONDecodeError:
        pass
    try:  # valid JSON orjson cannot hold (1e400, a lone surrogate): still JSON
        return loads_lenient(raw), True
    except ValueError:
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


def _redirect(got: _Got, headers: Mapping[str, str], secrets: list[str]) -> ErrorClass | None:
    """A 3xx is transport code ``redirect``, never followed (a redirect could carry the
    key to another host): its Location is kept in the record, with keys scrubbed."""
    if got.status is None or not 300 <= got.status < 400:
        return None
    location = headers.get("location")
    if location is None:
        return ErrorClass(
            "redirect", f"HTTP {got.status} redirect without a Location", retryable=False
        )
    kept = scrub(redact_url(location), secrets)
    got.headers["location"] = kept
    return ErrorClass(
        "redirect", f"HTTP {got.status} redirect (not followed) to {kept}", retryable=False
    )


def _kept_body(status: int, body: Any, secrets: list[str]) -> Any:
    """A 2xx answer as received: it is judged, and a key that occurs in it must not
    rewrite a call (issue 31 M6); the record scrubs it when written (scrub_record). A
    failure's body is scrubbed at once: its message keeps only the start of a page,
    and could cut an echoed key in half."""
    return body if 200 <= status < 300 or not secrets else scrub(body, secrets)


def _classify(
    adapter: Adapter, status: int, headers: dict[str, str], body: Any
) -> ErrorClass | None:
    try:
        return adapter.classify_error(status, headers, body)
    except Exception as exc:  # an adapter bug must not crash the run loop
        return ErrorClass("malformed_response", f"classify_error failed: {exc!r}", retryable=False)


@dataclass
class Outgoing:
    """The request as sent: the key is in these headers or params, so it is never kept."""

    method: str
    url: str
    headers: dict[str, str]
    params: dict[str, str] | None
    content: bytes


@dataclass
class _Got:
    """What one try brought back."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    is_json: bool = False
    error: ErrorClass | None = None
    stream: StreamTrace | None = None
    ttfb_ms: float | None = None
    too_large: int | None = None  # the cap a body passed (response_too_large)
    deep_text: str | None = None  # the body's text, when it nests past RECORD_BODY_DEPTH


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
    ``secrets``: the other configured keys, scrubbed like ``key`` from what is kept.

    Each try has a wall-clock deadline (``policy.request_s``, and never past the
    budget), so a server trickling a byte a second cannot hold it; the decoded body is
    capped while it is read (``policy.max_response_bytes``). A streamed request
    (``built.stream``) is read event by event (transport_stream)."""
    policy = policy or RetryPolicy()
    secrets = scrubbable([key, *secrets])
    auth_headers, auth_params = adapter.auth(key, settings) if key else ({}, {})
    http = built.http
    headers = {"accept-encoding": ACCEPT_ENCODING, **http.headers, **auth_headers}
    params = {**http.params, **auth_params}
    content = reserialize(http.body).encode()
    request = Outgoing(http.method, http.url, headers, params or None, content)
    start = clock()
    tries: list[Try] = []
    while True:
        began = clock()
        now = asyncio.get_running_loop().time()
        # the retry budget on the exchange's own clock (tests give it virtual time), the
        # attempt's deadline on the loop's
        left = policy.total_budget_s - (began - start)
        if policy.deadline is not None:
            left = min(left, policy.deadline - now)
        deadline = min(policy.request_s, max(0.0, left))
        got = await _one_try(client, adapter, built, request, policy, deadline, secrets, clock)
        latency_ms = (clock() - began) * 1000.0
        error = got.error
        if error is not None and secrets:
            error.message = scrub(error.message, secrets)
        this = Try(
            status=got.status,
            error_code=error.code if error else None,
            elapsed_ms=latency_ms,
            retry_after_s=error.retry_after_s if error else None,
            message=error.message if error else None,
        )
        tries.append(this)
        if error is None or not error.should_retry or len(tries) > policy.max_retries:
            break
        rng = rng or random.Random()  # made here: seeding one costs a syscall a request
        wait = policy.delay(len(tries) - 1, error.retry_after_s, rng)
        if (clock() - start) + wait > policy.total_budget_s:
            break  # the next try could not happen inside the budget: report this failure
        if (
            policy.deadline is not None
            and asyncio.get_running_loop().time() + wait > policy.deadline
        ):
            break  # nor before the attempt's deadline
        this.waited_s = wait
        if got.headers:
            this.headers = scrub(got.headers, secrets)
        await sleep(wait)
    return Exchange(
        status=got.status,
        headers=scrub(got.headers, secrets),
        body=got.body,
        body_is_json=got.is_json,
        tries=tries,
        error=error,
        elapsed_ms=(clock() - start) * 1000.0,
        latency_ms=latency_ms,
        stream=got.stream,
        ttfb_ms=got.ttfb_ms,
        too_large=got.too_large,
        deep_text=got.deep_text,
    )


async def _one_try(
    client: httpx.AsyncClient,
    adapter: Adapter,
    built: BuiltRequest,
    request: Outgoing,
    policy: RetryPolicy,
    deadline_s: float,
    secrets: list[str],
    clock: Callable[[], float],
) -> _Got:
    """One HTTP try within ``deadline_s`` of wall-clock time; never raises for the network."""
    got = _Got()
    began = clock()
    try:
        async with asyncio.timeout(deadline_s):
            response = await send(
                client,
                request.method,
                parsed_url(request.url),
                request.headers,
                request.params,
                request.content,
            )
            try:
                got.ttfb_ms = round((clock() - began) * 1000.0, 1)
                got.status = response.status_code
                all_headers = {k.lower(): v for k, v in response.headers.items()}
                got.headers = useful_headers(all_headers)
                if built.stream and is_event_stream(got.status, all_headers):
                    await read_streamed(
                        got,
                        adapter,
                        response,
                        all_headers,
                        policy.max_response_bytes,
                        policy.stream_idle_s,
                        secrets,
                        clock,
                        began,
                    )
                else:
                    raw = await _read_whole(response, policy.max_response_bytes)
                    body, got.is_json = decode_body(raw)
                    if got.is_json and nests_deeper(body, RECORD_BODY_DEPTH, raw):
                        got.deep_text = scrub(raw.decode("utf-8", "replace"), secrets)
                    got.body = _kept_body(got.status, body, secrets)
                    got.error = _redirect(got, all_headers, secrets) or _classify(
                        adapter, got.status, all_headers, got.body
                    )
                    if built.stream:  # asked to stream, answered whole
                        got.stream = StreamTrace(sse=False)
            finally:
                await response.aclose()
    except TimeoutError:
        got.error = _cut(got, f"no complete answer within {deadline_s:g} s (request deadline)")
    except BodyTooLarge as exc:
        got.body, got.is_json = scrub(exc.head.decode("utf-8", "replace"), secrets), False
        got.too_large = exc.cap
        got.error = ErrorClass(
            "response_too_large",
            f"decoded body larger than {exc.cap} bytes (max_response_bytes); "
            f"its first {len(exc.head)} bytes are kept",
            retryable=False,
        )
    except UnsupportedEncoding as exc:
        got.error = ErrorClass("malformed_response", str(exc), retryable=False)
    except zlib.error as exc:
        got.error = ErrorClass("malformed_response", f"body does not decompress: {exc}")
    except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
        got.error = (
            _network_error(exc)
            if got.stream is None or not got.stream.sse
            else _cut(got, f"{type(exc).__name__}: {exc}")
        )
    if got.error is not None and got.error.code in ("timeout", "connect_error"):
        # no answer: a body cut off or held past the deadline is no response to record
        got.status, got.headers, got.body, got.is_json = None, {}, None, False
    return got


@functools.lru_cache(maxsize=256)
def parsed_url(url: str) -> httpx.URL:
    """``url`` parsed once: a run sends every request to one or two URLs, and httpx
    parses a string URL again for each (a URL object is taken as it is). Invalid ones
    raise httpx.InvalidURL as before, and are not kept."""
    return httpx.URL(url)


def _cut(got: _Got, why: str) -> ErrorClass | None:
    """The error of a try stopped by its deadline or the network: a stream that had
    already ended whole keeps its reading; one cut short is ``stream_interrupted``;
    anything else is a ``timeout``."""
    trace = got.stream
    if trace is None or not trace.sse:
        return ErrorClass("timeout", why)
    if trace.complete:
        return got.error
    return interrupted(trace, why)


async def _read_whole(response: httpx.Response, cap: int) -> bytes:
    """The whole decoded body, never more than ``cap`` bytes of it (``BodyTooLarge``)."""
    if response.is_stream_consumed or response.headers.get("content-encoding"):
        return b"".join([p async for p in body_of(response, cap)])
    parts = []  # unencoded: the raw reads are the body (the common case, kept lean)
    total = 0
    async for chunk in response.aiter_raw():
        total += len(chunk)
        if total > cap:
            parts.append(chunk)
            raise BodyTooLarge(b"".join(parts)[:KEPT_WHEN_TOO_LARGE], cap)
        parts.append(chunk)
    return b"".join(parts)
