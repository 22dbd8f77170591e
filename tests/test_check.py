"""`toolstand check` and the loaders: every broken file names file:line and the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from toolstand.cli import main
from toolstand.lint.check import plainly_valid, run_check
from toolstand.spec.cases import load_cases, parse_cases
from toolstand.spec.config import load_config
from toolstand.spec.contract import load_contract, parse_contract, validator_for
from toolstand.util.problems import LoadError

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "contracts" / "delivery_tools.json"
CASES = ROOT / "cases" / "delivery.jsonl"
SEED = next((ROOT.parent / "shared" / "seeds").glob("000_*.txt"), None)


def test_shipped_files_check_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--tools", str(TOOLS), "--cases", str(CASES)]) == 0
    out = capsys.readouterr()
    assert "warning: gemini" in out.out  # per-API notes are printed
    assert "0 errors" in out.err


def test_shipped_cases_cover_the_issue() -> None:
    cf = load_cases(CASES)
    assert len(cf.cases) >= 25
    cats = {c.category for c in cf.cases}
    for needed in (
        "positive",
        "missing_data",
        "ambiguous",
        "invalid_id",
        "implicit_intent",
        "irrelevant",
        "boundary",
        "conflicting",
        "recovery",
        "parallel",
        "slot_filling",
        "policy",
    ):
        assert needed in cats, needed
    assert any(c.messages for c in cf.cases) and any(c.active_tools for c in cf.cases)
    assert any(c.expect.calls and len(c.expect.calls) == 2 for c in cf.cases)


@pytest.mark.skipif(SEED is None, reason="the seeds are beside the repo only in the workplace")
def test_seed_lines_are_byte_for_byte_and_load() -> None:
    assert SEED is not None
    seed_lines = [
        ln for ln in SEED.read_text(encoding="utf-8").splitlines() if ln.startswith('{"id":')
    ]
    assert len(seed_lines) == 7
    shipped = CASES.read_text(encoding="utf-8").splitlines()
    assert shipped[:7] == seed_lines
    cf = parse_cases("\n".join(seed_lines).encode(), "seed")
    assert [c.id for c in cf.cases][:2] == ["direct_lookup", "missing_id"]


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return p


GOOD = '{"id":"a","user":"Где заказ ORD-123456?","expect":{"kind":"tool_call","tool":"get_order","arguments":{"order_id":"ORD-123456"}}}'

BROKEN_CASES = [
    ("not json", GOOD + "\n{oops\n", 2, "$", "not a JSON object"),
    (
        "unknown key",
        GOOD + '\n{"id":"b","user":"x","expect":{"kind":"text"},"colour":1}\n',
        2,
        "$.colour",
        "unknown key",
    ),
    ("bad type", '{"id":"b","user":5,"expect":{"kind":"text"}}\n', 1, "$.user", "string"),
    (
        "bad kind",
        '{"id":"b","user":"x","expect":{"kind":"call"}}\n',
        1,
        "$.expect.kind",
        "tool_call",
    ),
    ("duplicate id", GOOD + "\n" + GOOD + "\n", 2, "$.id", "duplicate id 'a' (first on line 1)"),
    (
        "unknown tool",
        '{"id":"b","user":"x","expect":{"kind":"tool_call","tool":"get_orders"}}\n',
        1,
        "$.expect.tool",
        "unknown tool 'get_orders'",
    ),
    (
        "bad arguments",
        '{"id":"b","user":"x","expect":{"kind":"tool_call","tool":"get_order","arguments":{"order_id":"123"}}}\n',
        1,
        "$.expect.arguments.order_id",
        "pattern",
    ),
    (
        "contradiction",
        '{"id":"b","user":"x","expect":{"kind":"tool_call","tool":"get_order","must_not_call":["get_order"]}}\n',
        1,
        "$.expect.must_not_call[0]",
        "both expected and forbidden",
    ),
    (
        "must_not_call true with a call",
        '{"id":"b","user":"x","expect":{"kind":"tool_call","tool":"get_order","must_not_call":true}}\n',
        1,
        "$.expect",
        "contradicts must_not_call",
    ),
    (
        "user and messages",
        '{"id":"b","user":"x","messages":[{"role":"user","content":"x"}],"expect":{"kind":"text"}}\n',
        1,
        "$",
        "exactly one of",
    ),
    (
        "unknown active tool",
        '{"id":"b","user":"x","active_tools":["nope"],"expect":{"kind":"text"}}\n',
        1,
        "$.active_tools[0]",
        "unknown tool 'nope'",
    ),
]


@pytest.mark.parametrize(
    ("label", "text", "line", "path", "needle"), BROKEN_CASES, ids=[b[0] for b in BROKEN_CASES]
)
def test_check_broken_cases(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    label: str,
    text: str,
    line: int,
    path: str,
    needle: str,
) -> None:
    cases = write(tmp_path, "cases.jsonl", text)
    assert main(["check", "--tools", str(TOOLS), "--cases", str(cases), "-q"]) == 1
    out = capsys.readouterr().out
    expected_prefix = f"{cases}:{line}: {path}: "
    lines = [ln for ln in out.splitlines() if ln.startswith(expected_prefix)]
    assert lines, out
    assert needle in lines[0]


def test_check_broken_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(TOOLS.read_text(encoding="utf-8"))
    data["tools"][1]["parameters"]["properties"]["weight_kg"]["type"] = "numbr"
    data["tools"][2]["effect"] = "write"
    bad = write(tmp_path, "tools.json", json.dumps(data, indent=2, ensure_ascii=False))
    assert main(["check", "--tools", str(bad), "--cases", str(CASES)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:" in out and "$.tools[2].effect" in out
    data["tools"][2]["effect"] = "execute"
    bad.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(LoadError) as err:
        load_contract(bad)
    (problem,) = err.value.problems
    assert problem.path == "$.tools[1].parameters.properties.weight_kg.type"
    text_lines = bad.read_text().splitlines()
    assert problem.line is not None and '"numbr"' in text_lines[problem.line - 1]


def test_contract_hash_is_canonical(tmp_path: Path) -> None:
    data = json.loads(TOOLS.read_text(encoding="utf-8"))
    compact = write(tmp_path, "c.json", json.dumps(data, separators=(",", ":"), sort_keys=False))
    assert load_contract(compact).hash == load_contract(TOOLS).hash
    data["tools"][0]["description"] += "!"
    changed = write(tmp_path, "d.json", json.dumps(data))
    assert load_contract(changed).hash != load_contract(TOOLS).hash


def test_lock_fails_on_change_without_bump(tmp_path: Path) -> None:
    data = json.loads(TOOLS.read_text(encoding="utf-8"))
    tools = write(tmp_path, "tools.json", json.dumps(data))
    assert run_check(tools, CASES, lock=True).errors == []
    assert (tmp_path / "tools.lock.json").exists()
    data["tools"][0]["parameters"]["properties"]["order_id"]["description"] = "Номер заказа."
    tools.write_text(json.dumps(data))
    errors = run_check(tools, CASES, lock=True).errors
    assert len(errors) == 1 and "without a version bump" in errors[0].message
    data["version"] = "1.0.1"
    tools.write_text(json.dumps(data))
    assert run_check(tools, CASES, lock=True).errors == []
    assert orjson.loads((tmp_path / "tools.lock.json").read_bytes())["version"] == "1.0.1"


def test_config_errors_name_line_and_field(tmp_path: Path) -> None:
    cfg = write(
        tmp_path,
        "config.json",
        '{\n  "runs": [\n    {"provider": "p", "model": "m", "api": "openai-chats", "base_url": "sim"}\n  ],\n  "modes": ["auto"],\n'
        '  "tools": "t.json", "cases": "c.jsonl"\n}\n',
    )
    with pytest.raises(LoadError) as err:
        load_config(cfg)
    (problem,) = err.value.problems
    assert (problem.line, problem.path) == (3, "$.runs[0].api")
    assert "openai-chat" in problem.message


def test_a_config_names_its_contract_and_cases(tmp_path: Path) -> None:
    cfg = write(
        tmp_path,
        "config.json",
        '{\n  "runs": [{"provider": "p", "model": "m", "base_url": "sim"}]\n}\n',
    )
    with pytest.raises(LoadError) as err:
        load_config(cfg)
    missing = {(p.path, p.message) for p in err.value.problems}
    assert missing == {
        ("$.tools", "required key is missing"),
        ("$.cases", "required key is missing"),
    }


@pytest.mark.parametrize("load", [load_config, load_contract], ids=["config", "contract"])
def test_a_file_that_is_not_json_names_the_line(tmp_path: Path, load: Any) -> None:
    bad = write(tmp_path, "f.json", '{\n  "runs": [],\n  "modes": ["auto",]\n}\n')
    with pytest.raises(LoadError) as err:
        load(bad)
    (problem,) = err.value.problems
    assert (problem.file, problem.line, problem.path) == (str(bad), 3, "$")
    assert problem.message.startswith("not JSON: ")


def test_cli_reports_bad_config_without_traceback(tmp_path: Path) -> None:
    cfg = write(tmp_path, "config.json", '{"runs": [], "colour": 1}')
    proc = subprocess.run(
        [sys.executable, "-m", "toolstand", "run", "--config", str(cfg)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{cfg}:1: $.colour: unknown key" in proc.stderr


def test_strict_mode_warnings_name_what_each_api_rejects() -> None:
    # the same keyword lists the adapters note when they send in strict mode
    from toolstand.lint.check import api_warnings

    params = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "default": 1},
            "tags": {"type": "array", "items": {"type": "string"}, "contains": {"const": "a"}},
            "box": {"type": "object", "maxProperties": 2},
        },
    }
    data = {"name": "c", "version": "1", "tools": [{"name": "t", "description": "d",
                                                     "parameters": params}]}  # fmt: skip
    text = json.dumps(data, indent=1)
    contract = parse_contract(text, "c.json")
    found = {
        (p.path, p.message.split(":")[0])
        for p in api_warnings(contract, "c.json", text)
        if "is not supported" in p.message
    }
    base = "$.tools[0].parameters.properties"
    assert found == {
        (f"{base}.n.default", "openai strict mode"),
        (f"{base}.tags.contains", "anthropic strict tools"),
        (f"{base}.box.maxProperties", "anthropic strict tools"),
    }


SCHEMAS: list[Any] = [
    {"type": "integer", "description": "n"},
    {"type": "number"},
    {"type": "string", "enum": ["a", "b"], "x-normalize": ["casefold"]},
    {"type": ["string", "null"]},
    {"enum": [1, "a"]},
    {"type": "boolean", "default": False},
    {"type": "array"},
    {"type": "object"},
    {},
]
LEFT_TO_JSONSCHEMA: list[Any] = [
    {"type": "string", "minLength": 2},
    {"type": "integer", "format": "x"},
]
VALUES: list[Any] = [1, 1.0, 1.5, True, False, None, "a", "c", "", [], [1], {}, {"a": 1}]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_a_value_passed_without_jsonschema_is_one_jsonschema_accepts(schema: Any) -> None:
    passed = [v for v in VALUES if plainly_valid(schema, v)]
    assert passed  # the schemas it reads: some values pass, with no validator built
    assert [v for v in passed if list(validator_for(schema).iter_errors(v))] == []


@pytest.mark.parametrize("schema", LEFT_TO_JSONSCHEMA)
def test_a_schema_with_other_keywords_is_left_to_jsonschema(schema: Any) -> None:
    assert [v for v in VALUES if plainly_valid(schema, v)] == []


def test_a_value_jsonschema_rejects_is_named_in_check() -> None:
    assert not plainly_valid({"type": "integer"}, True)  # a bool is no integer
    assert not plainly_valid({"type": "integer"}, 1.5)
    assert plainly_valid({"type": "integer"}, 1.0)  # as jsonschema counts it
    assert not plainly_valid({"type": "string", "enum": ["a"]}, "b")
