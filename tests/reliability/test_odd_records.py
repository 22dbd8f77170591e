"""Issue 13, item 7: an attempt line without a field the stand needs is skipped with a
warning naming its line, by every reader: report, compare, rejudge and the History index.

Each odd record is written twice, in the runner's key order (the fast readers) and in
another order (the careful ones), between good lines that must still be counted.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, header, lead_order, transport, write_jsonl
from toolstand.history.index import HistoryIndex
from toolstand.history.read import in_key_order, iter_records
from toolstand.reporting.compare import load_report
from toolstand.reporting.metrics import compute_files
from toolstand.run.rejudge import rejudge_file


def _without(key: str) -> dict[str, Any]:
    rec = attempt("b")
    del rec[key]
    return rec


def _with(**changes: Any) -> dict[str, Any]:
    return {**attempt("b"), **changes}


ODD: dict[str, tuple[dict[str, Any], str]] = {
    "bare": ({"type": "attempt"}, "missing field run_id"),
    "no provider": (_without("provider"), "missing field provider"),
    "null model": (_with(model=None), "field model is null, not a string"),
    "mode a number": (_with(mode=3), "field mode is a number, not a string"),
    "case_id a list": (_with(case_id=["x"]), "field case_id is an array, not a string"),
    "no run_id": (_without("run_id"), "missing field run_id"),
    "attempt as text": (_with(attempt="1"), "field attempt is a string, not a positive integer"),
    "attempt 0": (_with(attempt=0), "field attempt is a number, not a positive integer"),
    "no outcome": (_with(judgement=None), "missing field judgement (and no transport_error)"),
    "no verdict": (
        _with(judgement={"metrics": {}, "errors": []}),
        "missing field judgement.verdict",
    ),
    "odd verdict": (
        _with(judgement={**attempt("b")["judgement"], "verdict": "maybe"}),
        "field judgement.verdict is neither pass nor fail",
    ),
    "transport error without code": (
        _with(judgement=None, transport_error={"message": "x"}),
        "field transport_error has no code",
    ),
}


def _history(tmp_path: Path, odd: dict[str, Any], order: str) -> Path:
    good = [attempt("a", 1), attempt("a", 2), attempt("c", 1, transport_error=transport("timeout"))]
    recs = [header(), good[0], odd, *good[1:]]
    if order == "other":
        recs = [r if r.get("type") != "attempt" or len(r) < 5 else lead_order(r) for r in recs]
    else:
        recs = [in_key_order(r) for r in recs]
    return write_jsonl(tmp_path / "run.jsonl", recs)


CASES = [(name, order) for name in ODD for order in ("runner", "other")]


@pytest.mark.parametrize(("name", "order"), CASES)
def test_report_skips_the_line_and_names_it(tmp_path: Path, name: str, order: str) -> None:
    odd, message = ODD[name]
    path = _history(tmp_path, odd, order)
    report = compute_files([path], collect_failures=True)
    assert [(g.provider, g.model, g.mode) for g in report.groups] == [
        ("sim", "sim-careful", "auto")
    ]
    g = report.groups[0]
    assert (g.attempted, g.scored, sum(g.transport_errors.values())) == (3, 2, 1)
    assert sorted(g.cases) == ["a", "c"]
    assert [str(w) for w in report.warnings] == [f"{path}:3: attempt skipped: {message}"]


@pytest.mark.parametrize(("name", "order"), CASES)
def test_history_index_skips_the_line_and_keeps_the_warning(
    tmp_path: Path, name: str, order: str
) -> None:
    odd, message = ODD[name]
    path = _history(tmp_path, odd, order)
    ix = HistoryIndex(path)
    assert ix.update() == 3
    assert ix.rows == 3
    assert [ix.value("case", r) for r in range(3)] == ["a", "a", "c"]
    assert None not in ix.facets["provider"].values + ix.facets["day"].values
    assert [str(w) for w in ix.all_warnings()] == [f"{path}:3: attempt skipped: {message}"]


def test_index_skips_odd_lines_among_many_fast_ones(tmp_path: Path) -> None:
    # a chunk of well-shaped lines with two odd ones: the column test finds them
    recs: list[dict[str, Any]] = [header()]
    for i in range(1, 60):
        recs.append(in_key_order(attempt(f"case{i % 5}", i)))
    recs[20] = in_key_order(_with(provider=None))
    recs[41] = in_key_order(_with(judgement=None))
    path = write_jsonl(tmp_path / "run.jsonl", recs)
    ix = HistoryIndex(path)
    assert ix.update() == 57
    assert [(w.line, w.message) for w in ix.warnings] == [
        (21, "attempt skipped: field provider is null, not a string"),
        (42, "attempt skipped: missing field judgement (and no transport_error)"),
    ]
    assert set(ix.facets["provider"].values) == {"sim"}
    assert list(ix.attempt[18:21]) == [19, 21, 22]  # 20 and 41 were the odd ones


def test_every_reading_level_skips_the_bare_line(tmp_path: Path) -> None:
    path = _history(tmp_path, {"type": "attempt"}, "runner")
    for level in ("full", "summary", "metrics", "metrics+errors"):
        warnings: list[Any] = []
        recs = list(iter_records([path], level=level, warnings=warnings))
        assert [r.get("case_id") for r in recs] == [None, "a", "a", "c"]  # the header first
        assert [r.get("run_id") for r in recs] == ["run-1"] * 4
        assert [w.line for w in warnings] == [3]


def test_compare_reads_a_history_the_same_way(tmp_path: Path) -> None:
    path = _history(tmp_path, {"type": "attempt"}, "runner")
    report = load_report(path)
    assert [(e["provider"], e["attempted"]) for e in report["results"]] == [("sim", 3)]
    assert report["warnings"] == [f"{path}:3: attempt skipped: missing field run_id"]


def test_rejudge_warns_and_keeps_the_line(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    path = write_jsonl(
        tmp_path / "run.jsonl",
        [
            {
                **header(),
                "contract": {"path": str(root / "contracts/delivery_tools.json")},
                "cases": {"path": str(root / "cases/delivery.jsonl")},
            },
            {"type": "attempt"},
            _without("api"),
        ],
    )
    warn = io.StringIO()
    assert rejudge_file(path, tmp_path / "new.jsonl", warn=warn) == []
    assert warn.getvalue().splitlines() == [
        f"warning: {path}:2: attempt skipped: missing field run_id; kept as is",
        f"warning: {path}:3: attempt skipped: missing field api; kept as is",
    ]
    lines = (tmp_path / "new.jsonl").read_bytes().splitlines()
    assert orjson.loads(lines[1]) == {"type": "attempt"}
