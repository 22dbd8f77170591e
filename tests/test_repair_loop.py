"""Repair turns end to end: the loop on all four APIs against the simulator, the records,
turn 1 left as it was, the metrics by hand, rejudge, and the simulator's declared rates."""

from __future__ import annotations

import asyncio
import io
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, header, judgement, write_jsonl
from toolstand.attempt.feedback import validation_problem
from toolstand.decision import ToolCall
from toolstand.history import in_key_order
from toolstand.history.lock import HistoryBusy, HistoryLock
from toolstand.history.write import attempt_key
from toolstand.reporting import compute_files
from toolstand.reporting.formats import render_table, to_json
from toolstand.run.rejudge import rejudge_file
from toolstand.run.runner import load_inputs, plan, run
from toolstand.sim.repairs import FEEDBACK_FIX_RATES, feedback_style, fix_rate
from toolstand.sim.turn import ToolOutput
from toolstand.spec.config import parse_config
from toolstand.spec.contract import Contract
from toolstand.types import APIS
from toolstand.util.problems import LoadError

ROOT = Path(__file__).resolve().parent.parent
STYLES = ["traceback", "path_value", "allowed", "allowed_prose"]


def config(api: str, *, repair: dict[str, Any] | None, repetitions: int = 3) -> dict[str, Any]:
    data: dict[str, Any] = {
        "runs": [{"provider": "sim", "model": "sim-sloppy", "api": api, "base_url": "sim"}],
        "system_prompt": "prompts/delivery-router-v1.txt",
        "tools": "contracts/delivery_tools.json",
        "cases": "cases/delivery.jsonl",
        "repetitions": repetitions,
        "parallelism": 1,  # plan order: the same first-turn draws with repairs on or off
        "sim": {"seed": 3},
    }
    if repair is not None:
        data["repair"] = repair
    return data


