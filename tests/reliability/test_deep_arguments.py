"""Valid call arguments nested deeper than the declared limit are judged and recorded,
``invalid_arguments`` sub-code ``depth`` (issue 31 H4): 300 levels crashed the attempt
unrecorded (the encoder stops at 255) and ``run`` exited 0."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.runs import go, make_inputs, read, serving
from toolstand.adapters.base import parse_json_object
from toolstand.spec.schema_limits import MAX_ARGUMENT_DEPTH, MAX_SCHEMA_DEPTH


def nested(levels: int) -> str:
    """``{"order_id": "ORD-123456", "x": {"x": ... {}}}`` with ``levels`` objects."""
    return '{"order_id":"ORD-123456","x":' + '{"x":' * (levels - 2) + "{}" + "}" * (levels - 1)


def gemini_body(levels: int) -> bytes:
    call = {"name": "get_order", "args": orjson.loads(nested(levels)) if levels < 250 else None}
    text = orjson.dumps({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": call}]}, "finishReason": "STOP"}]}).decode()  # fmt: skip
    return text.replace('"args":null', '"args":' + nested(levels)).encode()


class Handler(BaseHTTPRequestHandler):
    levels = 300

    def do_POST(self) -> None:  # the stdlib's naming
        self.rfile.read(int(self.headers["content-length"]))
        if "generateContent" in self.path:  # Gemini sends arguments as an object
            self.answer(gemini_body(self.levels))
            return
        call = {"id": "c1", "type": "function",
                "function": {"name": "get_order", "arguments": nested(self.levels)}}  # fmt: skip
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"index": 0, "finish_reason": "tool_calls", "message": message}
        body = orjson.dumps({"id": "x", "object": "chat.completion", "model": "m",
                             "choices": [choice]})  # fmt: skip
        self.answer(body)

    def answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[str]:
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"


def test_deep_arguments_are_recorded_as_invalid_arguments_depth(
    tmp_path: Path, provider: str
) -> None:
    run = {"provider": "local", "model": "m", "api": "openai-chat", "base_url": provider}
    out = tmp_path / "h.jsonl"
    summary = go(make_inputs([run], modes=["auto"]), out, only={"direct_lookup"})
    assert (summary.crashed, summary.written) == (0, 1)
    _, (attempt,) = read(out)
    judgement = attempt["judgement"]
    assert judgement["verdict"] == "fail"
    (error,) = judgement["errors"]
    assert (error["code"], error["subcode"], error["path"]) == ("invalid_arguments", "depth", "$")
    assert error["message"] == (
        f"arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels (JSON objects and arrays)"
    )
    (call,) = attempt["decision"]["calls"]
    assert call["arguments"] is None and call["raw_arguments"] == nested(300)


def test_the_limit_is_declared_beside_the_schema_limit_and_holds_at_its_edge() -> None:
    assert MAX_ARGUMENT_DEPTH <= MAX_SCHEMA_DEPTH  # and far below the encoder's 255
    at_limit, error = parse_json_object(nested(MAX_ARGUMENT_DEPTH))
    assert error is None and at_limit is not None
    over, error = parse_json_object(nested(MAX_ARGUMENT_DEPTH + 1))
    assert over is None and error is not None and error.startswith("arguments nested deeper")
    wide = '{"a":[' + ",".join(["{}"] * 500) + "]}"  # many brackets, shallow
    assert parse_json_object(wide)[1] is None


def test_deep_object_arguments_are_judged_and_the_body_recorded_as_text(
    tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEP_GEMINI_KEY", "gk-0123456789")
    base = provider.removesuffix("/v1")
    run = {"provider": "local", "model": "m", "api": "gemini", "base_url": base,
           "api_key_env": "DEEP_GEMINI_KEY"}  # fmt: skip
    out = tmp_path / "h.jsonl"
    summary = go(make_inputs([run], modes=["auto"]), out, only={"direct_lookup"})
    assert (summary.crashed, summary.written) == (0, 1)
    _, (attempt,) = read(out)
    (error,) = attempt["judgement"]["errors"]
    assert (error["code"], error["subcode"]) == ("invalid_arguments", "depth")
    response = attempt["response"]
    assert (response["body_is_json"], response["too_deep"]) == (False, 200)
    assert orjson.loads(response["body"]) == orjson.loads(gemini_body(300))
