"""A whole run with ``stream: "both"`` against a provider of our own on 127.0.0.1: one
attempt per arm, the stream kept whole and compact, resume by arm, rejudge re-reads it."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.streams import chat_stream, server
from toolstand.run.rejudge import rejudge_file
from toolstand.run.runner import load_inputs, plan, run
from toolstand.spec.config import parse_config

ROOT = Path(__file__).resolve().parent.parent.parent
KEY_ENV = "TS_STREAM_TEST_KEY"
ANSWER = {
    "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_order", "arguments": '{"order_id": "ORD-123456"}'}}]}}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7},
}  # fmt: skip


async def provider(writer: asyncio.StreamWriter, body: bytes) -> None:
    request = json.loads(body)
    if request.get("stream"):
        # token chunking: ~100 events for one call
        payload = chat_stream(ANSWER, (1,)).encode()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"transfer-encoding: chunked\r\n\r\n")  # fmt: skip
        for i in range(0, len(payload), 97):
            piece = payload[i : i + 97]
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
    else:
        data = json.dumps(ANSWER).encode()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                     + f"content-length: {len(data)}\r\n\r\n".encode() + data)  # fmt: skip
    await writer.drain()


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def test_stream_both_runs_each_attempt_once_per_arm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-stream-test-0123456789")
    out = tmp_path / "run.jsonl"

    async def go() -> tuple[int, int]:
        async with server(provider) as url:
            config = parse_config(orjson.dumps({
                "runs": [{"provider": "local", "model": "m", "api": "openai-chat", "base_url": url,
                          "api_key_env": KEY_ENV}],
                "system_prompt": "prompts/delivery-router-v1.txt",
                "tools": "contracts/delivery_tools.json", "cases": "cases/delivery.jsonl",
                "repetitions": 2, "stream": "both",
                "retry": {"max_retries": 0, "total_budget_s": 10},
            }), "cfg", ROOT)  # fmt: skip
            inputs = load_inputs(config, "cfg")
            items = plan(inputs, {"direct_lookup"})
            first = await run(inputs, out, only={"direct_lookup"}, progress_out=None)
            again = await run(inputs, out, only={"direct_lookup"}, progress_out=None, resume=True)
            return len(items), first.written + again.written

    planned, written = asyncio.run(go())
    assert planned == written == 4  # resume added nothing: the arm is in the key
    recs = lines(out)
    header, attempts = recs[0], [r for r in recs if r["type"] == "attempt"]
    assert header["settings"]["stream"] == "both"
    assert sorted((a["stream"], a["attempt"]) for a in attempts) == [
        (False, 1),
        (False, 2),
        (True, 1),
        (True, 2),
    ]
    for a in attempts:
        assert a["transport_error"] is None and a["judgement"]["verdict"] == "pass", a
        assert a["ttfb_ms"] is not None
    streamed = [a for a in attempts if a["stream"]]
    plain = [a for a in attempts if not a["stream"]]
    assert all(a["first_token_ms"] is None and "stream" not in a["response"] for a in plain)
    for a in streamed:
        assert a["request"]["body"]["stream"] is True
        stream = a["response"]["stream"]
        raw = a["response"]["body"].encode()
        assert raw == chat_stream(ANSWER, (1,)).encode()
        assert stream["complete"] and stream["events"] == len(stream["event_ms"]) > 30
        assert a["first_call_ms"] is not None and a["first_token_ms"] is not None
        assert a["decision"] == plain[0]["decision"]  # the judge cannot tell the arms apart
    # compact: the streamed line is well under 10x the stream it holds
    streamed_line = max(len(x) for x in out.read_bytes().splitlines() if b'"stream":true' in x)
    assert streamed_line < 3 * len(streamed[0]["response"]["body"].encode())

    rejudged = tmp_path / "re.jsonl"
    changes = rejudge_file(out, rejudged)
    assert changes == []
    again = [r for r in lines(rejudged) if r["type"] == "attempt" and r["stream"]]
    assert [r["decision"] for r in again] == [a["decision"] for a in streamed]


def test_the_report_keeps_the_arms_apart_with_first_token_and_first_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolstand.reporting.commands import cmd_report

    monkeypatch.setenv(KEY_ENV, "sk-stream-test-0123456789")
    out = tmp_path / "run.jsonl"

    async def go() -> None:
        async with server(provider) as url:
            config = parse_config(orjson.dumps({
                "runs": [{"provider": "local", "model": "m", "api": "openai-chat", "base_url": url,
                          "api_key_env": KEY_ENV}],
                "system_prompt": "prompts/delivery-router-v1.txt",
                "tools": "contracts/delivery_tools.json", "cases": "cases/delivery.jsonl",
                "repetitions": 3, "stream": "both", "retry": {"max_retries": 0, "total_budget_s": 10},
            }), "cfg", ROOT)  # fmt: skip
            await run(load_inputs(config, "cfg"), out, only={"direct_lookup"}, progress_out=None)

    asyncio.run(go())
    text = io.StringIO()
    assert cmd_report([str(out)], True, None, None, out=text) == 0
    data = json.loads(text.getvalue())
    entries = sorted(data["results"], key=lambda e: e["stream"])
    # each arm is its own entry, planned as the matrix of one arm (32 cases x 3)
    assert [(e["stream"], e["attempted"], e["planned"]) for e in entries] == [
        (False, 3, 96),
        (True, 3, 96),
    ]
    assert "first_token_ms" not in entries[0]
    assert (
        entries[1]["first_call_ms"]["p50"] is not None
        and entries[1]["first_token_ms"]["p95"] is not None
    )
    assert (
        entries[0]["decision_accuracy"]["value"] == entries[1]["decision_accuracy"]["value"] == 1.0
    )
    plain = io.StringIO()
    assert cmd_report([str(out)], False, None, None, out=plain) == 0
    assert "· streamed" in plain.getvalue() and "· not streamed" in plain.getvalue()
    assert "first token p50" in plain.getvalue()


def test_compare_keeps_the_stream_arms_apart() -> None:
    from toolstand.reporting.compare_groups import group_label, look_of

    entry = {"provider": "p", "model": "m", "mode": "auto"}
    keys = {look_of({**entry, "stream": False}), look_of({**entry, "stream": True}), look_of(entry)}
    assert len(keys) == 3
    assert group_label((*look_of({**entry, "stream": True}), None)) == "p/m/auto streamed"
    assert group_label((*look_of(entry), None)) == "p/m/auto"
