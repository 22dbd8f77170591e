"""Baseline comparison: noise passes, real drops fail, paired and unpaired alike."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, err, header, judgement, sig, text_judgement, write_jsonl
from toolstand.reporting.commands import cmd_compare
from toolstand.reporting.compare import compare, load_report
from toolstand.reporting.formats import dumps_json, to_json
from toolstand.reporting.metrics import compute_files

BAD = judgement(
    errors=[err("invalid_arguments", "pattern"), err("argument_mismatch")],
    calls_schema_valid=0,
    exact_correct=0,
    signature=sig("get_order", {"order_id": "bad"}),
)


def run(
    cases: int,
    reps: int,
    failing: set[tuple[int, int]],
    *,
    prefix: str = "case",
    unsafe: set[tuple[int, int]] = frozenset(),  # type: ignore[assignment]
    **hdr: Any,
) -> list[dict[str, Any]]:
    """cases × reps attempts; (case, rep) in ``failing`` fail on arguments, in
    ``unsafe`` call cancel_order uninvited."""
    recs: list[dict[str, Any]] = [header(**hdr)]
    for c in range(cases):
        for r in range(1, reps + 1):
            j = BAD if (c, r) in failing else judgement()
            if (c, r) in unsafe:
                j = text_judgement(
                    errors=[err("unsafe_call")], called=True, decision_correct=False, unsafe=True
                )
            recs.append(attempt(f"{prefix}{c}", r, j=j))
    return recs


def report_of(tmp_path: Path, name: str, recs: list[dict[str, Any]]) -> dict[str, Any]:
    return to_json(compute_files([write_jsonl(tmp_path / name, recs)]))


def without_cases(rep: dict[str, Any]) -> dict[str, Any]:
    """A report with no per-case counts (e.g. an older baseline): only unpaired tests."""
    for r in rep["results"]:
        r.pop("per_case")
    return rep


# 10 cases × 10 repetitions: 92/100 -> 91/100, the seed's "not a regression"
NOISE_BASE = {(c, r) for c in range(4) for r in (1, 2)}
NOISE_CUR = {(c, 1) for c in range(4, 9)} | {(c, 2) for c in range(4, 8)}
# 30 cases × 2 repetitions: 57/60 (95%) -> 24/60 (40%)
DROP_BASE = {(0, 1), (1, 1), (2, 1)}
DROP_CUR = {(c, r) for c in range(18) for r in (1, 2)}


@pytest.fixture
def noise(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    base = report_of(tmp_path, "b.jsonl", run(10, 10, NOISE_BASE))
    cur = report_of(tmp_path, "c.jsonl", run(10, 10, NOISE_CUR))
    assert base["results"][0]["pass_rate"]["numerator"] == 92
    assert cur["results"][0]["pass_rate"]["numerator"] == 91
    return base, cur


@pytest.fixture
def drop(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    base = report_of(tmp_path, "b.jsonl", run(30, 2, DROP_BASE))
    cur = report_of(tmp_path, "c.jsonl", run(30, 2, DROP_CUR))
    assert base["results"][0]["pass_rate"]["numerator"] == 57
    assert cur["results"][0]["pass_rate"]["numerator"] == 24
    return base, cur


def test_92_to_91_over_ten_cases_is_not_a_regression_paired(noise: Any) -> None:
    result = compare(*noise)
    assert result.exit_code == 0 and result.drops == []
    check = next(c for c in result.checks if c.metric == "pass_rate")
    assert check.test == "mcnemar" and check.paired_cases == 10
    assert (check.worse, check.better) == (5, 4)
    assert check.baseline == (92, 100) and check.current == (91, 100)
    assert check.delta == pytest.approx(-0.01)


def test_92_to_91_is_not_a_regression_unpaired(noise: Any) -> None:
    result = compare(without_cases(noise[0]), without_cases(noise[1]))
    assert result.exit_code == 0
    check = next(c for c in result.checks if c.metric == "pass_rate")
    assert check.test == "two_proportion" and check.p_value > 0.3


def test_95_to_40_over_30_cases_is_a_regression_paired(drop: Any) -> None:
    result = compare(*drop)
    assert result.exit_code == 1
    by_metric = {c.metric: c for c in result.drops if c.test == "mcnemar"}
    assert {"pass_rate", "raw_schema_validity", "exact_argument_accuracy"} <= set(by_metric)
    assert "decision_accuracy" not in by_metric  # the calls were still made
    pr = by_metric["pass_rate"]
    assert pr.test == "mcnemar" and (pr.worse, pr.better) == (15, 0)
    assert pr.p_value == pytest.approx(2**-15)
    assert pr.baseline == (57, 60) and pr.current == (24, 60)
    assert pr.delta == pytest.approx(-0.55)
    assert [ch.case_id for ch in pr.cases] == [f"case{c}" for c in range(3, 18)]
    assert (pr.cases[0].baseline, pr.cases[0].current) == ((2, 2), (0, 2))


def test_95_to_40_is_a_regression_unpaired(drop: Any) -> None:
    result = compare(without_cases(drop[0]), without_cases(drop[1]))
    assert result.exit_code == 1
    pr = next(c for c in result.drops if c.metric == "pass_rate")
    assert pr.test == "two_proportion" and pr.p_value < 1e-6 and pr.cases == []


def test_renamed_cases_fall_back_to_the_unpaired_test(tmp_path: Path) -> None:
    base = report_of(tmp_path, "b.jsonl", run(30, 2, DROP_BASE))
    cur = report_of(tmp_path, "c.jsonl", run(30, 2, DROP_CUR, prefix="new"))
    result = compare(base, cur)
    assert result.exit_code == 1
    assert {c.test for c in result.checks} == {"two_proportion"}
    assert any("30 case(s) only in baseline, 30 only in current" in n for n in result.notes)


def test_a_rise_in_unsafe_calls_is_a_regression_and_a_fall_is_not(tmp_path: Path) -> None:
    safe = report_of(tmp_path, "a.jsonl", run(30, 2, set()))
    risky = report_of(tmp_path, "b.jsonl", run(30, 2, set(), unsafe={(c, 1) for c in range(10)}))
    worse = compare(safe, risky)
    unsafe = next(c for c in worse.drops if c.metric == "unsafe_call_rate")
    assert unsafe.current == (10, 60) and unsafe.worse == 10
    assert unsafe.delta is not None and unsafe.delta > 0
    better = compare(risky, safe)
    assert not any(c.metric == "unsafe_call_rate" for c in better.drops)
    assert better.exit_code == 0


def test_an_improvement_is_never_a_drop(drop: Any) -> None:
    assert compare(drop[1], drop[0]).exit_code == 0


def test_notes_on_changed_hashes_and_missing_groups(tmp_path: Path) -> None:
    base = report_of(tmp_path, "a.jsonl", run(3, 1, set()))
    cur = report_of(
        tmp_path,
        "b.jsonl",
        run(3, 1, set(), contract_hash="f" * 64, cases_hash="1" * 64, prompt_hash="2" * 64),
    )
    cur["results"].append({**cur["results"][0], "model": "other"})
    notes = compare(base, cur).notes
    assert any(n.startswith("contract hash differs") for n in notes)
    assert any(n.startswith("cases hash differs") for n in notes)
    assert any(n.startswith("prompt hash differs") for n in notes)
    assert "sim/other/auto: not in baseline, not compared" in notes


def test_holm_correction_is_available(drop: Any) -> None:
    result = compare(*drop, correction="holm")
    assert result.exit_code == 1
    assert all(c.p_adjusted >= c.p_value for c in result.checks)


def test_load_report_reads_jsonl_and_json_reports(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "a.jsonl", run(3, 2, {(0, 1)}))
    from_jsonl = load_report(p)
    j = tmp_path / "a.json"
    j.write_bytes(dumps_json(compute_files([p])))
    assert load_report(j)["results"] == from_jsonl["results"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"no": "results"}')
    with pytest.raises(ValueError):
        load_report(bad)


def test_cmd_compare_exit_codes(tmp_path: Path) -> None:
    base = write_jsonl(tmp_path / "b.jsonl", run(30, 2, DROP_BASE))
    cur = write_jsonl(tmp_path / "c.jsonl", run(30, 2, DROP_CUR))
    out = io.StringIO()
    assert cmd_compare(str(base), str(cur), 0.05, False, out=out) == 1
    text = out.getvalue()
    assert "  DROP pass_rate                    95.0% (57/60) → 40.0% (24/60) -55.0 pp" in text
    assert "       McNemar over 30 paired cases: 15 got worse, 0 got better" in text
    assert "       cases: case3 2/2→0/2, case4 2/2→0/2," in text
    assert "  ok   decision_accuracy " in text
    assert max(len(line) for line in text.splitlines()[3:]) <= 100  # all but the paths
    out = io.StringIO()
    assert cmd_compare(str(base), str(base), 0.05, True, out=out) == 0
    data = orjson.loads(out.getvalue())
    assert data["regression"] is False and data["drops"] == []
    assert cmd_compare(str(tmp_path / "none"), str(cur), 0.05, False, out=io.StringIO()) == 2
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    assert cmd_compare(str(junk), str(cur), 0.05, False, out=io.StringIO()) == 2
    # another model entirely: nothing to compare is not a pass
    other = write_jsonl(tmp_path / "o.jsonl", [header(), attempt("case0", model="m2")])
    assert cmd_compare(str(base), str(other), 0.05, False, out=io.StringIO()) == 2


def test_more_repetitions_at_the_same_rate_is_not_a_regression(tmp_path: Path) -> None:
    # 95% per attempt on both sides; with 10 repetitions far more cases have one failure
    # than with 3, so pairing cases by "all attempts passed" would cry wolf
    base = report_of(tmp_path, "b.jsonl", run(30, 3, {(0, 1), (7, 2), (14, 3), (21, 1)}))
    cur_fail = {(c, 1 + c % 10) for c in range(0, 30, 2)}
    cur = report_of(tmp_path, "c.jsonl", run(30, 10, cur_fail))
    result = compare(base, cur)
    assert result.exit_code == 0
    check = next(c for c in result.checks if c.metric == "pass_rate")
    assert check.test == "two_proportion"
    assert check.baseline == (86, 90) and check.current == (285, 300)
    assert any("scored a different number of times" in n for n in result.notes)
