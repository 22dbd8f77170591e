"""verdict_normalized judges each call after its declared repairs and then x-normalize
(design.md, Decisions and verdicts; issue 24, point 1): a call whose repaired arguments
pass the schema and match passes there, while ``invalid_arguments`` stays in the error
list, in ``verdict`` and in raw schema validity. A parameter's normalizers repair an enum
value only when it equals exactly one member under them."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, err, header, judgement, write_jsonl
from toolstand.cli import main
from toolstand.decision import ModelDecision, ToolCall
from toolstand.judge.normalize import normalized_repair
from toolstand.judge.verdict import judge, with_turn_errors
from toolstand.run.rejudge import rejudge_file
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract, ToolSpec
from toolstand.types import Judgement

EMPTY = Contract(name="none", version="0", tools=[])
BODIES = Path(__file__).resolve().parent / "fixtures" / "bodies"
BFCL = ["bfcl_string"]
TOOL = {
    "name": "golf_course",
    "description": "Find a golf course.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "x-normalize": BFCL},
            "kind": {"type": "string", "enum": ["open hole", "closed"], "x-normalize": BFCL},
            # "a b" and "ab" are one value under bfcl_string: neither is picked
            "grade": {"type": "string", "enum": ["a b", "ab", "c"], "x-normalize": BFCL},
            "route": {"type": "string", "enum": ["fastest", "shortest"], "x-normalize": BFCL},
            "speed": {"type": "string", "enum": ["Fast", "slow"], "x-normalize": ["casefold"]},
            "plain": {"type": "string", "enum": ["north", "south"]},
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["x y"], "x-normalize": BFCL},
            },
            "holes": {"type": "integer"},
            # declares its leniency: none (as BFCL's integers do), so "4" is not repaired
            "par": {"type": "integer", "x-normalize": []},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
}
ANY = ["city", "kind", "grade", "route", "speed", "plain", "tags", "holes", "par"]


def case(accept: dict[str, list[Any]]) -> Case:
    expect = {
        "kind": "tool_call",
        "tool": "golf_course",
        "accept": accept,
        "may_omit": [p for p in ANY if p != "city"],
    }
    return Case.model_validate({"id": "c", "user": "Golf?", "tools": [TOOL], "expect": expect})


def run(c: Case, arguments: dict[str, Any]) -> Judgement:
    call = ToolCall("golf_course", arguments, orjson.dumps(arguments).decode(), "c0")
    return judge(c, ModelDecision(kind="tool_call", calls=[call]), c.contract_for(EMPTY))


def outcome(j: Judgement) -> tuple[Any, ...]:
    codes = [e["code"] for e in j["errors"]]
    return j["verdict"], j["verdict_normalized"], codes, j["metrics"]["calls_schema_valid"]


ACCEPT: dict[str, list[Any]] = {
    "city": ["Boston"],
    "kind": ["open hole"],
    "grade": ["c", "ab"],
    "route": ["fastest"],
    "speed": ["Fast"],
    "plain": ["north"],
    "tags": [["x y"]],
    "holes": [18],
    "par": [4],
}
BROKEN = ["invalid_arguments", "argument_mismatch"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        # the two examples: enum case (a declared repair), and spacing that only
        # the parameter's own bfcl_string maps onto one member
        ({"city": "Boston", "route": "FASTEST"}, ("fail", "pass", BROKEN, 0)),
        ({"city": "Boston", "kind": "open-hole"}, ("fail", "pass", BROKEN, 0)),
        ({"city": "Boston", "kind": "OPEN_HOLE."}, ("fail", "pass", BROKEN, 0)),
        ({"city": "Boston", "speed": "FAST"}, ("fail", "pass", BROKEN, 0)),
        ({"city": "Boston", "tags": ["X-Y"]}, ("fail", "pass", BROKEN, 0)),
        # a declared repair and a normalizer's enum repair on one call
        (
            {"city": "Boston", "holes": "18", "kind": "Open-Hole"},
            ("fail", "pass", ["invalid_arguments", *BROKEN], 0),
        ),
        # equal to two members under the normalizers: no member is picked
        ({"city": "Boston", "grade": "A-B"}, ("fail", "fail", BROKEN, 0)),
        # no normalizer declared: only the declared enum-case repair applies
        ({"city": "Boston", "plain": "NORTH"}, ("fail", "pass", BROKEN, 0)),
        ({"city": "Boston", "plain": "nor-th"}, ("fail", "fail", BROKEN, 0)),
        # under its normalizers, but not a member at all
        ({"city": "Boston", "kind": "open"}, ("fail", "fail", BROKEN, 0)),
        # repaired and valid, yet another value than the case accepts
        ({"city": "Boston", "route": "SHORTEST"}, ("fail", "fail", BROKEN, 0)),
        # violations no normalizer repairs stay failures of both verdicts
        ({"city": "Boston", "holes": "eighteen"}, ("fail", "fail", BROKEN, 0)),
        ({"city": "Boston", "route": "fastest", "extra": 3}, ("fail", "fail", BROKEN, 0)),
        # a value whose schema declares x-normalize is repaired by those rules only
        ({"city": "Boston", "par": "4"}, ("fail", "fail", BROKEN, 0)),
        ({"city": 7}, ("fail", "fail", BROKEN, 0)),
        ({"city": "Boston", "route": "fastest"}, ("pass", "pass", [], 1)),
    ],
)
def test_the_normalized_verdict_judges_the_repaired_call(
    arguments: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    assert outcome(run(case(ACCEPT), arguments)) == expected


def test_the_row_says_the_call_is_valid_after_normalizing_and_keeps_the_raw_class() -> None:
    j = run(case(ACCEPT), {"city": "Boston", "kind": "open-hole"})
    (row,) = j["calls"]
    assert row["repair"] == "invalid"  # no declared repair makes it valid
    assert (row["normalized_valid"], row["normalized"], row["exact"]) == (True, True, False)
    (first, _) = j["errors"]
    assert (first["subcode"], first["path"]) == ("enum", "$.kind")
    repaired = run(case(ACCEPT), {"city": "Boston", "route": "FASTEST"})["calls"][0]
    assert repaired["repair"] == "repairable" and repaired["normalized_valid"] is True


def test_the_normalized_repair_logs_each_change() -> None:
    spec = ToolSpec.model_validate(TOOL)
    result = normalized_repair({"city": "B", "holes": " 18 ", "kind": "Open-Hole"}, spec.validator)
    assert result.repaired == {"city": "B", "holes": 18, "kind": "open hole"}
    assert result.repair == "repairable"
    assert result.repairs == [
        {"path": "$.holes", "rule": "number_from_string", "from": " 18 ", "to": 18},
        {"path": "$.kind", "rule": "x-normalize", "from": "Open-Hole", "to": "open hole"},
    ]
    ambiguous = normalized_repair({"city": "B", "grade": "A-B"}, spec.validator)
    assert (ambiguous.repair, ambiguous.repairs) == ("invalid", [])
    assert normalized_repair({"city": "B"}, spec.validator).repair == "raw_valid"


def test_declared_normalizers_replace_the_generic_repairs_in_the_normalized_verdict_only() -> None:
    """``"x-normalize": []`` (BFCL's integers) declares that no leniency applies: the
    normalized verdict does not turn "4" into 4 there, while the repair classification,
    which does not read x-normalize, still calls the call repairable."""
    j = run(case(ACCEPT), {"city": "Boston", "par": "4"})
    (row,) = j["calls"]
    assert row["repair"] == "repairable" and row["normalized_valid"] is False
    assert j["verdict_normalized"] == "fail"
    assert run(case(ACCEPT), {"city": "Boston", "holes": "18"})["verdict_normalized"] == "pass"


def test_a_later_turn_keeps_the_waiver() -> None:
    """with_turn_errors recomputes verdict_normalized from the rows: a second turn's own
    code still fails it, the first turn's waived invalid_arguments does not."""
    j = run(case(ACCEPT), {"city": "Boston", "kind": "open-hole"})
    assert with_turn_errors(j, [])["verdict_normalized"] == "pass"
    later = with_turn_errors(j, [{"code": "recovery_mismatch", "turn": 2}])
    assert later["verdict_normalized"] == "fail"


def test_rejudge_brings_an_older_history_to_the_new_normalized_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A history judged before this rule: the call's only fault is an enum value its own
    normalizer maps onto one member, and verdict_normalized said fail. Re-judged with no
    request, it says pass; verdict and the error list stay as they were."""
    arguments = {"city": "Boston", "kind": "open-hole"}
    # a recorded Chat Completions tool call, its call made the golf one
    body = orjson.loads((BODIES / "openai-chat" / "b_tool_call.json").read_bytes())
    (tool_call,) = body["choices"][0]["message"]["tool_calls"]
    tool_call["function"] = {"name": "golf_course", "arguments": orjson.dumps(arguments).decode()}
    line = {
        "id": "golf",
        "user": "Golf?",
        "tools": [TOOL],
        "expect": case(ACCEPT).expect.model_dump(exclude_none=True),
    }
    cases = tmp_path / "golf.jsonl"
    cases.write_bytes(orjson.dumps(line) + b"\n")
    contract = tmp_path / "contract.json"
    contract.write_bytes(orjson.dumps({"name": "golf", "version": "1", "tools": []}))
    old = judgement(
        errors=[err("invalid_arguments", "enum", path="$.kind"), err("argument_mismatch")]
    )
    old["verdict_normalized"] = "fail"
    rec = attempt("golf", j=old)
    rec["response"] = {"status": 200, "headers": {}, "body": body}
    rec["offered_tools"] = ["golf_course"]
    head = header()
    head["contract"]["path"], head["cases"]["path"] = str(contract), str(cases)
    source = write_jsonl(tmp_path / "old.jsonl", [head, rec])
    out = tmp_path / "new.jsonl"
    assert rejudge_file(source, out, warn=io.StringIO()) == []  # verdict unchanged: fail
    (new,) = [r for r in map(orjson.loads, out.read_bytes().splitlines()) if r["type"] == "attempt"]
    j = new["judgement"]
    assert (j["verdict"], j["verdict_normalized"]) == ("fail", "pass")
    assert [e["code"] for e in j["errors"]] == ["invalid_arguments", "argument_mismatch"]
    assert j["calls"][0]["normalized_valid"] is True
    # and the report's normalized_pass_rate follows it; pass_rate does not move
    assert main(["report", str(out), "--json"]) == 0
    (result,) = orjson.loads(capsys.readouterr().out)["results"]
    assert result["normalized_pass_rate"]["numerator"] == 1
    assert result["pass_rate"]["numerator"] == 0
