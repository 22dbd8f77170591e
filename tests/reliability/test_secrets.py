"""A planted API key never reaches a runs/ file, the output of `toolstand run`, or the
output of `toolstand report` on that file — even when the provider answers 401 with
the key in its message, echoes it in a header, a 5xx page, a non-JSON 2xx body, a
text answer or a tool call's arguments (which then go back in the second turn).

The echoing provider is a small real HTTP server on loopback that speaks just enough
of each wire API; the simulator runs beside it with the same key. The key comes back
as text and as an object key (issue 31, H7).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

from tests.support.runs import config_data, read, serving, sim
from toolstand.types import APIS

KEY = "sk-PLANTED-" + secrets.token_hex(16)
ENV = "TOOLSTAND_TEST_PLANTED_KEY"
MODELS = ("echo-401", "echo-429", "echo-500-page", "echo-2xx-text", "echo-text", "echo-call")
CASES = "direct_lookup,recovery_lookup_ok"


def answer(api: str, model: str, key: str) -> tuple[int, dict[str, str], bytes]:
    """What the echoing provider sends back for one request carrying ``key``."""
    headers = {"x-request-id": f"req-{key}", "content-type": "application/json"}
    if model in ("echo-401", "echo-429"):
        status = 401 if model == "echo-401" else 429
        headers["retry-after"] = "0"
        error = {"message": f"Incorrect API key provided: {key}.", "type": "auth", "code": status}
        error[key] = "the key echoed as an object key"  # issue 31, H7
        return status, headers, orjson.dumps({"type": "error", "error": error})
    if model == "echo-500-page":
        # the key straddles the 200 characters a message keeps of a non-JSON body
        page = "x " * 80 + key + " upstream failed"
        return 500, {**headers, "content-type": "text/html"}, page.encode()
    if model == "echo-2xx-text":
        return 200, {**headers, "content-type": "text/plain"}, f"hello {key}".encode()
    text = f"Your key is {key}"
    # the key as a value and as a property name (Anthropic input, Gemini args: H7)
    args = {"order_id": key, key: "echoed"}
    call = model == "echo-call"
    if api == "openai-chat":
        message: dict[str, Any] = {"role": "assistant", "content": None if call else text}
        if call:
            fn = {"name": "get_order", "arguments": json.dumps(args)}
            message["tool_calls"] = [{"id": "call_1", "type": "function", "function": fn}]
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}
        body: dict[str, Any] = {"id": "chatcmpl-echo", "object": "chat.completion"}
        body |= {"choices": [choice], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    elif api == "openai-responses":
        item: dict[str, Any] = (
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "get_order",
                "arguments": json.dumps(args),
                "status": "completed",
            }
            if call
            else {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
        body = {"id": "resp_echo", "object": "response", "status": "completed", "output": [item]}
        body["usage"] = {"input_tokens": 1, "output_tokens": 1}
    elif api == "anthropic":
        block = (
            {"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": args}
            if call
            else {"type": "text", "text": text}
        )
        body = {"id": "msg_echo", "type": "message", "role": "assistant", "content": [block]}
        body |= {"stop_reason": "tool_use" if call else "end_turn"}
        body["usage"] = {"input_tokens": 1, "output_tokens": 1}
    else:
        part = {"functionCall": {"name": "get_order", "args": args}} if call else {"text": text}
        candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}
        body = {"candidates": [candidate]}
        body["usageMetadata"] = {"promptTokenCount": 1, "candidatesTokenCount": 1}
    return 200, headers, orjson.dumps(body)


class EchoServer(ThreadingHTTPServer):
    daemon_threads = True
    keys: list[str | None]


class EchoHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: EchoServer

    def do_POST(self) -> None:  # the stdlib's naming
        body = orjson.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        parts = urlsplit(self.path)
        auth = self.headers.get("authorization", "")
        key = (
            (auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None)
            or self.headers.get("x-api-key")
            or self.headers.get("x-goog-api-key")
            or next(iter(parse_qs(parts.query).get("key") or []), None)
        )
        self.server.keys.append(key)
        if parts.path.startswith("/v1beta/models/"):
            api, model = "gemini", parts.path.split("/")[-1].split(":")[0]
        else:
            api = {
                "/v1/chat/completions": "openai-chat",
                "/v1/responses": "openai-responses",
                "/v1/messages": "anthropic",
            }[parts.path]
            model = body["model"]
        status, headers, content = answer(api, model, key or "no-key")
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the test reads records, not the server's log


@pytest.fixture
def echo_server() -> Iterator[EchoServer]:
    server = EchoServer(("127.0.0.1", 0), EchoHandler)
    server.keys = []
    with serving(server):
        yield server


def leaks(text: str) -> list[str]:
    """The key, or any 12 characters of its random part, found in ``text``."""
    found = [KEY] if KEY in text else []
    tail = KEY.removeprefix("sk-PLANTED-")
    found += [tail[i : i + 12] for i in range(len(tail) - 11) if tail[i : i + 12] in text]
    return found


def test_a_planted_key_never_leaves_the_process(tmp_path: Path, echo_server: EchoServer) -> None:
    port = echo_server.server_address[1]
    root = f"http://127.0.0.1:{port}"
    runs = []
    for api in APIS:
        base = root + "/v1" if api.startswith("openai") else root
        for model in MODELS:
            runs.append(
                {"provider": "echo", "model": model, "api": api, "base_url": base}
                | {"api_key_env": ENV}
            )
    runs.append({"provider": "echo", "model": "echo-401", "api": "anthropic", "base_url": root})
    runs[-1] |= {"api_key_env": ENV, "anthropic_version": "2026-10-21"}  # Bearer auth
    runs += [sim("sim-flaky", api, api_key_env=ENV) for api in APIS]
    cfg = tmp_path / "config.json"
    retry = {"max_retries": 1, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 5}
    # sim-flaky holds some connections until the client gives up: give up soon
    timeouts = {"connect_s": 2, "read_s": 1}
    cfg.write_bytes(orjson.dumps(config_data(runs, retry=retry, parallelism=8, timeouts=timeouts)))
    out = tmp_path / "runs" / "run.jsonl"
    env = dict(os.environ, **{ENV: KEY})
    toolstand = [sys.executable, "-m", "toolstand"]
    ran = subprocess.run(
        [*toolstand, "run", "--config", str(cfg), "--output", str(out), "--only", CASES],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    # the key went out on every request, and came back in every answer
    assert echo_server.keys and set(echo_server.keys) == {KEY}

    _, attempts = read(out)
    assert len(attempts) == (len(APIS) * len(MODELS) + 1 + len(APIS)) * 2
    codes = {
        (a["api"], a["model"]): (a["transport_error"] or {}).get("code")
        for a in attempts
        if a["provider"] == "echo"
    }
    assert {codes[(api, "echo-401")] for api in APIS} == {"auth_error"}
    assert {codes[(api, "echo-429")] for api in APIS} == {"rate_limited"}
    assert {codes[(api, "echo-500-page")] for api in APIS} == {"server_error"}
    assert {codes[(api, "echo-2xx-text")] for api in APIS} == {"malformed_response"}
    assert {codes[(api, "echo-call")] for api in APIS} == {None}
    # the echo reached the records, where it was replaced by the marker
    data = out.read_text(encoding="utf-8")
    assert data.count("***REDACTED***") > 50
    seconds = [a for a in attempts if a["model"] == "echo-call" and a["second_turn"]]
    assert len(seconds) == len(APIS)  # the call's arguments went back in a second turn

    report = subprocess.run(
        [
            *toolstand,
            "report",
            str(out),
            "--errors-csv",
            str(tmp_path / "errors.csv"),
            "--junit",
            str(tmp_path / "junit.xml"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    as_json = subprocess.run(
        [*toolstand, "report", str(out), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert report.returncode == 0 and as_json.returncode == 0, report.stderr + as_json.stderr
    assert "echo" in report.stdout and orjson.loads(as_json.stdout)["results"]
    seen = {
        "run stdout": ran.stdout,
        "run stderr": ran.stderr,
        "report stdout": report.stdout,
        "report stderr": report.stderr,
        "report --json": as_json.stdout + as_json.stderr,
        "errors.csv": (tmp_path / "errors.csv").read_text(encoding="utf-8"),
        "junit.xml": (tmp_path / "junit.xml").read_text(encoding="utf-8"),
    }
    # every file the run left, its lock and index folder included
    left = [p for p in (tmp_path / "runs").rglob("*") if p.is_file()]
    seen |= {str(p): p.read_bytes().decode("utf-8", "replace") for p in left}
    assert {name: leaks(text) for name, text in seen.items()} == {name: [] for name in seen}
    assert "auth_error" in seen["errors.csv"] and "***REDACTED***" in seen["errors.csv"]
