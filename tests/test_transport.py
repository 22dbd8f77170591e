"""The transport (retries, timing, classification of network failures) and redaction.

All HTTP is faked with httpx.MockTransport; time is a fake clock advanced only by the
fake sleep (and by a simulated latency per try), so no test really waits.
"""

from __future__ import annotations

import dataclasses
import random
import ssl
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from toolstand import transport_client
from toolstand.adapters import get_adapter
from toolstand.adapters.base import BuiltRequest, HttpRequest, RequestSettings
from toolstand.spec.config import RunSpec
from toolstand.transport import (
    Exchange,
    RetryPolicy,
    decode_body,
    exchange,
    make_client,
    request_hash,
    sanitize_request,
    useful_headers,
)
from toolstand.util.redact import (
    REDACTED,
    SECRET_HEADERS,
    redact_headers,
    redact_url,
    scrub,
    scrub_record,
)

BODIES = Path(__file__).resolve().parent / "fixtures" / "bodies"
KEY = "sk-PLANTED-123"
LATENCY = 0.01


def fixture(api: str, name: str) -> bytes:
    return (BODIES / api / f"{name}.json").read_bytes()


OK = fixture("openai-chat", "b_tool_call")


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


Step = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def scripted(
    steps: Sequence[Step], time: FakeTime, seen: list[httpx.Request]
) -> httpx.MockTransport:
    """Answer each request with the next step; the last step repeats."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        time.now += LATENCY
        step = steps[min(len(seen) - 1, len(steps) - 1)]
        if isinstance(step, Exception):
            raise step
        return step(request) if callable(step) else step

    return httpx.MockTransport(handler)


def json_response(status: int, content: bytes = OK, **headers: str) -> httpx.Response:
    named = {k.replace("_", "-"): v for k, v in headers.items()}
    return httpx.Response(
        status, content=content, headers={"content-type": "application/json", **named}
    )


async def run(
    steps: Sequence[Step],
    *,
    api: str = "openai-chat",
    policy: RetryPolicy | None = None,
    key: str | None = KEY,
    built: BuiltRequest | None = None,
    seen: list[httpx.Request] | None = None,
) -> tuple[Exchange, FakeTime]:
    time = FakeTime()
    seen = [] if seen is None else seen
    adapter = get_adapter(api)
    if built is None:
        built = adapter.build_request(
            base_url="https://api.example.test/v1",
            model="m",
            system="s",
            messages=[{"role": "user", "content": "hi"}],
            tools=None,
            settings=RequestSettings(),
        )
    policy = policy or RetryPolicy(jitter=0.0)
    async with make_client(transport=scripted(steps, time, seen)) as client:
        ex = await exchange(
            client, adapter, built, key, RequestSettings(), policy,
            sleep=time.sleep, clock=time.clock, rng=random.Random(7),
        )  # fmt: skip
    return ex, time


async def test_success_on_the_first_try() -> None:
    seen: list[httpx.Request] = []
    ex, time = await run([json_response(200, x_request_id="req-1")], seen=seen)
    assert (ex.status, ex.error, ex.body_is_json, ex.retries) == (200, None, True, 0)
    assert ex.body == orjson.loads(OK)
    assert ex.headers == {"content-type": "application/json", "x-request-id": "req-1"}
    assert [t.to_dict() for t in ex.tries] == [
        {"status": 200, "error_code": None, "elapsed_ms": pytest.approx(10.0), "retry_after_s": None,
         "waited_s": None, "message": None}
    ]  # fmt: skip
    assert ex.latency_ms == pytest.approx(10.0) and ex.elapsed_ms == pytest.approx(10.0)
    assert time.sleeps == []
    # the key went out on the wire, in the header the adapter chose
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert orjson.loads(seen[0].content)["model"] == "m"


async def test_retry_after_ms_is_honoured_before_retry_after() -> None:
    ex, time = await run(
        [json_response(429, retry_after_ms="1500", retry_after="7"), json_response(200)]
    )
    assert time.sleeps == [1.5]
    assert ex.status == 200 and ex.error is None and ex.retries == 1
    first = ex.tries[0]
    assert (first.status, first.error_code, first.retry_after_s, first.waited_s) == (
        429,
        "rate_limited",
        1.5,
        1.5,
    )
    assert ex.elapsed_ms == pytest.approx(1500 + 2 * 10.0)
    assert ex.latency_ms == pytest.approx(10.0)


async def test_retry_after_is_never_undercut_even_with_jitter() -> None:
    policy = RetryPolicy(jitter=0.5, base_delay_s=0.5)
    ex, time = await run(
        [json_response(429, retry_after="3")] * 3 + [json_response(200)], policy=policy
    )
    assert ex.error is None
    # backoff would be 0.5, 1, 2 (shortened by jitter): the server's 3 s wins each time
    assert time.sleeps == [3.0, 3.0, 3.0]


async def test_retry_after_http_date() -> None:
    when = datetime.now(UTC) + timedelta(seconds=10)
    ex, time = await run(
        [json_response(503, retry_after=format_datetime(when, usegmt=True)), json_response(200)]
    )
    assert ex.error is None and len(time.sleeps) == 1
    assert 8.5 <= time.sleeps[0] <= 10.0


async def test_exponential_backoff_capped() -> None:
    policy = RetryPolicy(max_retries=4, base_delay_s=0.5, max_delay_s=1.5, jitter=0.0)
    ex, time = await run(
        [json_response(500, b'{"error": {"message": "boom"}}')] * 4 + [json_response(200)],
        policy=policy,
    )
    assert time.sleeps == [0.5, 1.0, 1.5, 1.5]
    assert ex.error is None and ex.retries == 4
    assert [t.error_code for t in ex.tries] == ["server_error"] * 4 + [None]


async def test_jitter_only_shortens_within_its_fraction() -> None:
    policy = RetryPolicy(max_retries=3, base_delay_s=1.0, jitter=0.25)
    _, time = await run([json_response(500)] * 3 + [json_response(200)], policy=policy)
    for wait, full in zip(time.sleeps, [1.0, 2.0, 4.0], strict=True):
        assert full * 0.75 <= wait <= full
    assert len(set(time.sleeps)) == 3


async def test_max_retries_then_the_failure_is_returned() -> None:
    body = fixture("anthropic", "error_529")
    ex, time = await run(
        [json_response(529, body)], api="anthropic", policy=RetryPolicy(max_retries=2, jitter=0.0)
    )
    assert len(ex.tries) == 3 and time.sleeps == [0.5, 1.0]
    assert ex.error is not None and (ex.error.code, ex.error.message) == (
        "overloaded",
        "Overloaded",
    )
    assert ex.status == 529 and ex.body == orjson.loads(body)
    assert ex.tries[-1].waited_s is None
    assert ex.transport_error_record() == {
        "code": "overloaded",
        "message": "Overloaded",
        "status": 529,
    }


async def test_total_budget_stops_before_a_wait_that_would_exceed_it() -> None:
    policy = RetryPolicy(max_retries=10, total_budget_s=120.0, jitter=0.0)
    ex, time = await run([json_response(429, retry_after="50")], policy=policy)
    # t=0 try, wait 50, try, wait 50, try; another 50 s would end past 120 s
    assert time.sleeps == [50.0, 50.0]
    assert len(ex.tries) == 3 and ex.error is not None and ex.error.code == "rate_limited"
    assert [t.waited_s for t in ex.tries] == [50.0, 50.0, None]
    assert ex.elapsed_ms == pytest.approx(100_000 + 3 * 10.0)


async def test_gemini_retry_info_in_the_body_sets_the_wait() -> None:
    ok = fixture("gemini", "b_tool_call")
    ex, time = await run(
        [json_response(429, fixture("gemini", "error_429_retry_info")), json_response(200, ok)],
        api="gemini",
    )
    assert time.sleeps == [1.5] and ex.error is None and ex.tries[0].retry_after_s == 1.5


@pytest.mark.parametrize(
    ("status", "content", "code"),
    [
        (400, fixture("openai-chat", "error_400"), "bad_request"),
        (401, fixture("openai-chat", "error_401"), "auth_error"),
        (429, fixture("openai-chat", "error_429_insufficient_quota"), "rate_limited"),
        (200, b"<html>not json</html>", "malformed_response"),
    ],
)
async def test_not_retried(status: int, content: bytes, code: str) -> None:
    ex, time = await run([json_response(status, content), json_response(200)])
    assert ex.error is not None and ex.error.code == code
    assert len(ex.tries) == 1 and time.sleeps == []


async def test_html_502_is_kept_as_text() -> None:
    html = (BODIES / "error_502.html").read_text()
    page = httpx.Response(502, text=html, headers={"content-type": "text/html"})
    ex, _ = await run([page], policy=RetryPolicy(max_retries=1, jitter=0.0))
    assert (ex.status, ex.body, ex.body_is_json) == (502, html, False)
    assert ex.error is not None and ex.error.code == "server_error"
    assert [t.error_code for t in ex.tries] == ["server_error", "server_error"]


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (httpx.ReadTimeout("read timed out"), "timeout"),
        (httpx.ConnectTimeout("connect timed out"), "timeout"),
        (httpx.ConnectError("connection refused"), "connect_error"),
        (httpx.ReadError("connection reset by peer"), "connect_error"),
        (
            httpx.RemoteProtocolError("server disconnected without sending a response"),
            "connect_error",
        ),
    ],
)
async def test_network_failures_are_classified_and_retried(exc: Exception, code: str) -> None:
    ex, time = await run([exc, json_response(200)])
    assert ex.error is None and ex.status == 200
    first = ex.tries[0]
    assert (first.status, first.error_code) == (None, code)
    assert first.message is not None and str(exc) in first.message
    assert time.sleeps == [0.5]


async def test_network_failure_on_every_try_never_raises() -> None:
    ex, _ = await run([httpx.ReadTimeout("slow")], policy=RetryPolicy(max_retries=2, jitter=0.0))
    assert (ex.status, ex.body, ex.body_is_json, ex.headers) == (None, None, False, {})
    assert ex.error is not None and ex.error.code == "timeout" and len(ex.tries) == 3
    assert ex.response_record() == {
        "status": None,
        "headers": {},
        "body": None,
        "body_is_json": False,
    }


class TornStream(httpx.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess'
        raise httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body"
        )


async def test_a_body_torn_mid_transfer_is_a_connect_error_and_retried() -> None:
    torn = httpx.Response(200, headers={"content-type": "application/json"}, stream=TornStream())
    ex, _ = await run([torn, json_response(200)])
    assert [t.error_code for t in ex.tries] == ["connect_error", None]
    assert ex.error is None


async def test_a_truncated_but_complete_2xx_body_is_malformed_and_kept() -> None:
    ex, _ = await run([json_response(200, OK[:40])])
    assert ex.error is not None and ex.error.code == "malformed_response"
    assert (ex.body, ex.body_is_json, len(ex.tries)) == (OK[:40].decode(), False, 1)


@pytest.mark.parametrize(
    ("url", "step"),
    [
        ("http://[::1/x", json_response(200)),  # httpx.InvalidURL, raised before sending
        (
            "ftp://example.test/x",
            httpx.UnsupportedProtocol("Request URL has an unsupported protocol"),
        ),
    ],
)
async def test_unusable_url_is_a_connect_error_not_an_exception(url: str, step: Step) -> None:
    built = BuiltRequest(HttpRequest("POST", url, {}, {"a": 1}))
    ex, time = await run([step, json_response(200)], built=built)
    assert ex.error is not None and ex.error.code == "connect_error"
    assert ex.error.should_retry is False and len(ex.tries) == 1 and time.sleeps == []


async def test_no_key_sends_no_auth() -> None:
    seen: list[httpx.Request] = []
    await run([json_response(200)], key=None, seen=seen)
    assert not SECRET_HEADERS & {k.lower() for k in seen[0].headers}


async def test_the_planted_key_never_reaches_the_exchange() -> None:
    def echo(request: httpx.Request) -> httpx.Response:
        # a hostile or careless server echoing the key everywhere it can
        body = {
            "error": {
                "message": f"Incorrect API key provided: {KEY}",
                "echo": dict(request.headers),
            }
        }
        headers = {"x-request-id": KEY, "set-cookie": f"k={KEY}", "x-echo-auth": KEY}
        return httpx.Response(401, content=orjson.dumps(body), headers=headers)

    for api in ("openai-chat", "openai-responses", "anthropic", "gemini"):
        seen: list[httpx.Request] = []
        ex, _ = await run([echo], api=api, seen=seen)
        assert KEY in " ".join(seen[0].headers.values())  # it was sent ...
        dumped = orjson.dumps(dataclasses.asdict(ex)).decode()
        assert KEY not in dumped  # ... and is nowhere in what we keep
        assert REDACTED in dumped
        assert (
            ex.error is not None and ex.error.message == f"Incorrect API key provided: {REDACTED}"
        )


def test_sanitize_request_drops_auth_headers_and_key_params() -> None:
    http = HttpRequest(
        "POST",
        f"https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?key={KEY}&alt=json",
        {
            "Authorization": f"Bearer {KEY}",
            "x-api-key": KEY,
            "X-Goog-Api-Key": KEY,
            "api-key": KEY,
            "content-type": "application/json",
            "anthropic-version": "2023-06-01",
        },
        {"contents": []},
        params={"key": KEY, "trace": "1"},
    )
    out = sanitize_request(http)
    assert out == {
        "method": "POST",
        "url": "https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?alt=json&trace=1",
        "headers": {"content-type": "application/json", "anthropic-version": "2023-06-01"},
        "body": {"contents": []},
    }
    assert KEY not in str(out)
    built = get_adapter("anthropic").build_request(
        base_url="https://api.anthropic.com", model="m", system=None,
        messages=[{"role": "user", "content": KEY}], tools=None, settings=RequestSettings(),
    )  # fmt: skip
    assert KEY not in str(sanitize_request(built.http, secrets=[KEY]))


def test_request_hash_is_canonical() -> None:
    assert request_hash({"a": 1, "b": [1, 2]}) == request_hash({"b": [1, 2], "a": 1})
    assert request_hash({"a": 1}) != request_hash({"a": 1.5})
    assert len(request_hash({})) == 64


def test_make_client_timeouts() -> None:
    client = make_client(connect_timeout=3, read_timeout=45, max_connections=4)
    assert (client.timeout.connect, client.timeout.read, client.timeout.pool) == (3, 45, None)


async def test_a_plain_http_client_loads_no_ca_bundle_and_never_speaks_https(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(307, headers={"location": "https://a.test/v1/chat"})

    def no_bundle() -> None:
        raise AssertionError("the CA bundle was loaded")

    monkeypatch.setattr(transport_client, "tls_context", no_bundle)
    async with make_client(transport=httpx.MockTransport(handler), plain_http=True) as client:
        # the redirect to https is an answer to record, not followed
        response = await client.post("http://a.test/v1/chat", content=b"{}")
        assert response.status_code == 307 and seen == ["http://a.test/v1/chat"]
        with pytest.raises(httpx.UnsupportedProtocol, match="plain-http base URLs only"):
            await client.post("https://a.test/v1/chat", content=b"{}")
    assert seen == ["http://a.test/v1/chat"]
    monkeypatch.undo()
    # an https base URL gets the verifying context
    verifying = make_client()
    pool = verifying._transport._pool  # type: ignore[attr-defined]
    assert pool._ssl_context.verify_mode == ssl.CERT_REQUIRED
    await verifying.aclose()


def test_plain_http_is_read_from_the_base_url() -> None:
    spec = {"provider": "p", "model": "m", "base_url": "HTTP://localhost:11434/v1"}
    assert RunSpec.model_validate(spec).plain_http is True
    assert RunSpec.model_validate({**spec, "base_url": "https://x.test"}).plain_http is False
    assert RunSpec.model_validate({**spec, "base_url": "sim"}).plain_http is False


def test_decode_body() -> None:
    assert decode_body(b'{"a": [1]}') == ({"a": [1]}, True)
    assert decode_body(b"") == ("", False)
    assert decode_body(b"<html>") == ("<html>", False)
    assert decode_body(b"\xff{") == ("\ufffd{", False)


def test_useful_headers_allow_list() -> None:
    headers = {
        "Content-Type": "application/json",
        "x-request-id": "r1",
        "request-id": "r2",
        "x-goog-request-id": "r3",
        "retry-after": "1",
        "retry-after-ms": "1000",
        "x-ratelimit-remaining-tokens": "10",
        "anthropic-ratelimit-requests-remaining": "5",
        "set-cookie": "s=1",
        "server": "nginx",
        "date": "today",
    }
    assert set(useful_headers(headers)) == {
        "content-type",
        "x-request-id",
        "request-id",
        "x-goog-request-id",
        "retry-after",
        "retry-after-ms",
        "x-ratelimit-remaining-tokens",
        "anthropic-ratelimit-requests-remaining",
    }


def test_redact_headers_and_url() -> None:
    assert redact_headers({"AUTHORIZATION": "x", "Cookie": "c", "Accept": "a"}) == {"Accept": "a"}
    assert redact_headers(None) == {}
    assert redact_url("https://h/p?key=abc&alt=json") == "https://h/p?alt=json"
    assert redact_url("https://h/p?KEY=abc") == "https://h/p"
    assert redact_url("https://h/p") == "https://h/p"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:pw@h:1/v1?key=k", f"http://{REDACTED}@h:1/v1"),
        ("http://pw-only@h/v1", f"http://{REDACTED}@h/v1"),
        ("https://a:b@c@h", f"https://{REDACTED}@h"),  # userinfo runs to the last @
        ("https://h/v1/me@example.com", "https://h/v1/me@example.com"),  # a path, no userinfo
        ("https://h/p?to=me@example.com", "https://h/p?to=me%40example.com"),
        ("http://u:pw@[::1", f"http://{REDACTED}@[::1"),  # does not parse, still redacted
        ("http://[::1/p?key=k", "http://[::1/p"),
        ("user@host", "user@host"),
    ],
)
def test_redact_url_removes_userinfo(url: str, shown: str) -> None:
    assert redact_url(url) == shown


async def test_a_client_keeps_no_cookies() -> None:
    """A Set-Cookie must never come back: not to its server, not to another."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"set-cookie": f"session={KEY}; Path=/"})

    async with make_client(transport=httpx.MockTransport(handler)) as client:
        for url in ("http://a.test/v1", "http://a.test/v1", "http://b.test/v1"):
            await client.post(url, content=b"{}")
        assert len(client.cookies) == 0
    assert [r.headers.get("cookie") for r in seen] == [None, None, None]
    async with make_client(transport=httpx.MockTransport(handler), loopback_only=True) as c:
        await c.post("http://127.0.0.1:9/v1", content=b"{}")
        await c.post("http://127.0.0.1:9/v1", content=b"{}")
    assert seen[-1].headers.get("cookie") is None


