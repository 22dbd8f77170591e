"""`toolstand report` and `toolstand compare`, as functions the argparse CLI calls.

Exit codes: 0 done (report) or the gate passed (compare); 1 a significant drop, a
baseline group missing from current, or a group over ``--max-transport-errors``; 2 an
input that cannot be read, or two runs with nothing to compare. Warnings about skipped
lines go to stderr so that ``--json`` output stays machine-readable. Every name from a
history is printed with its control characters spelled out (printable.visible).
"""

from __future__ import annotations

import io
import sys
from typing import TextIO

from toolstand.reporting.compare import MAX_TRANSPORT_ERRORS, compare, load_report, render
from toolstand.reporting.formats import (
    dumps_json,
    json_text,
    render_table,
    write_errors_csv,
    write_junit,
)
from toolstand.reporting.metrics import compute_files
from toolstand.util.atomic import replacing, same_file
from toolstand.util.printable import visible


def cmd_report(
    paths: list[str],
    json_out: bool,
    errors_csv: str | None,
    junit: str | None,
    out: TextIO | None = None,
) -> int:
    """Compute the metrics of one or more histories and write the requested views."""
    out = out if out is not None else sys.stdout  # resolved per call: tests swap it
    clash = _output_clash(paths, errors_csv, junit)
    if clash is not None:
        print(f"toolstand report: {clash}; nothing written", file=sys.stderr)
        return 2
    try:
        report = compute_files(paths, collect_failures=bool(errors_csv or junit))
    except OSError as exc:
        print(f"toolstand report: cannot read {_name(exc)}: {exc.strerror}", file=sys.stderr)
        return 2
    for w in report.warnings:
        print(f"warning: {w}", file=sys.stderr)  # HistoryWarning spells control characters
    if json_out:
        out.write(dumps_json(report).decode())
    else:
        out.write(render_table(report))
    try:
        if errors_csv:
            with replacing(errors_csv) as raw:
                text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
                write_errors_csv(report, text)
                text.flush()
                text.detach()
        if junit:
            with replacing(junit) as bfh:
                write_junit(report, bfh)
    except OSError as exc:
        print(f"toolstand report: cannot write {_name(exc)}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


def cmd_compare(
    baseline: str,
    current: str,
    alpha: float,
    json_out: bool,
    out: TextIO | None = None,
    max_transport_errors: float = MAX_TRANSPORT_ERRORS,
) -> int:
    """Compare two runs (JSONL histories or JSON reports); 1 on a significant drop, a
    baseline group missing from current, or too many transport errors."""
    out = out if out is not None else sys.stdout  # resolved per call: tests swap it
    if not 0.0 < alpha <= 0.5:  # NaN included: it compares false
        # 0 or less (or NaN) can never fail the gate, above 0.5 fails it on noise
        print(
            f"toolstand compare: --alpha is a significance level above 0 and at most 0.5,"
            f" got {alpha}",
            file=sys.stderr,
        )
        return 2
    if not 0.0 <= max_transport_errors <= 1.0:  # NaN included: it compares false
        print(
            f"toolstand compare: --max-transport-errors is a share of attempts from 0 to 1,"
            f" got {max_transport_errors}",
            file=sys.stderr,
        )
        return 2
    try:
        base, cur = load_report(baseline), load_report(current)
    except OSError as exc:
        print(f"toolstand compare: cannot read {_name(exc)}: {exc.strerror}", file=sys.stderr)
        return 2
    except ValueError as exc:  # orjson.JSONDecodeError included
        print(f"toolstand compare: {visible(str(exc))}", file=sys.stderr)
        return 2
    result = compare(base, cur, alpha=alpha, max_transport_errors=max_transport_errors)
    if not result.checks:
        # a gate that compared nothing must not pass silently
        print("toolstand compare: nothing comparable between the two runs", file=sys.stderr)
        for failure in result.failures:
            print(f"FAIL {visible(failure)}", file=sys.stderr)
        for note in result.notes:
            print(f"note: {visible(note)}", file=sys.stderr)
        return 2
    if json_out:
        out.write(json_text(result.to_dict()).decode())
    else:
        out.write(render(result, baseline, current))
    return result.exit_code


def _output_clash(inputs: list[str], *outputs: str | None) -> str | None:
    """Why the outputs cannot be written: one of them is an input (however spelled: a
    link, ``./``, another hard link), or two of them are one file. None when they can."""
    wanted = [o for o in outputs if o]
    for i, output in enumerate(wanted):
        for path in inputs:
            if same_file(output, path):
                return f"output {visible(output)} is the input history {visible(path)}"
        for other in wanted[i + 1 :]:
            if same_file(output, other):
                return f"--errors-csv and --junit name one file ({visible(output)})"
    return None


def _name(exc: OSError) -> str:
    return visible(str(exc.filename))
