"""The four views of a report: JSON, error CSV, JUnit XML and the text table."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import orjson
import pytest

from tests.support.metrics_suite import EXPECTED, suite
from tests.support.records import attempt, err, header, judgement, transport, write_jsonl
from toolstand.reporting.commands import cmd_report
from toolstand.reporting.formats import (
    CSV_COLUMNS,
    WIDTH,
    fmt_rate,
    render_table,
    to_json,
    write_errors_csv,
    write_junit,
)
from toolstand.reporting.metrics import METRICS, Report, compute_files
from toolstand.reporting.stats import Rate


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "run.jsonl", suite())


@pytest.fixture
def report(path: Path) -> Report:
    return compute_files([path], collect_failures=True)


def test_json_has_the_seed_fields_and_every_metric_at_top_level(report: Report) -> None:
    out = to_json(report)
    assert out["run_id"] == "run-1"
    assert out["contract_hash"] == "c" * 64
    assert out["prompt_version"] == "delivery-router-v1"
    assert out["cases_version"] == "delivery-v1"
    assert out["cases_hash"] == "d" * 64 and out["prompt_hash"] == "e" * 64
    auto = next(r for r in out["results"] if r["mode"] == "auto")
    assert (auto["provider"], auto["model"], auto["simulated"]) == ("sim", "sim-careful", True)
    assert (auto["attempted"], auto["scored"]) == (11, 9)
    assert auto["transport_errors"] == {"rate_limited": 1, "server_error": 1}
    for name in METRICS:
        m = auto[name]
        assert set(m) == {"value", "numerator", "denominator", "low", "high"}
        assert (m["numerator"], m["denominator"]) == EXPECTED[name]
    assert auto["per_case"]["recovery"]["counts"]["error_recovery_accuracy"] == [1, 2]
    assert auto["per_case"]["down"]["pass_rate"] is None
    assert auto["flaky_cases"] == ["lookup", "wrong", "missing", "recovery"]
    forced = next(r for r in out["results"] if r["mode"] == "forced")
    assert forced["error_recovery_accuracy"]["value"] is None
    orjson.dumps(out)  # serializable as is


def test_run_id_is_a_list_for_several_files(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [header("r-a"), attempt("x", run_id="r-a")])
    b = write_jsonl(tmp_path / "b.jsonl", [header("r-b"), attempt("x", 2, run_id="r-b")])
    out = to_json(compute_files([a, b]))
    assert out["run_id"] == ["r-a", "r-b"]
    assert out["results"][0]["attempted"] == 2  # one group across both files


def test_error_csv_has_one_row_per_code(report: Report) -> None:
    buf = io.StringIO()
    n = write_errors_csv(report, buf)
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert rows[0] == [
        "provider",
        "model",
        "mode",
        "case_id",
        "attempt",
        "error_code",
        "expected",
        "actual",
    ]
    body = [(r[2], r[3], r[4], r[5]) for r in rows[1:]]
    assert n == len(body) == 10
    assert body == [
        ("auto", "lookup", "2", "invalid_arguments.pattern"),
        ("auto", "lookup", "2", "argument_mismatch"),
        ("auto", "lookup", "3", "rate_limited"),
        ("auto", "wrong", "1", "wrong_tool"),
        ("auto", "missing", "2", "unexpected_call"),
        ("auto", "missing", "2", "unsafe_call"),
        ("auto", "recovery", "2", "false_success"),
        ("auto", "recovery", "3", "timeout"),
        ("auto", "down", "1", "server_error"),
        ("forced", "lookup", "1", "unsafe_call"),
    ]
    mismatch = rows[2]
    assert orjson.loads(mismatch[6]) == {"order_id": "ORD-1"}
    assert orjson.loads(mismatch[7]) == {"order_id": "1"}
    assert rows[8][7] == "second turn: failed"
    assert rows[9][7] == "502 Bad Gateway"


def test_junit_is_well_formed_with_the_right_counts(report: Report) -> None:
    buf = io.BytesIO()
    write_junit(report, buf)
    root = ET.fromstring(buf.getvalue())
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("6", "5", "1")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    auto = suites["sim/sim-careful/auto"]
    assert (auto.get("tests"), auto.get("failures"), auto.get("errors")) == ("5", "4", "1")
    cases = {c.get("name"): c for c in auto.iter("testcase")}
    assert all(c.get("classname") == "sim/sim-careful/auto" for c in cases.values())
    failure = cases["lookup"].find("failure")
    assert failure is not None and failure.get("message") == "1 of 3 attempts failed"
    assert failure.text == (
        "attempt 2: invalid_arguments.pattern, argument_mismatch\nattempt 3: rate_limited"
    )
    # only transport failures: an <error>, not a <failure>
    down = cases["down"]
    assert down.find("failure") is None
    error = down.find("error")
    assert error is not None and error.get("type") == "transport"
    assert "server_error" in (error.text or "")
    forced = suites["sim/sim-careful/forced"]
    assert forced.get("failures") == "1"


def test_junit_passing_case_has_no_children(tmp_path: Path) -> None:
    p = write_jsonl(tmp_path / "ok.jsonl", [header(), attempt("a"), attempt("a", 2)])
    buf = io.BytesIO()
    write_junit(compute_files([p], collect_failures=True), buf)
    root = ET.fromstring(buf.getvalue())
    (case,) = list(root.iter("testcase"))
    assert list(case) == [] and root.get("failures") == "0"


def test_rate_format() -> None:
    assert fmt_rate(Rate(23, 25)) == "92.0% (23/25) [75.0–97.8]"
    assert fmt_rate(Rate(0, 0)) == "— (0/0)"


def test_table_fits_100_columns_and_marks_the_simulator(report: Report) -> None:
    text = render_table(report)
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    assert "sim / sim-careful (simulated) · mode auto" in text
    assert "pass_rate                      55.6% (5/9) [26.7–81.1]" in text
    assert "error_recovery_accuracy        — (0/0)" in text  # the forced group
    assert "flaky cases (4): lookup, wrong, missing, recovery" in text


def test_table_without_simulator_has_no_mark(tmp_path: Path) -> None:
    runs = [{"provider": "p", "model": "m", "api": "openai-chat", "simulated": False}]
    recs = [header(runs=runs), attempt("a", provider="p", model="m", simulated=False)]
    text = render_table(compute_files([write_jsonl(tmp_path / "r.jsonl", recs)]))
    assert "p / m · mode auto" in text and "simulated" not in text


def test_cmd_report_writes_all_views(path: Path, tmp_path: Path) -> None:
    out = io.StringIO()
    csv_path, junit_path = tmp_path / "errors.csv", tmp_path / "junit.xml"
    rc = cmd_report([str(path)], True, str(csv_path), str(junit_path), out=out)
    assert rc == 0
    assert orjson.loads(out.getvalue())["results"][0]["attempted"] == 11
    assert csv_path.read_text().splitlines()[0] == ",".join(CSV_COLUMNS)
    assert ET.parse(junit_path).getroot().get("tests") == "6"
    out = io.StringIO()
    assert cmd_report([str(path)], False, None, None, out=out) == 0
    assert "decision_accuracy" in out.getvalue()


def test_cmd_report_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cmd_report([str(tmp_path / "nope.jsonl")], False, None, None, out=io.StringIO()) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_text_report_has_a_per_category_table(tmp_path: Path) -> None:
    """Issue 30: per group, a category's cases pooled (pass and normalized pass with
    counts and intervals), by name, the cases whose records name none last."""
    fail = judgement(errors=[err("argument_mismatch")], exact_correct=0)
    recs = [
        header(),
        {**attempt("a1"), "category": "simple"},
        {**attempt("a1", 2, j=fail), "category": "simple"},
        {**attempt("a2"), "category": "simple"},
        {**attempt("b1"), "category": "multiple"},
        {**attempt("c1"), "category": None},
        {**attempt("c1", 2, transport_error=transport("timeout")), "category": None},
    ]
    text = render_table(compute_files([write_jsonl(tmp_path / "r.jsonl", recs)]))
    table = text.split("  per category (3)")[1].splitlines()
    assert table[0].split() == ["cases", "pass_rate", "normalized_pass_rate"]
    rows = [line.split(maxsplit=2) for line in table[1:4]]
    assert [r[:2] for r in rows] == [["multiple", "1"], ["simple", "2"], ["(none)", "1"]]
    assert rows[1][2].startswith("66.7% (2/3) [")
    assert rows[2][2].startswith("100.0% (1/1) [")  # the timeout is not scored
    assert max(map(len, text.splitlines())) <= WIDTH


def test_a_long_category_name_is_cut_to_keep_the_table_in_width(tmp_path: Path) -> None:
    long = "live_parallel_multiple_with_a_much_longer_name_than_bfcl_has"
    recs = [header(), {**attempt("a"), "category": long}, {**attempt("b"), "category": "x"}]
    text = render_table(compute_files([write_jsonl(tmp_path / "r.jsonl", recs)]))
    row = next(line for line in text.splitlines() if "live_parallel" in line)
    assert row.split()[0] == long[:27] + "…" and row.split()[1] == "1"
    assert max(map(len, text.splitlines())) <= WIDTH


def test_a_report_without_categories_has_no_category_table(tmp_path: Path) -> None:
    recs = [header(), *({**attempt(c), "category": None} for c in ("a", "b"))]
    text = render_table(compute_files([write_jsonl(tmp_path / "r.jsonl", recs)]))
    assert "per category" not in text
    assert text.splitlines()[-1].startswith("  tokens per attempt")
