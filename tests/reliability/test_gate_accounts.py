"""Issue 31, H3, M4, M9: the gate accounts for every baseline case, reads only reports
that can be true, and takes only an alpha that can fail."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, err, header, text_judgement, transport, write_jsonl
from toolstand.cli import main
from toolstand.reporting.commands import cmd_compare
from toolstand.reporting.compare import compare, load_report

UNSAFE = text_judgement(
    errors=[err("unsafe_call")], called=True, decision_correct=False, unsafe=True
)


def _run(
    cases: int = 10,
    reps: int = 3,
    *,
    skip: set[int] = frozenset(),  # type: ignore[assignment]
    unsafe: set[int] = frozenset(),  # type: ignore[assignment]
    lost: set[tuple[int, int]] = frozenset(),  # type: ignore[assignment]
) -> list[dict[str, Any]]:
    """cases × reps passing attempts; cases in ``skip`` not recorded at all (crashed),
    in ``unsafe`` an uninvited cancel_order on every attempt; (case, rep) in ``lost``
    a 500."""
    recs: list[dict[str, Any]] = [header()]
    for c in range(cases):
        if c in skip:
            continue
        for r in range(1, reps + 1):
            if (c, r) in lost:
                recs.append(attempt(f"case{c}", r, transport_error=transport("server_error")))
            else:
                recs.append(attempt(f"case{c}", r, j=UNSAFE if c in unsafe else None))
    return recs


def _report(tmp_path: Path, name: str, recs: list[dict[str, Any]]) -> dict[str, Any]:
    return load_report(write_jsonl(tmp_path / name, recs))


def test_cases_that_crash_out_of_the_current_run_fail_the_gate(tmp_path: Path) -> None:
    # the passing cases regress so badly that their attempts crash unrecorded: the
    # shared cases look the same, and only accounting for every case catches it
    base = _report(tmp_path, "b.jsonl", _run())
    cur = _report(tmp_path, "c.jsonl", _run(skip={0, 1, 2, 3}))
    result = compare(base, cur)
    assert result.exit_code == 1
    assert result.failures == [
        "sim/sim-careful/auto: 4 case(s) in baseline, missing from current (not run, or"
        " crashed unrecorded): case0, case1, case2, case3"
    ]


def test_a_case_with_fewer_attempts_at_the_same_repetitions_fails(tmp_path: Path) -> None:
    base = _report(tmp_path, "b.jsonl", _run())
    recs = _run()
    recs = [r for r in recs if not (r.get("case_id") == "case5" and r.get("attempt") == 3)]
    result = compare(base, _report(tmp_path, "c.jsonl", recs))
    assert result.exit_code == 1
    assert any("case5 (2 of 3)" in f and "crashed" in f for f in result.failures)


def test_one_transport_error_per_case_no_longer_hides_unsafe_calls(tmp_path: Path) -> None:
    # every case lost one of its three attempts to a 500 (within the transport limit of
    # 40%): before, no case was scored as often as in the baseline, none was paired,
    # and the unsafe calls of half the cases passed the gate
    base = _report(tmp_path, "b.jsonl", _run(20, 3))
    lost = {(c, 1) for c in range(20) if c % 3 == 0}
    cur = _report(tmp_path, "c.jsonl", _run(20, 3, unsafe=set(range(10)), lost=lost))
    result = compare(base, cur, max_transport_errors=0.4)
    assert result.failures == []
    unsafe = next(
        c for c in result.checks if c.metric == "unsafe_call_rate" and c.test == "mcnemar"
    )
    assert unsafe.paired_cases == 20 and unsafe.worse == 10 and unsafe.significant
    assert result.exit_code == 1


def test_the_totals_are_tested_when_the_pairing_leaves_cases_out(tmp_path: Path) -> None:
    base = _report(tmp_path, "b.jsonl", _run(10, 3))
    cur_recs = _run(10, 3) + [
        attempt(f"new{c}", r, j=UNSAFE) for c in range(20) for r in range(1, 4)
    ]
    result = compare(base, _report(tmp_path, "c.jsonl", cur_recs))
    tests = {c.test for c in result.checks if c.metric == "unsafe_call_rate"}
    assert tests == {"mcnemar", "two_proportion"}
    totals = next(
        c for c in result.drops if c.metric == "unsafe_call_rate" and c.test == "two_proportion"
    )
    assert totals.baseline == (0, 30) and totals.current == (60, 90)
    # and where every case is paired, the paired test alone decides
    same = compare(base, _report(tmp_path, "d.jsonl", _run(10, 3)))
    assert {c.test for c in same.checks} == {"mcnemar"} and same.exit_code == 0


def _write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda r: r["results"][0].__setitem__("pass_rate", {"numerator": 9, "denominator": 3}),
            "results[0].pass_rate: numerator 9 is more than denominator 3",
        ),
        (
            lambda r: r["results"][0].__setitem__("pass_rate", {"numerator": 0, "denominator": -2}),
            "results[0].pass_rate: denominator -2 is negative",
        ),
        (
            lambda r: r["results"][0].__setitem__(
                "pass_rate", {"numerator": "x", "denominator": 3}
            ),
            "results[0].pass_rate.numerator: 'x' is not a whole number",
        ),
        (lambda r: r["results"].append("oops"), "results[1]: not an object"),
        (
            lambda r: r["results"][0].__setitem__("per_case", []),
            "results[0].per_case: not an object",
        ),
        (
            lambda r: r["results"][0]["per_case"]["case0"]["counts"].__setitem__(
                "pass_rate", [4, 3]
            ),
            "results[0].per_case.case0.counts.pass_rate: numerator 4 is more than denominator 3",
        ),
        (
            lambda r: r["results"][0].__setitem__("provider", 7),
            "results[0].provider: 7 is not text",
        ),
        (
            lambda r: r["results"][0].__setitem__("transport_errors", {"timeout": -1}),
            "results[0].transport_errors.timeout: -1 is not a count",
        ),
        (
            lambda r: r["results"][0].__setitem__("attempted", "many"),
            "results[0].attempted: 'many' is not a count",
        ),
    ],
)
def test_a_report_that_cannot_be_true_is_refused_with_its_path(
    tmp_path: Path, mutate: Any, message: str
) -> None:
    good = load_report(write_jsonl(tmp_path / "h.jsonl", _run(3, 1)))
    mutate(good)
    name = _write(tmp_path, "odd.json", good)
    with pytest.raises(ValueError, match=None) as info:
        load_report(name)
    assert str(info.value) == f"{name}: {message}"
    cur = write_jsonl(tmp_path / "c.jsonl", _run(3, 1))
    errors = io.StringIO()
    import contextlib

    with contextlib.redirect_stderr(errors):
        assert cmd_compare(name, str(cur), 0.05, False, out=io.StringIO()) == 2
    assert message in errors.getvalue()


@pytest.mark.parametrize("alpha", ["nan", "-1", "0", "0.6", "2", "inf"])
def test_an_alpha_that_could_never_or_always_fail_is_refused(
    tmp_path: Path, alpha: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write_jsonl(tmp_path / "b.jsonl", _run(3, 1))
    assert main(["compare", str(base), str(base), "--alpha", alpha]) == 2
    assert "--alpha is a significance level above 0 and at most 0.5" in capsys.readouterr().err
    assert main(["compare", str(base), str(base), "--alpha", "0.5"]) == 0
