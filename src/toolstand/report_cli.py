"""`toolstand report` and `toolstand compare`, as functions the argparse CLI calls.

Exit codes: 0 done (report) or no significant drop (compare); 1 a significant drop;
2 an input that cannot be read, or two runs with nothing to compare. Warnings about skipped lines go to stderr so that
``--json`` output stays machine-readable.
"""

from __future__ import annotations

import sys
from typing import TextIO

import orjson

from toolstand.compare import compare, load_report, render
from toolstand.metrics import compute_files
from toolstand.report import dumps_json, render_table, write_errors_csv, write_junit


def cmd_report(
    paths: list[str],
    json_out: bool,
    errors_csv: str | None,
    junit: str | None,
    out: TextIO | None = None,
) -> int:
    """Compute the metrics of one or more histories and write the requested views."""
    out = out if out is not None else sys.stdout  # resolved per call: tests swap it
    try:
        report = compute_files(paths, collect_failures=bool(errors_csv or junit))
    except OSError as exc:
        print(f"toolstand report: cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    for w in report.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if json_out:
        out.write(dumps_json(report).decode())
    else:
        out.write(render_table(report))
    try:
        if errors_csv:
            with open(errors_csv, "w", newline="", encoding="utf-8") as fh:
                write_errors_csv(report, fh)
        if junit:
            with open(junit, "wb") as bfh:
                write_junit(report, bfh)
    except OSError as exc:
        print(f"toolstand report: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


def cmd_compare(
    baseline: str,
    current: str,
    alpha: float,
    json_out: bool,
    out: TextIO | None = None,
) -> int:
    """Compare two runs (JSONL histories or JSON reports); 1 only on a significant drop."""
    out = out if out is not None else sys.stdout  # resolved per call: tests swap it
    try:
        base, cur = load_report(baseline), load_report(current)
    except OSError as exc:
        print(f"toolstand compare: cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    except ValueError as exc:  # orjson.JSONDecodeError included
        print(f"toolstand compare: {exc}", file=sys.stderr)
        return 2
    result = compare(base, cur, alpha=alpha)
    if not result.checks:
        # a gate that compared nothing must not pass silently
        print("toolstand compare: nothing comparable between the two runs", file=sys.stderr)
        for note in result.notes:
            print(f"note: {note}", file=sys.stderr)
        return 2
    if json_out:
        out.write(orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(render(result, baseline, current))
    return result.exit_code
