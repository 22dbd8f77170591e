"""The streamed read: events kept with their arrival, interrupted and idle streams,
error events after a 200, the decoded-size cap (H1) and the per-try deadline (H2).
HTTP is faked with httpx.MockTransport streaming an async body."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.streams import chat_stream
from toolstand.adapters import get_adapter
from toolstand.adapters.base import RequestSettings
from toolstand.adapters.streaming import streamed
from toolstand.transport import Exchange, RetryPolicy, exchange, make_client
from toolstand.transport_stream import exchange_decision, recorded_answer

STREAMS = Path(__file__).parent.parent / "fixtures" / "streams"
SSE = {"content-type": "text/event-stream; charset=utf-8"}
CHAT_BODY: dict[str, Any] = {
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_order", "arguments": "{\"order_id\": \"ORD-1\"}"}}]}}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7},
}  # fmt: skip


async def chunks(parts: Sequence[bytes], hang: asyncio.Event | None = None) -> AsyncIterator[bytes]:
    for part in parts:
        yield part
        await asyncio.sleep(0)
    if hang is not None:
        await hang.wait()  # never set: the server goes silent


Answer = Callable[[httpx.Request], httpx.Response]


async def run(
    answers: Sequence[Answer], *, api: str = "openai-chat", policy: RetryPolicy | None = None
) -> tuple[Exchange, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[min(len(seen) - 1, len(answers) - 1)](request)

    adapter = get_adapter(api)
    built = adapter.build_request(
        base_url="http://127.0.0.1:9/v1" if api.startswith("openai") else "http://127.0.0.1:9",
        model="m", system=None, messages=[{"role": "user", "content": "hi"}], tools=None,
        settings=RequestSettings(),
    )  # fmt: skip
    built = streamed(api, built)

    async def no_sleep(_: float) -> None:
        return None

    policy = policy or RetryPolicy(jitter=0.0, base_delay_s=0.0)
    async with make_client(transport=httpx.MockTransport(handler)) as client:
        ex = await exchange(
            client, adapter, built, "sk-test-key-123456", RequestSettings(), policy, sleep=no_sleep
        )
    return ex, seen


def answer_with(status: int = 200, **kw: object) -> Answer:
    """An answer built anew for each request (an async body can be read once)."""

    def answer(_req: httpx.Request) -> httpx.Response:
        made = {k: v() if callable(v) else v for k, v in kw.items()}
        return httpx.Response(status, **made)  # type: ignore[arg-type]

    return answer


def sse_answer(raw: bytes, *, cut: int = 7, hang: asyncio.Event | None = None) -> Answer:
    parts = [raw[i : i + cut] for i in range(0, len(raw), cut)]
    return lambda _req: httpx.Response(200, headers=SSE, content=chunks(parts, hang))


async def test_a_streamed_call_is_read_recorded_and_decided() -> None:
    raw = chat_stream(CHAT_BODY, (4,)).encode()
    ex, seen = await run([sse_answer(raw)])
    body = json.loads(seen[0].content)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert ex.error is None
    decision = exchange_decision(get_adapter("openai-chat"), ex.body, ex.stream)
    assert [(c.name, c.arguments, c.call_id) for c in decision.calls] == [
        ("get_order", {"order_id": "ORD-1"}, "call_1")
    ]
    rec = ex.response_record()
    assert rec["body"].encode() == raw  # byte for byte, not re-serialized
    stream = rec["stream"]
    assert stream["complete"] is True
    assert stream["events"] == len(stream["event_ms"]) == raw.count(b"\n\n")
    assert stream["first_call_ms"] is not None and stream["first_token_ms"] is not None
    assert stream["event_ms"] == sorted(stream["event_ms"])
    # rejudge reads the recorded body back to the same decision
    err, again = recorded_answer(get_adapter("openai-chat"), {**rec, "status": 200})
    assert err is None and again == decision


async def test_a_stream_cut_before_done_is_interrupted_retried_and_kept() -> None:
    raw = chat_stream(CHAT_BODY, (4,), done=False).encode()
    cut = raw[: len(raw) // 2]
    ex, seen = await run(
        [sse_answer(cut), sse_answer(raw)],
        policy=RetryPolicy(max_retries=1, jitter=0.0, base_delay_s=0.0),
    )
    assert len(seen) == 2
    assert [t.error_code for t in ex.tries] == ["stream_interrupted", "stream_interrupted"]
    assert ex.error is not None and ex.error.code == "stream_interrupted"
    assert "before data: [DONE]" in ex.error.message
    rec = ex.response_record()
    assert rec["body"].encode() == raw and rec["stream"]["complete"] is False


async def test_an_idle_stream_is_interrupted_with_what_arrived() -> None:
    raw = chat_stream(CHAT_BODY, (4,)).encode()
    head = raw[: raw.index(b"\n\n") + 2]
    never = asyncio.Event()
    policy = RetryPolicy(max_retries=0, stream_idle_s=0.05)
    ex, _ = await run([sse_answer(head, hang=never)], policy=policy)
    assert ex.error is not None and ex.error.code == "stream_interrupted"
    assert "idle" in ex.error.message
    rec = ex.response_record()
    assert rec["body"].encode() == head and rec["stream"]["events"] == 1
    assert rec["stream"]["idle"] is True


async def test_anthropic_overloaded_error_event_after_200_is_overloaded_and_retried() -> None:
    overloaded = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","content":[]}}\n\n'
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    )
    good = (STREAMS / "anthropic-tool-call.sse").read_bytes()
    policy = RetryPolicy(max_retries=2, jitter=0.0, base_delay_s=0.0)
    ex, seen = await run([sse_answer(overloaded), sse_answer(good)], api="anthropic", policy=policy)
    assert [t.error_code for t in ex.tries] == ["overloaded", None]
    assert ex.error is None and len(seen) == 2


async def test_a_refusal_before_the_stream_is_classified_as_json() -> None:
    answer: Answer = lambda _r: httpx.Response(  # noqa: E731
        400, json={"error": {"message": "bad temperature", "type": "invalid_request_error"}}
    )
    ex, _ = await run([answer])
    assert ex.error is not None and ex.error.code == "bad_request"
    assert "bad temperature" in ex.error.message
    assert ex.response_record()["body"]["error"]["message"] == "bad temperature"


async def test_a_streamed_request_answered_whole_is_read_as_json() -> None:
    answer: Answer = lambda _r: httpx.Response(200, json=CHAT_BODY)  # noqa: E731
    ex, _ = await run([answer])
    assert ex.error is None
    assert ex.response_record()["stream"] == {"sse": False}
    assert (
        exchange_decision(get_adapter("openai-chat"), ex.body, ex.stream).calls[0].name
        == "get_order"
    )


async def test_an_echoed_key_is_scrubbed_from_the_recorded_stream() -> None:
    echoed = {**CHAT_BODY, "choices": [{**CHAT_BODY["choices"][0], "message": {
        "role": "assistant", "content": "your key is sk-test-key-123456"}, "finish_reason": "stop"}]}  # fmt: skip
    ex, _ = await run([sse_answer(chat_stream(echoed, (50,)).encode())])
    rec = ex.response_record()
    assert "sk-test-key-123456" not in rec["body"]
    # the answer is read as received (issue 31 M6); attempt.record scrubs what is written
    assert "sk-test-key-123456" in json.dumps(ex.body)


# --- H1: the decoded body is capped while it is read -------------------------------


def gzip_bomb(decoded_mb: int) -> bytes:
    return gzip.compress(b"\0" * (decoded_mb * 1024 * 1024), compresslevel=9)


@pytest.mark.parametrize("streamed_answer", [False, True])
async def test_a_gzip_bomb_stops_at_the_cap_with_its_first_64_kb(streamed_answer: bool) -> None:
    bomb = gzip_bomb(64)  # 64 MB decoded, ~65 KB on the wire
    headers = {
        "content-encoding": "gzip",
        **(SSE if streamed_answer else {"content-type": "application/json"}),
    }
    parts = [bomb[i : i + 16384] for i in range(0, len(bomb), 16384)]
    answer: Answer = lambda _r: httpx.Response(200, headers=headers, content=chunks(parts))  # noqa: E731
    ex, seen = await run(
        [answer], policy=RetryPolicy(max_retries=3, max_response_bytes=1024 * 1024)
    )
    assert ex.error is not None and ex.error.code == "response_too_large"
    assert len(seen) == 1  # never retried
    assert "1048576" in ex.error.message
    rec = ex.response_record()
    kept = rec["body"]
    assert len(kept) <= 64 * 1024 + 16 and set(kept) <= {"\0"}


async def test_a_plain_body_over_the_cap_is_too_large() -> None:
    big = b'{"pad": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    parts = [big[i : i + 65536] for i in range(0, len(big), 65536)]
    answer = answer_with(
        headers={"content-type": "application/json"}, content=lambda: chunks(parts)
    )
    ex, _ = await run(
        [answer], policy=RetryPolicy(max_retries=0, max_response_bytes=2 * 1024 * 1024)
    )
    assert ex.error is not None and ex.error.code == "response_too_large"
    assert ex.response_record()["body"].startswith('{"pad": "xxx')


async def test_a_body_under_the_cap_is_decoded_whole() -> None:
    body = json.dumps(CHAT_BODY).encode()
    answer: Answer = lambda _r: httpx.Response(  # noqa: E731
        200,
        headers={"content-type": "application/json", "content-encoding": "gzip"},
        content=chunks([gzip.compress(body)]),
    )
    ex, seen = await run([answer])
    assert ex.error is None and ex.body == CHAT_BODY
    assert seen[0].headers["accept-encoding"] == "gzip, deflate"


# --- H2: a wall-clock deadline per try, inside the budget ----------------------------


async def trickle(payload: bytes) -> AsyncIterator[bytes]:
    for i in range(len(payload)):
        yield payload[i : i + 1]
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("streamed_answer", [False, True])
async def test_a_trickling_server_cannot_hold_a_try_past_its_deadline(
    streamed_answer: bool,
) -> None:
    payload = json.dumps(CHAT_BODY).encode() * 100  # ~50 s at one byte per 20 ms
    headers = SSE if streamed_answer else {"content-type": "application/json"}
    answer: Answer = lambda _r: httpx.Response(200, headers=headers, content=trickle(payload))  # noqa: E731
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    ex, _ = await run([answer], policy=RetryPolicy(max_retries=0, request_s=0.3))
    assert loop.time() - t0 < 5.0
    assert ex.error is not None
    assert ex.error.code == ("stream_interrupted" if streamed_answer else "timeout")
    assert "0.3 s" in ex.error.message


async def test_the_budget_bounds_every_try_together() -> None:
    payload = json.dumps(CHAT_BODY).encode() * 100
    answer: Answer = lambda _r: httpx.Response(200, json=None, content=trickle(payload))  # noqa: E731
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    policy = RetryPolicy(
        max_retries=5, base_delay_s=0.0, jitter=0.0, request_s=100.0, total_budget_s=0.4
    )
    ex, _ = await run([answer], policy=policy)
    assert loop.time() - t0 < 5.0
    assert ex.error is not None and ex.error.code == "timeout"


async def test_keepalives_restart_the_idle_timer() -> None:
    raw = chat_stream(CHAT_BODY, (4,)).encode()

    async def slow_with_pings() -> AsyncIterator[bytes]:
        for _ in range(4):  # 0.4 s of pings, each inside the 0.25 s idle limit
            yield b": keep-alive\n\n"
            await asyncio.sleep(0.1)
        yield raw

    answer = answer_with(headers=SSE, content=slow_with_pings)
    ex, _ = await run([answer], policy=RetryPolicy(max_retries=0, stream_idle_s=0.25))
    assert ex.error is None and ex.stream is not None and ex.stream.complete


async def test_the_attempt_deadline_bounds_a_try_inside_a_large_budget() -> None:
    from toolstand.attempt.plan import attempt_policy

    payload = json.dumps(CHAT_BODY).encode() * 100
    answer = answer_with(
        headers={"content-type": "application/json"}, content=lambda: trickle(payload)
    )
    policy = attempt_policy(RetryPolicy(max_retries=3, request_s=100.0, total_budget_s=100.0), 0.3)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    ex, _ = await run([answer], policy=policy)
    assert loop.time() - t0 < 5.0
    assert ex.error is not None and ex.error.code == "timeout"


async def test_a_plain_stream_over_the_cap_keeps_only_its_first_64_kb() -> None:
    event = b"data: " + json.dumps({"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"content": "x" * 4000}}]}).encode() + b"\n\n"  # fmt: skip
    answer = answer_with(headers=SSE, content=lambda: chunks([event] * 600))  # ~2.4 MB
    ex, _ = await run([answer], policy=RetryPolicy(max_retries=0, max_response_bytes=1024 * 1024))
    assert ex.error is not None and ex.error.code == "response_too_large"
    rec = ex.response_record()
    assert len(rec["body"]) == 64 * 1024 and rec["too_large"] == 1024 * 1024
