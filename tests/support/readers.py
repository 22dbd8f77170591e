"""Every reader of a history, run over one file: what each warned, and each report view.

Used by the odd-record tests (issue 31 M3): report in every format on the line path, the
cold index path and the sidecar path; compare; rejudge; the History index and what the
TUI shows of each of its rows (the attempt detail, the last verdicts)."""

from __future__ import annotations

import io
from pathlib import Path

import orjson

from toolstand.history import read_record
from toolstand.history import sidecar as history_sidecar
from toolstand.history.index import HistoryIndex
from toolstand.reporting.compare import compare, load_report
from toolstand.reporting.formats import dumps_json, render_table, write_errors_csv, write_junit
from toolstand.reporting.metrics import Report, compute_files
from toolstand.run.rejudge import rejudge_file
from toolstand.tui.model.verdicts import last_verdicts
from toolstand.tui.widgets.attempt_detail import explain
from toolstand.util.problems import LoadError

ROOT = Path(__file__).resolve().parents[2]


def views(report: Report) -> dict[str, bytes]:
    """The report as `toolstand report` writes it: text, --json, --errors-csv, --junit."""
    csv_out, junit = io.StringIO(), io.BytesIO()
    write_errors_csv(report, csv_out)
    write_junit(report, junit)
    return {
        "json": dumps_json(report),
        "text": render_table(report).encode(),
        "csv": csv_out.getvalue().encode(),
        "junit": junit.getvalue(),
    }


def report_paths(path: Path) -> dict[str, tuple[dict[str, bytes], list[str]]]:
    """The report's views and warnings line by line, from a cold index (which saves a
    sidecar when the file is worth one), and from that sidecar."""
    history_sidecar.sidecar_path(path).unlink(missing_ok=True)
    out = {}
    for name, index in (("lines", False), ("cold", True), ("sidecar", True)):
        report = compute_files([path], collect_failures=True, index=index)
        out[name] = (views(report), [str(w) for w in report.warnings])
    return out


def every_reader(path: Path, tmp_path: Path) -> dict[str, list[str]]:
    """What each reader warned, having rendered everything it can (never raising)."""
    paths = report_paths(path)
    seen = {"report": paths["lines"][1]}
    data = load_report(path)
    seen["compare"] = list(data["warnings"])
    compare(data, data)
    warn = io.StringIO()
    out = tmp_path / "rejudged.jsonl"
    out.unlink(missing_ok=True)
    try:
        rejudge_file(path, out, warn=warn)
    except LoadError as exc:  # a header naming no contract or cases: one line, exit 2
        warn.write(f"refused: {exc}\n")
    seen["rejudge"] = warn.getvalue().splitlines()
    ix = HistoryIndex(str(path))
    ix.update()
    seen["index"] = [str(w) for w in ix.all_warnings()]
    seen["rows"] = [str(ix.offsets[r]) for r in range(ix.rows)]
    for row in range(ix.rows):  # what History shows of a row, and its attempt detail
        _ = (ix.verdict_of(row), ix.errors_of(row), ix.local_time(row), ix.latency[row])
        _ = [ix.value(name, row) for name in ix.facets]
        try:
            rec = read_record(str(path), ix.offsets[row])
        except ValueError as exc:
            seen.setdefault("detail", []).append(str(exc))
            continue
        explain(rec)
    _, warned = last_verdicts(path.parent)
    seen["verdicts"] = [str(w) for w in warned]
    orjson.dumps(data)
    return seen
