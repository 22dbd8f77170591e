"""Issue 13, "trust the record": a key scrubbed only where it travels, no cookie jar,
userinfo redacted, and no connection but to the configured base URLs.

The providers are the simulator and a small stdlib HTTP server on loopback that speaks
just enough Chat Completions and Messages, hands out cookies and counts every request.
"""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.runs import ROOT, check_record, config_data, go, make_inputs, read, serving, sim
from toolstand.history.write import attempt_key
from toolstand.util.redact import REDACTED

ENV = "TOOLSTAND_TEST_TRUST_KEY"
ENV_B = "TOOLSTAND_TEST_TRUST_KEY_B"
ONLY = {"direct_lookup", "missing_id", "recovery_lookup_ok"}
# what differs between two runs of the same matrix whatever the keys: times, and what a
# loaded machine changes (retries, the tries' latencies, a second turn's); an answer
# carries the second it was made in ("created"), which two runs can straddle
VOLATILE = {
    *("run_id", "started_at", "elapsed_ms", "latency_ms", "ttfb_ms"),
    *("tries", "retries", "second_turn"),
}


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[dict[str, Any]]
    cookie: str  # the value every answer sets as a cookie
    echo: str  # text every Messages answer carries


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LocalServer

    def do_GET(self) -> None:  # the stdlib's naming
        self.server.seen.append({"path": self.path, "headers": dict(self.headers)})
        self._send(200, orjson.dumps({"type": "string"}))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = orjson.loads(self.rfile.read(length))
        seen = {"path": self.path, "headers": dict(self.headers), "port": self.client_address[1]}
        self.server.seen.append(seen)
        if self.path == "/v1/messages":
            block = {"type": "text", "text": f"I was sent: {self.server.echo}"}
            answer: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant"}
            answer |= {"content": [block], "stop_reason": "end_turn", "model": body["model"]}
            answer["usage"] = {"input_tokens": 1, "output_tokens": 1}
        else:
            message = {"role": "assistant", "content": "Which order do you mean?"}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            answer = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [choice]}
            answer["usage"] = {"prompt_tokens": 1, "completion_tokens": 1}
        self._send(200, orjson.dumps(answer), {"set-cookie": f"session={self.server.cookie}"})

    def _send(self, status: int, content: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {"content-type": "application/json", **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def listening() -> Iterator[LocalServer]:
    """One server for the module's tests, on a port of its own (port 0)."""
    with serving(LocalServer(("127.0.0.1", 0), Handler)) as srv:
        yield srv


@pytest.fixture
def server(listening: LocalServer) -> LocalServer:
    """The module's server with what it saw and says reset for this test."""
    listening.seen, listening.cookie, listening.echo = [], "none", ""
    return listening


def stable(rec: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in rec.items() if k not in VOLATILE}
    out["request"] = {k: v for k, v in rec["request"].items() if k != "url"}  # the port
    response = rec["response"]
    if response is not None and isinstance(response["body"], dict):
        body = {k: v for k, v in response["body"].items() if k != "created"}
        out["response"] = {**response, "body": body}
    return out


def run_sim(tmp_path: Path, name: str, provider: str, **run: Any) -> tuple[Any, Path]:
    inputs = make_inputs([{**sim("sim-careful", "openai-chat", **run), "provider": provider}])
    out = tmp_path / f"{name}.jsonl"
    return go(inputs, out, only=ONLY), out


@pytest.mark.parametrize("key", ["ollama", "e"])
def test_a_short_key_changes_nothing_in_the_record_and_the_header_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    """Ollama's documented dummy key once renamed every attempt's provider (so --resume
    ran them all again); a one-letter key rewrote JSON keys ("typ***REDACTED***")."""
    monkeypatch.setenv(ENV, key)
    _, plain = run_sim(tmp_path, "plain", "ollama")  # the simulator's own key, no env
    summary, keyed = run_sim(tmp_path, "keyed", "ollama", api_key_env=ENV)
    assert summary.verdicts["crashed"] == 0 and summary.written == summary.planned > 0
    (plain_header,), plain_attempts = read(plain)
    (header,), attempts = read(keyed)
    assert {a["provider"] for a in attempts} == {"ollama"}
    assert {a["case_id"] for a in attempts} == ONLY
    assert REDACTED not in keyed.read_text(encoding="utf-8")
    for rec in attempts:
        check_record(rec, max_retries=2)

    # attempts in flight finish in any order under load: compare them by their key
    def by_key(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(
            (stable(a) for a in recs), key=lambda a: (a["case_id"], a["mode"], a["attempt"])
        )

    assert by_key(attempts) == by_key(plain_attempts)
    assert header["short_keys"] == [ENV] and plain_header["short_keys"] == []

    again = go(make_inputs(
        [{**sim("sim-careful", "openai-chat", api_key_env=ENV), "provider": "ollama"}]
    ), keyed, only=ONLY, resume=True)  # fmt: skip
    assert (again.written, again.skipped) == (0, summary.planned)  # nothing ran twice


def test_a_long_key_spelled_like_the_stands_own_fields_leaves_them_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key that equals the provider's name is scrubbed from what travelled (the
    request's text) but never from the ids the stand writes, so --resume still knows
    every finished attempt."""
    provider = "ollama-on-my-laptop"
    monkeypatch.setenv(ENV, provider)
    summary, out = run_sim(tmp_path, "run", provider, api_key_env=ENV)
    (header,), attempts = read(out)
    assert header["runs"][0]["provider"] == provider
    assert {a["provider"] for a in attempts} == {provider}
    assert {a["case_id"] for a in attempts} == ONLY
    again = go(make_inputs(
        [{**sim("sim-careful", "openai-chat", api_key_env=ENV), "provider": provider}]
    ), out, only=ONLY, resume=True)  # fmt: skip
    assert (again.written, again.skipped) == (0, summary.planned)
    assert len({attempt_key(a) for a in attempts}) == summary.planned
    assert header["short_keys"] == []


def test_no_cookie_travels_and_every_configured_key_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LocalServer
) -> None:
    """The Chat run's server sets a cookie holding that run's key; the Messages run on
    the same host must not send it back, and when its answer quotes that key anyway,
    the key is scrubbed from its record although it is not that run's own."""
    key_a, key_b = "sk-openai-" + "a" * 24, "sk-ant-" + "b" * 24
    monkeypatch.setenv(ENV, key_a)
    monkeypatch.setenv(ENV_B, key_b)
    server.cookie = key_a
    server.echo = f"cookie {key_a} and key {key_b}"
    root = f"http://127.0.0.1:{server.server_address[1]}"
    runs = [
        {"provider": "openai", "model": "m", "api": "openai-chat", "base_url": root + "/v1"},
        {"provider": "anthropic", "model": "m", "api": "anthropic", "base_url": root},
    ]
    runs[0]["api_key_env"], runs[1]["api_key_env"] = ENV, ENV_B
    inputs = make_inputs(runs, parallelism=1)
    out = tmp_path / "run.jsonl"
    summary = go(inputs, out, only={"direct_lookup", "missing_id"})
    assert summary.written == 4 and summary.verdicts["transport_error"] == 0
    posts = [s for s in server.seen if s["path"] != "/x.json"]
    assert [s["path"] for s in posts] == ["/v1/chat/completions"] * 2 + ["/v1/messages"] * 2
    assert [{k.lower() for k in s["headers"]} & {"cookie"} for s in posts] == [set()] * 4
    # each run has clients of its own: no connection is shared between providers
    assert not {s["port"] for s in posts[:2]} & {s["port"] for s in posts[2:]}
    text = out.read_text(encoding="utf-8")
    assert key_a not in text and key_b not in text
    _, attempts = read(out)
    texts = [a["decision"]["text"] for a in attempts if a["provider"] == "anthropic"]
    assert texts == [f"I was sent: cookie {REDACTED} and key {REDACTED}"] * 2


def test_userinfo_in_a_base_url_is_sent_but_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LocalServer
) -> None:
    password = "pw-" + "p" * 20
    monkeypatch.setenv(ENV, "sk-" + "k" * 30)
    port = server.server_address[1]
    base = f"http://tester:{password}@127.0.0.1:{port}/v1"
    run = {"provider": "p", "model": "m", "api": "openai-chat", "base_url": base}
    inputs = make_inputs([run | {"api_key_env": ENV}])
    out = tmp_path / "run.jsonl"
    assert go(inputs, out, only={"missing_id"}).written == 1
    assert server.seen  # the request went out, to the host the URL names
    text = out.read_text(encoding="utf-8")
    assert password not in text and "tester" not in text
    (header,), (attempt,) = read(out)
    masked = f"http://{REDACTED}@127.0.0.1:{port}/v1"
    assert header["runs"][0]["base_url"] == masked
    assert attempt["request"]["url"] == masked + "/chat/completions"


def test_a_config_holds_its_values_strictly(tmp_path: Path) -> None:
    from toolstand.spec.config import parse_config
    from toolstand.util.problems import LoadError

    def problems(**extra: Any) -> list[str]:
        text = orjson.dumps(config_data([sim("sim-careful", "openai-chat")], **extra))
        try:
            parse_config(text, "c.json")
        except LoadError as exc:
            return [f"{p.path}: {p.message}" for p in exc.problems]
        return []

    assert problems(repetitions="3") == ["$.repetitions: Input should be a valid integer (got '3')"]
    assert problems(repetitions=True) == [
        "$.repetitions: Input should be a valid integer (got True)"
    ]
    assert problems(parallelism=2.0) == ["$.parallelism: Input should be a valid integer (got 2.0)"]
    assert problems(temperature="0") == ["$.temperature: Input should be a valid number (got '0')"]
    assert problems(retry={"max_retries": False}) == [
        "$.retry.max_retries: Input should be a valid integer (got False)"
    ]
    assert problems(temperature=0, repetitions=2) == []  # an integer is a number


def contract_with_remote_ref(tmp_path: Path, url: str) -> tuple[Path, int]:
    """The delivery contract with get_order's order_id as a remote $ref, and its line."""
    data = orjson.loads((ROOT / "contracts" / "delivery_tools.json").read_bytes())
    data["tools"][0]["parameters"]["properties"]["order_id"] = {"$ref": url}
    path = tmp_path / "remote_ref.json"
    text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    path.write_text(text, encoding="utf-8")
    line = next(n for n, t in enumerate(text.splitlines(), start=1) if url in t)
    return path, line


def test_a_remote_ref_is_refused_by_check_run_and_rejudge_and_never_fetched(
    tmp_path: Path, server: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Once fetched by check and per attempt by run and rejudge, outside the contract
    hash; an unreachable host was a traceback. Now a load error, and no request."""
    from toolstand.cli import main

    url = f"http://127.0.0.1:{server.server_address[1]}/x.json"
    tools, line = contract_with_remote_ref(tmp_path, url)
    where = f"{tools}:{line}: $.tools[0].parameters.properties.order_id.$ref"
    message = f"{where}: remote $ref is not allowed, inline it"
    cases = str(ROOT / "cases" / "delivery.jsonl")

    assert main(["check", "--tools", str(tools), "--cases", cases]) == 1
    assert message in capsys.readouterr().out.splitlines()

    config = tmp_path / "config.json"
    config.write_bytes(orjson.dumps(config_data([sim("sim-careful", "openai-chat")])))
    out = tmp_path / "run.jsonl"
    argv = ["run", "--config", str(config), "--tools", str(tools), "--output", str(out)]
    assert main(argv) == 2
    assert message in capsys.readouterr().err.splitlines()
    assert not out.exists()

    good = tmp_path / "good.jsonl"
    assert (
        main(["run", "--config", str(config), "--output", str(good), "--only", "direct_lookup"])
        == 0
    )
    capsys.readouterr()
    rejudged = tmp_path / "rejudged.jsonl"
    assert main(["rejudge", str(good), "--output", str(rejudged), "--tools", str(tools)]) == 2
    assert message in capsys.readouterr().err.splitlines()
    assert server.seen == []  # nothing ever asked for the schema


def test_no_validator_can_retrieve_a_remote_ref(server: LocalServer) -> None:
    """Even a schema that reached a validator some other way is never fetched."""
    from referencing.exceptions import Unresolvable

    from toolstand.spec.contract import ToolSpec

    url = f"http://127.0.0.1:{server.server_address[1]}/x.json"
    params = {"type": "object", "properties": {"a": {"$ref": url}}}
    spec = ToolSpec(name="t", description="d", parameters=params)
    with pytest.raises(Unresolvable, match=r"x\.json"):
        spec.validator.is_valid({"a": 1})
    assert spec.validator.is_valid({"b": 1})  # what needs no ref still validates
    assert server.seen == []


def test_a_ref_inside_the_schema_must_point_at_something() -> None:
    """A ``#...`` ref to nothing made the judge raise on every attempt ("CRASHED … not
    recorded"); it is a load error now, while a ref that resolves still validates."""
    from toolstand.spec.contract import parse_contract
    from toolstand.util.problems import LoadError

    def contract(ref: str) -> bytes:
        params = {
            "type": "object",
            "$defs": {"order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"}},
            "properties": {"order_id": {"$ref": ref}},
            "required": ["order_id"],
        }
        tool = {"name": "get_order", "description": "d", "parameters": params, "effect": "read"}
        return orjson.dumps(
            {"name": "c", "version": "1", "tools": [tool]}, option=orjson.OPT_INDENT_2
        )

    with pytest.raises(LoadError) as caught:
        parse_contract(contract("#/$defs/nope"), "c.json")
    (problem,) = caught.value.problems
    assert str(problem).startswith("c.json:")
    assert str(problem).endswith(
        "$.tools[0].parameters.properties.order_id.$ref: "
        "'#/$defs/nope' points at nothing in this tool's schema"
    )
    good = parse_contract(contract("#/$defs/order_id"), "c.json").tools[0]
    assert [e.message for e in good.validator.iter_errors({"order_id": "123"})] == [
        "'123' does not match '^ORD-[0-9]{6}$'"
    ]