def run_history(data: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    asyncio.run(run(inputs, out, progress_out=None))
    recs = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    return [r for r in recs if r["type"] == "attempt"]


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Per API: a run with one repair arm (allowed, up to 3 repairs)."""
    folder = tmp_path_factory.mktemp("repair")
    out: dict[str, Path] = {}
    for api in APIS:
        out[api] = folder / f"{api}.jsonl"
        run_history(config(api, repair={"max_repairs": 3, "feedback": ["allowed"]}), out[api])
    return out


def _attempts(path: Path) -> list[dict[str, Any]]:
    recs = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    return [r for r in recs if r["type"] == "attempt"]


@pytest.mark.parametrize("api", APIS)
def test_loop_repairs_on_every_api(api: str, histories: dict[str, Path]) -> None:
    recs = _attempts(histories[api])
    assert recs and all(r["feedback"] == "allowed" for r in recs)
    needed = [r for r in recs if r["repair"]["needed"]]
    assert needed, f"{api}: sim-sloppy made no invalid first call"
    repaired = [r for r in needed if r["repair"]["passed_after"] is not None]
    assert repaired, f"{api}: no repair succeeded"
    for r in needed:
        turns = r["repair_turns"]
        assert [t["index"] for t in turns] == list(range(1, len(turns) + 1))
        assert 1 <= len(turns) <= 3
        assert r["repair"]["turns"] == len(turns)
        first = turns[0]
        assert first["feedback"] == "allowed"
        sent = [t["result"] for t in first["tool_results"]]
        assert any(
            s.get("error", {}).get("code") == "INVALID_ARGUMENTS" and s["error"].get("errors")
            for s in sent
        )
        # the feedback travelled in the API's own tool-result form
        body = orjson.dumps(first["request"]["body"]).decode()
        assert "INVALID_ARGUMENTS" in body
        # each repair turn was judged like turn 1
        for t in turns:
            assert t["judgement"] is None or t["judgement"]["verdict"] in ("pass", "fail")
        k = r["repair"]["passed_after"]
        if k is not None:
            assert turns[k - 1]["judgement"]["verdict"] == "pass" and turns[k - 1]["valid"]
            assert len(turns) == k  # the loop stops at the first valid call
    for r in recs:
        if not r["repair"]["needed"]:
            assert r["repair_turns"] == []


def test_first_turn_unchanged_by_repairs(tmp_path: Path) -> None:
    """Turn-1 judgements and first-turn metrics are the same with repairs on or off."""
    off = run_history(config("openai-chat", repair=None), tmp_path / "off.jsonl")
    on = run_history(
        config("openai-chat", repair={"max_repairs": 2, "feedback": ["traceback"]}),
        tmp_path / "on.jsonl",
    )
    assert [(r["case_id"], r["attempt"]) for r in off] == [(r["case_id"], r["attempt"]) for r in on]
    assert [r["judgement"] for r in off] == [r["judgement"] for r in on]
    assert [r["decision"] for r in off] == [r["decision"] for r in on]
    assert all("repair_turns" not in r and "feedback" not in r for r in off)
    assert any(r["repair_turns"] for r in on)
    m_off = compute_files([tmp_path / "off.jsonl"]).groups[0].metrics()
    m_on = compute_files([tmp_path / "on.jsonl"]).groups[0].metrics()
    for name in ("raw_schema_validity", "exact_argument_accuracy", "decision_accuracy"):
        assert m_off[name] == m_on[name]


def test_feedback_is_a_matrix_dimension() -> None:
    data = config("openai-chat", repair={"max_repairs": 1, "feedback": STYLES})
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    items = plan(inputs)
    arms = {it.feedback for it in items}
    assert arms == set(STYLES)
    assert len(items) == 4 * len(
        plan(
            load_inputs(
                parse_config(orjson.dumps(config("openai-chat", repair=None)), "cfg", ROOT), "cfg"
            )
        )
    )
    assert len({it.key(inputs.config.runs[0], None) for it in items}) == len(items)


def test_report_keeps_arms_apart(tmp_path: Path) -> None:
    path = tmp_path / "arms.jsonl"
    run_history(
        config(
            "openai-chat",
            repair={"max_repairs": 3, "feedback": ["traceback", "allowed"]},
            repetitions=5,
        ),
        path,
    )
    report = compute_files([path])
    assert [g.feedback for g in report.groups] == ["traceback", "allowed"]
    results = to_json(report)["results"]
    by_arm = {e["feedback"]: e for e in results}
    for e in results:
        assert e["attempted"] == 32 * 5  # each arm runs the whole matrix
        rate = e["repair_success_rate"]
        assert rate["denominator"] == e["repair"]["needed"] > 0
        assert rate["low"] <= rate["value"] <= rate["high"]
        curve = [e[f"repair_success_after_{k}"]["numerator"] for k in (1, 2, 3)]
        assert curve == sorted(curve) and curve[-1] == rate["numerator"]
    # the simulator's declared rates make allowed far better than traceback
    assert FEEDBACK_FIX_RATES["allowed"] > 2 * FEEDBACK_FIX_RATES["traceback"]
    assert (
        by_arm["allowed"]["repair_success_rate"]["value"]
        > by_arm["traceback"]["repair_success_rate"]["value"] + 0.2
    )
    text = render_table(report)
    assert "repair by feedback style" in text
    assert "· feedback allowed ·" in text


def test_rejudge_keeps_and_restores_repair_turns(
    histories: dict[str, Path], tmp_path: Path
) -> None:
    src = histories["openai-chat"]
    same = tmp_path / "same.jsonl"
    assert rejudge_file(src, same, warn=io.StringIO()) == []
    old, new = _attempts(src), _attempts(same)
    assert [r["repair"] for r in old] == [r["repair"] for r in new]
    assert [[t["judgement"] for t in r["repair_turns"]] for r in old] == [
        [t["judgement"] for t in r["repair_turns"]] for r in new
    ]
    # a history whose stored repair judgements are wrong gets them back from the bodies
    lines = src.read_bytes().splitlines()
    broken = []
    for line in lines:
        rec = orjson.loads(line)
        if rec.get("repair_turns"):
            for t in rec["repair_turns"]:
                t["judgement"] = {"verdict": "fail", "errors": [{"code": "planted"}]}
                t["valid"] = False
            rec["repair"] = {**rec["repair"], "passed_after": None, "valid_after": None}
        broken.append(orjson.dumps(rec))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(broken) + b"\n")
    fixed = tmp_path / "fixed.jsonl"
    rejudge_file(bad, fixed, warn=io.StringIO())
    assert [r["repair"] for r in _attempts(fixed)] == [r["repair"] for r in old]


# --- the metrics by hand ---


def _repaired(case: str, n: int, feedback: str, summary: dict[str, Any] | None) -> dict[str, Any]:
    invalid = summary is not None and summary["needed"]
    rec = attempt(
        case,
        n,
        j=judgement(calls_schema_valid=0 if invalid else 1),
    )
    rec["feedback"] = feedback
    rec["repair"] = summary or {
        "needed": False,
        "turns": 0,
        "valid_after": None,
        "passed_after": None,
        "transport_error": None,
        "input_tokens": 0,
        "output_tokens": 0,
    }
    rec["repair_turns"] = []
    return in_key_order(rec)


def _summary(
    passed: int | None, valid: int | None, turns: int, tokens: int, te: str | None = None
) -> dict[str, Any]:
    return {
        "needed": True,
        "turns": turns,
        "valid_after": valid,
        "passed_after": passed,
        "transport_error": te,
        "input_tokens": tokens,
        "output_tokens": 10 * turns,
    }


def test_metrics_by_hand(tmp_path: Path) -> None:
    records = [
        header(),
        _repaired("a", 1, "allowed", _summary(1, 1, 1, 100)),  # fixed at once
        _repaired("a", 2, "allowed", _summary(2, 2, 2, 200)),  # fixed at the second
        _repaired("b", 1, "allowed", _summary(None, 1, 1, 100)),  # valid, wrong: no success
        _repaired("b", 2, "allowed", _summary(None, None, 3, 300)),  # never valid: fallback
        _repaired("c", 1, "allowed", _summary(None, None, 1, 50, "rate_limited")),  # left out
        _repaired("c", 2, "allowed", None),  # needed none
    ]
    path = write_jsonl(tmp_path / "h.jsonl", records)
    for report in (compute_files([path]),):
        (g,) = report.groups
        assert g.repair is not None
        first = g.metrics()["raw_schema_validity"]
        rates = g.repair.rates(first)
        assert (first.numerator, first.denominator) == (1, 6)
        assert (
            rates["first_attempt_validity"].numerator,
            rates["first_attempt_validity"].denominator,
        ) == (1, 6)
        assert (
            rates["repair_success_rate"].numerator,
            rates["repair_success_rate"].denominator,
        ) == (2, 4)
        assert [rates[f"repair_success_after_{k}"].numerator for k in (1, 2, 3)] == [1, 2, 2]
        assert (rates["fallback_rate"].numerator, rates["fallback_rate"].denominator) == (1, 4)
        assert g.repair.repairs_per_success() == 1.5  # (1 + 2) / 2
        # (100 + 10) + (200 + 20) + (100 + 10) + (300 + 30) over the 4 that needed repair
        assert g.repair.overhead_per_attempt() == 770 / 4
        assert dict(g.repair.transport_errors) == {"rate_limited": 1}
        entry = to_json(report)["results"][0]
        assert entry["feedback"] == "allowed"
        assert entry["repair_success_rate"]["value"] == 0.5
        assert entry["per_case"]["a"]["counts"]["repair_success_rate"] == [2, 2]
        assert entry["per_case"]["b"]["counts"]["fallback_rate"] == [1, 2]


def test_sim_fix_rates_are_declared_and_fall() -> None:
    for style in STYLES:
        rates = [fix_rate(style, k) for k in (1, 2, 3)]
        assert rates[0] == FEEDBACK_FIX_RATES[style]
        assert rates[0] > rates[1] > rates[2]


@pytest.mark.parametrize(
    ("repair", "where", "says"),
    [
        ({"max_repairs": 4}, "$.repair.max_repairs", "less than or equal to 3"),
        ({"max_repairs": "2"}, "$.repair.max_repairs", "valid integer"),
        ({"max_repairs": 1, "feedback": ["nice"]}, "$.repair.feedback[0]", "'allowed_prose'"),
        ({"max_repairs": 1, "feedback": []}, "$.repair.feedback", "traceback, path_value"),
        ({"max_repairs": 1, "feedback": ["allowed", "allowed"]}, "$.repair.feedback", "repeat"),
        ({"max_repairs": 1, "styles": []}, "$.repair.styles", "unknown key"),
    ],
)
def test_config_refuses_bad_repair(repair: dict[str, Any], where: str, says: str) -> None:
    text = orjson.dumps(config("openai-chat", repair=repair), option=orjson.OPT_INDENT_2)
    with pytest.raises(LoadError) as exc:
        parse_config(text, "cfg.json", ROOT)
    (problem,) = exc.value.problems
    assert problem.file == "cfg.json" and problem.path == where and says in problem.message
    assert problem.line is not None and problem.line > 1


def test_config_repair_defaults() -> None:
    cfg = parse_config(orjson.dumps(config("openai-chat", repair={"max_repairs": 2})), "c", ROOT)
    assert cfg.repair is not None and cfg.repair.feedback == ["allowed"]
    assert cfg.feedback_arms == ["allowed"]
    off = parse_config(orjson.dumps(config("openai-chat", repair={"max_repairs": 0})), "c", ROOT)
    assert off.feedback_arms == [None]
    assert parse_config(orjson.dumps(config("gemini", repair=None)), "c", ROOT).feedback_arms == [
        None
    ]


@pytest.mark.parametrize("style", STYLES)
def test_sim_reads_the_style_from_the_result_sent(style: str, contract: Contract) -> None:
    spec = contract.tool("quote_delivery")
    assert spec is not None
    call = ToolCall("quote_delivery", {"origin": "A", "destination": "B", "service": "x"}, None)
    result = validation_problem(call, spec, style)
    assert feedback_style(ToolOutput("c1", "quote_delivery", result)) == style
    plain = {"ok": False, "error": {"code": "ORDER_NOT_FOUND"}}
    assert feedback_style(ToolOutput("c1", "get_order", plain)) is None


def test_resume_completes_every_arm(tmp_path: Path) -> None:
    data = config("openai-chat", repair={"max_repairs": 1, "feedback": ["traceback", "allowed"]})
    data["repetitions"] = 1
    out = tmp_path / "r.jsonl"
    full = run_history(data, out)
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[: len(lines) // 2]))  # a run cut halfway
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    asyncio.run(run(inputs, out, resume=True, progress_out=None))
    done = _attempts(out)
    key = lambda r: (r["case_id"], r["feedback"])  # noqa: E731
    assert sorted(map(key, done)) == sorted(map(key, full))


def test_resume_of_repair_arms_waits_for_no_one_and_duplicates_no_arm(tmp_path: Path) -> None:
    """A resume while another writer holds the history is refused with the file as it
    was; once free, it completes each arm once (the arm is part of the attempt key)."""
    data = config("openai-chat", repair={"max_repairs": 1, "feedback": ["traceback", "allowed"]})
    data["repetitions"] = 1
    out = tmp_path / "r.jsonl"
    full = run_history(data, out)
    lines = out.read_bytes().splitlines(keepends=True)
    cut = b"".join(lines[: len(lines) // 2])
    out.write_bytes(cut)
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    with HistoryLock(out), pytest.raises(HistoryBusy):
        asyncio.run(run(inputs, out, resume=True, progress_out=None))
    assert out.read_bytes() == cut
    asyncio.run(run(inputs, out, resume=True, progress_out=None))
    keys = Counter(attempt_key(r) for r in _attempts(out))
    assert max(keys.values()) == 1
    assert sorted(keys) == sorted(attempt_key(r) for r in full)
    assert {k[-1] for k in keys} == {"traceback", "allowed"}
