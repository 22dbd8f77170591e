"""The answer is judged as received and only what is written is scrubbed (issue 31 M6):
a key that occurs in a response (local servers take any key: ``lm-studio``,
``ORD-123456``) must not rewrite a correct call before it is judged, whole or streamed."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.runs import go, make_inputs, read, serving

ENV = "JUDGED_AS_RECEIVED_KEY"


def chat_body(arguments: dict[str, Any]) -> bytes:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_order", "arguments": orjson.dumps(arguments).decode()},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice = {"index": 0, "finish_reason": "tool_calls", "message": message}
    return orjson.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [choice]})


def stream_body(arguments: dict[str, Any]) -> bytes:
    delta = {
        "tool_calls": [
            {
                "index": 0,
                "id": "c1",
                "type": "function",
                "function": {"name": "get_order", "arguments": orjson.dumps(arguments).decode()},
            }
        ]
    }
    chunks = [
        {"id": "x", "object": "chat.completion.chunk", "model": "m",
         "choices": [{"index": 0, "delta": {"role": "assistant", **delta}, "finish_reason": None}]},
        {"id": "x", "object": "chat.completion.chunk", "model": "m",
         "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]  # fmt: skip
    events = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks)
    return events + b"data: [DONE]\n\n"


ECHOED = "lm-studio-key-0001"


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # the stdlib's naming
        sent = orjson.loads(self.rfile.read(int(self.headers["content-length"])))
        streamed = bool(sent.get("stream"))
        # model "echo" answers a call that is never valid and holds the key (each repair
        # turn gets it again); any other model, the right call
        bad = sent.get("model") == "echo"
        args = {"order_id": "123", "note": ECHOED} if bad else {"order_id": "ORD-123456"}
        body = stream_body(args) if streamed else chat_body(args)
        self.send_response(200)
        kind = "text/event-stream" if streamed else "application/json"
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[str]:
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"


@pytest.mark.parametrize("stream", [False, True])
def test_a_key_that_occurs_in_the_answer_does_not_change_the_verdict(
    tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    monkeypatch.setenv(ENV, "ORD-123456")
    run = {"provider": "local", "model": "m", "api": "openai-chat", "base_url": provider,
           "api_key_env": ENV, "stream": stream}  # fmt: skip
    out = tmp_path / "h.jsonl"
    go(make_inputs([run], modes=["auto"]), out, only={"direct_lookup"})
    _, (attempt,) = read(out)
    assert attempt["transport_error"] is None and attempt["stream"] is stream
    assert attempt["judgement"]["verdict"] == "pass", attempt["judgement"]["errors"]
    # what is written is still scrubbed: the key is nowhere on disk
    assert b"ORD-123456" not in out.read_bytes()


def test_repair_turns_are_judged_as_received_and_written_scrubbed(
    tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, ECHOED)
    run = {"provider": "local", "model": "echo", "api": "openai-chat", "base_url": provider,
           "api_key_env": ENV}  # fmt: skip
    out = tmp_path / "h.jsonl"
    repair = {"max_repairs": 2, "feedback": ["path_value"]}
    go(make_inputs([run], modes=["auto"], repair=repair), out, only={"direct_lookup"})
    _, attempts = read(out)
    turns = [t for a in attempts for t in a.get("repair_turns") or []]
    assert turns, "the invalid call got no repair turn"
    assert ECHOED.encode() not in out.read_bytes()
