"""Inputs that could only make a wrong run are refused when they load, naming file:line,
the path and what is allowed: a base_url no request can go to, and a key written twice
in one object (every JSON reader silently keeps the last)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.support.runs import ROOT, config_data, sim
from toolstand.spec.cases import parse_cases
from toolstand.spec.config import parse_config
from toolstand.spec.contract import parse_contract
from toolstand.util.problems import LoadError

ALLOWED = 'give "sim" or an http(s) URL with a host, such as https://api.openai.com/v1'


def config_problems(text: str | bytes, file: str = "c.json") -> list[str]:
    try:
        parse_config(text, file)
    except LoadError as exc:
        return [str(p) for p in exc.problems]
    return []


def with_base_url(url: str) -> bytes:
    run = {"provider": "p", "model": "m", "api": "openai-chat", "base_url": url}
    return orjson.dumps(config_data([sim("sim-careful", "openai-chat"), run]))


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://[::1", "not a URL (Invalid IPv6 URL)"),
        ("http://127.0.0.1:99999/v1", "the port must be a number in 1-65535"),
        ("http://127.0.0.1:0/v1", "the port must be a number in 1-65535"),
        ("http://host:port/v1", "the port must be a number in 1-65535"),
        ("not a url", "the scheme must be http or https (no scheme)"),
        ("ftp://example.com/v1", "the scheme must be http or https (scheme 'ftp')"),
        ("SIM", "the scheme must be http or https (no scheme)"),
        ("https:///v1", "no host"),
        ("http://exa mple.com/v1", "a URL holds no spaces or control characters"),
    ],
)
def test_a_base_url_no_request_can_reach_is_refused_on_load(url: str, why: str) -> None:
    assert config_problems(with_base_url(url)) == [
        f"c.json:1: $.runs[1].base_url: {why}: {ALLOWED} (got {url!r})"
    ]


def test_the_refusal_shows_neither_a_password_nor_control_characters() -> None:
    (problem,) = config_problems(with_base_url("ftp://me:hunter2-secret@\x1b[2Jhost/v1"))
    assert "hunter2" not in problem and "\x1b" not in problem
    assert problem.endswith("(got 'ftp://***REDACTED***@\\x1b[2Jhost/v1')")


@pytest.mark.parametrize(
    "url",
    [
        "sim",
        "https://api.openai.com/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8080",
        "http://user:pw@127.0.0.1:65535/v1",
    ],
)
def test_every_url_a_request_can_go_to_loads(url: str) -> None:
    assert config_problems(with_base_url(url)) == []


def test_the_example_configs_load() -> None:
    for name in ("config.example.json", "config.providers.example.json"):
        assert config_problems((ROOT / name).read_bytes(), name) == []


def test_a_key_twice_in_a_config_is_refused_with_its_line() -> None:
    text = (
        '{"runs": [\n'
        '  {"provider": "sim", "model": "sim-careful", "base_url": "sim",\n'
        '   "model": "sim-eager"}\n'
        "],\n"
        ' "repetitions": 3}\n'
    )
    assert config_problems(text) == [
        "c.json:3: $.runs[0].model: duplicate key 'model' in one object "
        "(JSON keeps only the last): write it once"
    ]


def test_a_key_twice_in_a_contract_is_refused_with_its_line() -> None:
    text = (ROOT / "contracts" / "delivery_tools.json").read_text(encoding="utf-8")
    doubled = text.replace('"effect": "read",', '"effect": "execute",\n      "effect": "read",', 1)
    assert doubled != text
    line = doubled.splitlines().index('      "effect": "read",') + 1
    with pytest.raises(LoadError) as caught:
        parse_contract(doubled, "tools.json")
    assert [str(p) for p in caught.value.problems] == [
        f"tools.json:{line}: $.tools[0].effect: duplicate key 'effect' in one object "
        "(JSON keeps only the last): write it once"
    ]


def test_a_key_twice_in_a_case_line_is_refused_and_the_other_lines_load() -> None:
    lines = [
        b'{"id": "a", "user": "hi", "expect": {"kind": "text"}}',
        b'{"id": "b", "user": "hi", "expect": {"kind": "text", "kind": "tool_call"}}',
        b'{"id": "c", "user": "hi", "user": "bye", "expect": {"kind": "text"}}',
        # the form orjson writes (a BFCL import, a saved case), read without a second
        # parse when it re-serializes to itself: a doubled key never does
        b'{"id":"d","user":"hi","expect":{"kind":"text","kind":"text"}}',
    ]
    casefile = parse_cases(b"\n".join(lines) + b"\n", "cases.jsonl", strict=False)
    assert [c.id for c in casefile.cases] == ["a"]
    assert [str(p) for p in casefile.problems] == [
        "cases.jsonl:2: $.expect.kind: duplicate key 'kind' in one object "
        "(JSON keeps only the last): write it once",
        "cases.jsonl:3: $.user: duplicate key 'user' in one object "
        "(JSON keeps only the last): write it once",
        "cases.jsonl:4: $.expect.kind: duplicate key 'kind' in one object "
        "(JSON keeps only the last): write it once",
    ]


def test_a_duplicate_spelled_with_escapes_is_still_found() -> None:
    line = b'{"id": "a", "user": "hi", "expect": {"kind": "text"}, "\\u0069d": "b"}'
    casefile = parse_cases(line + b"\n", "cases.jsonl", strict=False)
    assert [str(p) for p in casefile.problems] == [
        "cases.jsonl:1: $.id: duplicate key 'id' in one object "
        "(JSON keeps only the last): write it once"
    ]


def test_run_refuses_a_bad_config_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Once "CRASHED 1 (not recorded)" with exit 0; now exit 2 and no file."""
    from toolstand.cli import main

    config = tmp_path / "config.json"
    config.write_bytes(with_base_url("http://[::1"))
    out = tmp_path / "run.jsonl"
    assert main(["run", "--config", str(config), "--output", str(out)]) == 2
    assert "$.runs[1].base_url: not a URL" in capsys.readouterr().err
    assert not out.exists()


def test_a_duplicate_key_with_a_control_character_is_shown_spelled() -> None:
    line = (
        b'{"id": "a", "user": "hi", "expect": {"kind": "text"}, "\\u001b]0;x": 1, "\\u001b]0;x": 2}'
    )
    casefile = parse_cases(line + b"\n", "cases.jsonl", strict=False)
    assert [str(p) for p in casefile.problems] == [
        "cases.jsonl:1: $.\\x1b]0;x: duplicate key '\\x1b]0;x' in one object "
        "(JSON keeps only the last): write it once"
    ]