async def test_every_configured_key_is_scrubbed_from_the_exchange() -> None:
    other = "sk-OTHER-PROVIDER-0123456789"

    def echo(request: httpx.Request) -> httpx.Response:
        body = {"error": {"message": f"bad key {other}; yours is {KEY}"}}
        return httpx.Response(401, content=orjson.dumps(body), headers={"x-request-id": other})

    time = FakeTime()
    adapter = get_adapter("openai-chat")
    built = adapter.build_request(
        base_url="https://api.example.test/v1", model="m", system=None,
        messages=[{"role": "user", "content": "hi"}], tools=None, settings=RequestSettings(),
    )  # fmt: skip
    async with make_client(transport=scripted([echo], time, [])) as client:
        ex = await exchange(
            client, adapter, built, KEY, RequestSettings(), RetryPolicy(jitter=0.0),
            sleep=time.sleep, clock=time.clock, secrets=[other, "short"],
        )  # fmt: skip
    dumped = orjson.dumps(dataclasses.asdict(ex)).decode()
    assert other not in dumped and KEY not in dumped
    assert ex.error is not None
    assert ex.error.message == f"bad key {REDACTED}; yours is {REDACTED}"
    assert ex.headers == {"x-request-id": REDACTED}


def test_scrub_replaces_secrets_in_values_and_keys_at_any_depth() -> None:
    # what scrub is given came from a provider: a model can echo a key as a property
    value: Any = {"a": [f"x{KEY}y", ("t", KEY)], KEY: 1, "n": {f"k{KEY}": 5}, "none": None}
    assert scrub(value, [KEY, ""]) == {
        "a": [f"x{REDACTED}y", ("t", REDACTED)],
        REDACTED: 1,
        "n": {f"k{REDACTED}": 5},
        "none": None,
    }
    assert scrub("abc", []) == "abc"
    assert scrub("abc", [""]) == "abc"


