"""The judge on accept/may_omit, per-case tools, BFCL's normalizers and verdict_normalized."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from toolstand.decision import ModelDecision, ToolCall
from toolstand.judge.normalize import normalize
from toolstand.judge.verdict import judge
from toolstand.spec.cases import Case, load_case_set
from toolstand.spec.config import parse_config
from toolstand.spec.contract import Contract
from toolstand.types import Judgement
from toolstand.util.problems import LoadError

EMPTY = Contract(name="none", version="0", tools=[])
TOOL = {
    "name": "weather_get",
    "description": "Weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "x-normalize": ["bfcl_string"]},
            "units": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "x-normalize": ["bfcl_string"],
            },
            "days": {"type": "integer"},
            "lat": {"type": "number", "x-normalize": ["int_as_float"]},
        },
        "required": ["city"],
    },
}


def case(expect: dict[str, Any], **extra: Any) -> Case:
    return Case.model_validate(
        {"id": "c", "user": "Weather?", "tools": [TOOL], "expect": expect, **extra}
    )


ACCEPT = {
    "kind": "tool_call",
    "tool": "weather_get",
    "accept": {"city": ["Paris", "Paris, France"], "units": ["celsius"], "lat": [48.5]},
    "may_omit": ["units", "lat"],
}


def run(c: Case, *calls: tuple[str, dict[str, Any]]) -> Judgement:
    decision = ModelDecision(
        kind="tool_call",
        calls=[
            ToolCall(name=n, arguments=a, raw_arguments=orjson.dumps(a).decode(), call_id=f"c{i}")
            for i, (n, a) in enumerate(calls)
        ],
    )
    return judge(c, decision, c.contract_for(EMPTY))


def verdicts(j: Judgement) -> tuple[str, str, list[str]]:
    return j["verdict"], j.get("verdict_normalized", "?"), [e["code"] for e in j["errors"]]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"city": "Paris"}, ("pass", "pass", [])),
        ({"city": "Paris, France", "units": "celsius"}, ("pass", "pass", [])),
        ({"city": "Paris", "lat": 48.5}, ("pass", "pass", [])),
        # exact is canonical: case, spacing and punctuation count; bfcl_string does not
        ({"city": "paris"}, ("fail", "pass", ["argument_mismatch"])),
        ({"city": "Paris France"}, ("fail", "pass", ["argument_mismatch"])),
        ({"city": "Paris's"}, ("fail", "fail", ["argument_mismatch"])),
        # a parameter in neither accept nor may_omit must be absent
        ({"city": "Paris", "days": 3}, ("fail", "fail", ["argument_mismatch"])),
        # a value not listed, and a listed parameter that may not be omitted
        ({"city": "Rome"}, ("fail", "fail", ["argument_mismatch"])),
        ({"units": "celsius"}, ("fail", "fail", ["invalid_arguments", "argument_mismatch"])),
        # a schema violation that the declared repairs and normalizers mend fails the
        # exact verdict only (issue 24); one they cannot mend fails both
        (
            {"city": "Paris", "units": "Celsius"},
            ("fail", "pass", ["invalid_arguments", "argument_mismatch"]),
        ),
        (
            {"city": "Paris", "units": "kelvin"},
            ("fail", "fail", ["invalid_arguments", "argument_mismatch"]),
        ),
    ],
)
def test_accept_and_may_omit(arguments: dict[str, Any], expected: tuple[Any, ...]) -> None:
    assert verdicts(run(case(ACCEPT), ("weather_get", arguments))) == expected


def test_int_as_float_counts_for_the_normalized_result_only() -> None:
    c = case({**ACCEPT, "accept": {"city": ["Oslo"], "lat": [60.0]}, "may_omit": []})
    j = run(c, ("weather_get", {"city": "Oslo", "lat": 60}))
    assert verdicts(j) == ("fail", "pass", ["argument_mismatch"])
    assert j["metrics"]["exact_correct"] == 0 and j["metrics"]["normalized_correct"] == 1
    # an integer parameter has no int_as_float: 3.0 for 3 stays a mismatch
    c = case({**ACCEPT, "accept": {"city": ["Oslo"], "days": [3]}, "may_omit": []})
    assert verdicts(run(c, ("weather_get", {"city": "Oslo", "days": 3.0})))[1] == "fail"


def test_the_normalizers_as_declared() -> None:
    assert normalize("April 1, 2024 'a'", {"x-normalize": ["bfcl_string"]}) == 'april12024"a"'
    assert normalize("A-B_C*D^E/F.G", {"x-normalize": ["bfcl_string"]}) == "abcdefg"
    assert normalize(5, {"x-normalize": ["int_as_float"]}) == 5.0
    assert normalize(True, {"x-normalize": ["int_as_float"]}) is True
    # a member with no schema of its own inherits its container's rules
    assert normalize(
        {"k": "A B", "n": ["C D"]}, {"type": "object", "x-normalize": ["bfcl_string"]}
    ) == {
        "k": "ab",
        "n": ["cd"],
    }


def test_parallel_calls_match_in_any_order_against_accept_lists() -> None:
    calls = [
        {"tool": "weather_get", "accept": {"city": ["Lima"]}},
        {"tool": "weather_get", "accept": {"city": ["Quito"]}},
    ]
    c = case({"kind": "tool_call", "calls": calls})
    j = run(c, ("weather_get", {"city": "quito"}), ("weather_get", {"city": "Lima"}))
    assert verdicts(j) == ("fail", "pass", ["argument_mismatch"])
    assert [r["matched_expected"] for r in j["calls"]] == [1, 0]
    assert verdicts(run(c, ("weather_get", {"city": "Lima"})))[2] == ["call_count_mismatch"]


def test_a_case_naming_no_tool_takes_any_call_of_an_offered_tool() -> None:
    c = case({"kind": "tool_call"})
    j = run(c, ("weather_get", {"city": "anything"}))
    assert verdicts(j) == ("pass", "pass", [])
    assert j["metrics"]["tool_selection_correct"] is True
    assert verdicts(run(c, ("nowhere", {})))[2] == ["wrong_tool"]
    text = judge(c, ModelDecision(kind="text", text="no"), c.contract_for(EMPTY))
    assert [e["code"] for e in text["errors"]] == ["missing_call"]


def test_must_not_call_true_fails_any_call_on_own_tools() -> None:
    c = case({"kind": "text", "must_not_call": True})
    assert verdicts(run(c, ("weather_get", {"city": "x"}))) == ("fail", "fail", ["unexpected_call"])


def test_expectation_forms_are_checked_when_the_case_loads() -> None:
    with pytest.raises(ValueError, match="either 'arguments' or 'accept'"):
        case({**ACCEPT, "arguments": {"city": "Paris"}})
    with pytest.raises(ValueError, match="'may_omit' needs 'accept'"):
        case({"kind": "tool_call", "tool": "weather_get", "may_omit": ["units"]})
    with pytest.raises(ValueError, match="lists no value"):
        case({**ACCEPT, "accept": {"city": []}})


def test_own_tools_are_meta_checked_with_file_line_and_path(tmp_path: Path) -> None:
    bad = {**TOOL, "parameters": {"type": "object", "properties": {"x": {"type": "dict"}}}}
    line = {"id": "a", "user": "u", "tools": [bad], "expect": {"kind": "text"}}
    path = tmp_path / "c.jsonl"
    path.write_bytes(orjson.dumps(line) + b"\n")
    with pytest.raises(LoadError) as exc:
        load_case_set(path)
    (problem,) = exc.value.problems
    assert (problem.line, problem.path) == (1, "$.tools[0].parameters.properties.x.type")
    assert "unknown type 'dict'" in problem.message


def _write(path: Path, *ids: str) -> Path:
    lines = [{"id": i, "user": "u", "expect": {"kind": "text"}} for i in ids]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


def test_config_cases_as_a_file_a_list_or_a_folder(tmp_path: Path) -> None:
    (tmp_path / "set").mkdir()
    _write(tmp_path / "set" / "b.jsonl", "b1")
    _write(tmp_path / "set" / "a.jsonl", "a1", "a2")
    (tmp_path / "set" / "notes.txt").write_text("not a case file")
    runs = [{"provider": "p", "model": "m", "base_url": "sim"}]
    for cases, ids in [
        ("set/a.jsonl", ["a1", "a2"]),
        (["set/b.jsonl", "set/a.jsonl"], ["b1", "a1", "a2"]),
        ("set", ["a1", "a2", "b1"]),
    ]:
        config = parse_config(
            orjson.dumps({"runs": runs, "tools": "t.json", "cases": cases}), folder=tmp_path
        )
        assert [c.id for c in load_case_set(config.cases_source).cases] == ids
    folder = load_case_set(tmp_path / "set")
    assert folder.files == [str(tmp_path / "set" / "a.jsonl"), str(tmp_path / "set" / "b.jsonl")]
    _write(tmp_path / "set" / "c.jsonl", "b1")
    with pytest.raises(LoadError) as exc:
        load_case_set(tmp_path / "set")
    (problem,) = exc.value.problems
    assert problem.file.endswith("c.jsonl") and problem.line == 1
    assert "duplicate id 'b1' (first at" in problem.message and "b.jsonl:1" in problem.message
    with pytest.raises(LoadError, match="a case file, a list of case files"):
        parse_config(orjson.dumps({"runs": runs, "tools": "t.json", "cases": []}))
