"""Every metric recomputed from hand-built attempts with known answers, exclusions included."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.metrics_suite import EXPECTED, suite
from tests.support.records import (
    SIG_TEXT,
    attempt,
    err,
    header,
    judgement,
    lead_order,
    second_turn,
    sig,
    text_judgement,
    write_jsonl,
)
from toolstand.history.read import iter_records
from toolstand.reporting.formats import to_json
from toolstand.reporting.metrics import METRICS, GroupStats, Report, compute, compute_files
from toolstand.run.runner import load_inputs, run
from toolstand.spec.config import parse_config


def _group(report: Report, mode: str = "auto") -> GroupStats:
    (g,) = [g for g in report.groups if g.mode == mode]
    return g


def _write(tmp_path: Path, recs: list[dict[str, Any]], name: str = "run.jsonl") -> Path:
    return write_jsonl(tmp_path / name, recs)


@pytest.fixture
def report(tmp_path: Path) -> Report:
    return compute_files([_write(tmp_path, suite())], collect_failures=True)


def test_every_metric_has_its_known_counts(report: Report) -> None:
    g = _group(report)
    got = {name: (r.numerator, r.denominator) for name, r in g.metrics().items()}
    assert got == EXPECTED
    assert set(got) == set(METRICS)


def test_transport_failures_are_attempted_but_never_scored(report: Report) -> None:
    g = _group(report)
    assert (g.attempted, g.scored) == (11, 9)
    assert dict(g.transport_errors) == {"rate_limited": 1, "server_error": 1}
    assert dict(g.second_turn_transport_errors) == {"timeout": 1}
    assert g.cases["down"].attempted == 1 and g.cases["down"].scored == 0


def test_modes_are_never_mixed(report: Report) -> None:
    forced = _group(report, "forced")
    assert (forced.attempted, forced.scored) == (1, 1)
    m = forced.metrics()
    assert (m["unsafe_call_rate"].numerator, m["unsafe_call_rate"].denominator) == (1, 1)
    assert m["error_recovery_accuracy"].value is None  # 0/0, not 0
    assert m["error_recovery_accuracy"].to_dict() == {
        "value": None,
        "numerator": 0,
        "denominator": 0,
        "low": None,
        "high": None,
    }


def test_rate_dict_holds_wilson_interval(report: Report) -> None:
    d = _group(report).metrics()["pass_rate"].to_dict()
    assert d["value"] == pytest.approx(5 / 9)
    assert (d["low"], d["high"]) == pytest.approx((0.26665, 0.81122), abs=1e-5)


def test_per_case_rates_and_flaky_cases(report: Report) -> None:
    g = _group(report)
    rates = {cid: (t.passed, t.scored) for cid, t in g.cases.items()}
    assert rates == {
        "lookup": (1, 2),
        "wrong": (1, 2),
        "missing": (1, 2),
        "recovery": (2, 3),
        "down": (0, 0),
    }
    # recovery agrees on the signature but not on the verdict: still flaky
    assert g.flaky_cases() == ["lookup", "wrong", "missing", "recovery"]
    assert g.cases["recovery"].signatures == {sig("get_order"): 3}


def test_latency_tokens_retries(report: Report) -> None:
    g = _group(report)
    assert g.latency() == {"count": 11, "p50": 60.0, "p95": pytest.approx(105.0), "max": 110.0}
    tok = g.tokens()
    assert (tok["input_total"], tok["output_total"], tok["attempts_with_usage"]) == (900, 90, 9)
    assert (tok["input_per_attempt"], tok["output_per_attempt"]) == (100.0, 10.0)
    assert g.retries == 3  # 2 on the 429, 1 in a second turn
    assert g.repetitions == 3


def test_cost_per_attempt_and_per_passed_attempt(tmp_path: Path) -> None:
    prices = {"sim-careful": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}
    r = compute_files([_write(tmp_path, suite())], prices=prices)
    cost = _group(r).cost(r.price_for(_group(r)))
    total = (900 * 1.0 + 90 * 2.0) / 1e6
    assert cost == {
        "source": "prices",
        "total_usd": pytest.approx(total),
        "per_attempt_usd": pytest.approx(total / 11),
        "per_passed_attempt_usd": pytest.approx(total / 5),
    }


def test_prices_come_from_the_run_header(tmp_path: Path) -> None:
    recs = suite()
    recs[0]["runs"][0]["prices"] = {"input_per_mtok": 3.0, "output_per_mtok": 0.0}
    r = compute_files([_write(tmp_path, recs)])
    cost = _group(r).cost(r.price_for(_group(r)))
    assert cost is not None and cost["total_usd"] == pytest.approx(900 * 3.0 / 1e6)


def test_cost_falls_back_to_recorded_cost_and_else_is_absent(tmp_path: Path) -> None:
    r = compute([header(), attempt("a", cost_usd=0.5), attempt("a", 2, cost_usd=0.25)])
    g = r.groups[0]
    assert g.cost(r.price_for(g)) == {
        "source": "records",
        "total_usd": 0.75,
        "per_attempt_usd": 0.375,
        "per_passed_attempt_usd": 0.375,
    }
    r = compute([header(), attempt("a")])
    assert r.groups[0].cost(r.price_for(r.groups[0])) is None


def test_simulated_flag_from_records_or_header() -> None:
    r = compute([header(), attempt("a", simulated=False)])
    assert r.groups[0].simulated  # the header's runs[] says so
    r = compute([header(runs=[]), attempt("a", simulated=False)])
    assert not r.groups[0].simulated


def test_failures_keep_codes_for_the_error_table(report: Report) -> None:
    rows = [
        (f.case_id, f.attempt, f.failed, [e["code"] for e in f.errors]) for f in report.failures
    ]
    auto = [row for f, row in zip(report.failures, rows, strict=True) if f.mode == "auto"]
    assert auto == [
        ("lookup", 2, True, ["invalid_arguments", "argument_mismatch"]),
        ("lookup", 3, False, []),
        ("wrong", 1, True, ["wrong_tool"]),
        ("missing", 2, True, ["unexpected_call", "unsafe_call"]),
        ("recovery", 2, True, ["false_success"]),
        ("recovery", 3, False, []),  # passed, but its second turn timed out
        ("down", 1, False, []),
    ]


def test_second_turn_codes_are_taken_from_second_turn_when_not_folded_in() -> None:
    j = judgement()  # the runner left turn-2 errors out of the attempt's list
    j["verdict"] = "fail"
    st = second_turn(passed=False, errors=[err("repeated_call", actual=["cancel_order"])])
    r = compute([attempt("a", j=j, st=st)], collect_failures=True)
    assert [(e["code"], e["turn"]) for e in r.failures[0].errors] == [("repeated_call", 2)]


def test_judgement_without_metrics_is_counted_apart() -> None:
    rec = attempt("a")
    del rec["judgement"]["metrics"]
    r = compute([rec, attempt("a", 2)])
    g = r.groups[0]
    assert (g.attempted, g.scored, g.unjudged) == (2, 1, 1)


def test_attempt_with_neither_judgement_nor_transport_error_is_not_counted() -> None:
    rec = attempt("a")
    rec["judgement"] = None
    r = compute([rec, attempt("a", 2)])
    g = r.groups[0]
    assert (g.attempted, g.scored, g.unjudged) == (1, 1, 0)


def _json(report: Report) -> dict[str, Any]:
    out = to_json(report)
    out.pop("files")
    return out


def test_fast_and_full_reading_agree(tmp_path: Path) -> None:
    recs = suite()
    fast = compute_files([_write(tmp_path, recs)], collect_failures=True)
    full = compute(iter_records([tmp_path / "run.jsonl"]), collect_failures=True)
    assert _json(fast) == _json(full)
    assert [vars(f) for f in fast.failures] == [vars(f) for f in full.failures]


def test_a_history_out_of_key_order_gives_the_same_report(tmp_path: Path) -> None:
    recs = suite()
    good = compute_files([_write(tmp_path, recs, "a.jsonl")], collect_failures=True)
    other = [recs[0], *(lead_order(r) for r in recs[1:])]
    slow = compute_files([_write(tmp_path, other, "b.jsonl")], collect_failures=True)
    assert _json(good) == _json(slow)
    assert [vars(f) for f in good.failures] == [vars(f) for f in slow.failures]


def test_judgement_cache_does_not_merge_different_cases(tmp_path: Path) -> None:
    # byte-identical judgements in two cases: counted per case, not once
    recs = [header()] + [attempt(c, n) for c in ("a", "b") for n in (1, 2, 3)]
    g = compute_files([_write(tmp_path, recs)]).groups[0]
    assert {c: t.scored for c, t in g.cases.items()} == {"a": 3, "b": 3}
    assert g.metrics()["consistency"].numerator == 6


def test_text_signature_constant_is_what_the_judge_writes() -> None:
    from toolstand.decision import ModelDecision
    from toolstand.judge.verdict import signature

    assert signature(ModelDecision(kind="text", text="hi", calls=[])) == SIG_TEXT


def test_many_lines_out_of_key_order_switch_to_whole_decoding(tmp_path: Path) -> None:
    # past a thousand misses the collector stops trying to slice: same numbers either way
    recs = [header()] + [
        attempt(f"c{i % 7}", i // 7 + 1, j=judgement() if i % 5 else text_judgement())
        for i in range(1100)
    ]
    fast = compute_files([_write(tmp_path, recs, "a.jsonl")])
    other = [recs[0], *(lead_order(r) for r in recs[1:])]
    slow = compute_files([_write(tmp_path, other, "b.jsonl")])
    assert _json(fast) == _json(slow)
    assert _group(slow).attempted == 1100


def test_error_values_named_like_cut_points_keep_their_errors(tmp_path: Path) -> None:
    j = judgement(errors=[err("argument_mismatch", expected={"a": 1}, actual={"b": 2})])
    j["errors"][0]["actual"] = {"x": 1, "calls": [1], "errors": 2}
    recs = [header(), attempt("a", j=j)]
    fast = compute_files([_write(tmp_path, recs)], collect_failures=True)
    assert fast.failures[0].errors == j["errors"]


def test_no_tools_control_from_the_simulator(tmp_path: Path) -> None:
    """Issue 14 item 7: in the no_tools control every case expects no call, so the careful
    persona passes every case (it answers with text), tool selection and argument
    accuracy have no denominator, and no_tools does not fill the failure list."""
    root = Path(__file__).resolve().parent.parent
    data = {
        "runs": [
            {"provider": "sim", "model": "sim-careful", "api": "anthropic", "base_url": "sim"}
        ],
        "system_prompt": "prompts/delivery-router-v1.txt",
        "tools": "contracts/delivery_tools.json",
        "cases": "cases/delivery.jsonl",
        "modes": ["auto", "no_tools"],
        "repetitions": 1,
    }
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", root), "cfg")
    out = tmp_path / "run.jsonl"
    asyncio.run(run(inputs, out, progress_out=None))
    report = compute_files([out], collect_failures=True)
    groups = {g.mode: g for g in report.groups}
    control = groups["no_tools"]
    rates = control.metrics()
    assert control.scored == len(control.cases) > 0
    assert (rates["pass_rate"].numerator, rates["pass_rate"].denominator) == (
        control.scored,
        control.scored,
    )
    assert rates["decision_accuracy"].numerator == control.scored
    for name in (
        "tool_selection_accuracy",
        "exact_argument_accuracy",
        "normalized_argument_accuracy",
    ):
        assert rates[name].denominator == 0, name
    assert not [f for f in report.failures if f.mode == "no_tools"]
    # auto over the same cases still asks for calls where they are expected
    assert groups["auto"].metrics()["tool_selection_accuracy"].denominator > 0