def test_a_key_shorter_than_8_characters_is_not_scrubbed_from_text() -> None:
    value = {"provider": "ollama", "type": "text", "note": "ollama says hi"}
    assert scrub(value, ["ollama", "t", "1234567"]) is value
    assert scrub(value, ["ollama says"]) == {
        "provider": "ollama",
        "type": "text",
        "note": f"{REDACTED} hi",
    }


def test_a_record_keeps_its_own_keys_and_scrubs_the_providers() -> None:
    # the stand's own keys stay whatever the secret; a provider's object keys do not
    secret = "arguments-of-the-stand"
    rec: dict[str, Any] = {
        "case_id": secret,
        "decision": {"calls": [{"name": "x", "arguments": {secret: 1, "a": secret}}]},
        "response": {"status": 200, "body": {"error": {secret: "echo"}}},
        "judgement": {"errors": [{"code": "c", "received": {secret: 2}}]},
    }
    out = scrub_record(rec, [secret])
    assert out["case_id"] == secret  # not a travelled field
    assert out["decision"]["calls"][0]["arguments"] == {REDACTED: 1, "a": REDACTED}
    assert out["response"]["body"] == {"error": {REDACTED: "echo"}}
    assert out["judgement"]["errors"][0]["received"] == {REDACTED: 2}
    assert set(out["decision"]["calls"][0]) == {"name", "arguments"}
