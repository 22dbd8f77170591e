"""The two sides of a comparison read from disk: a JSON report as ``toolstand report
--json`` writes it, or a JSONL history turned into one; a report whose counts no run
could give (a numerator above its denominator, a count that is not one, a part of the
wrong type) is refused with the path of what is wrong, so a hand-edited or truncated
baseline can neither crash the gate nor pass it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import orjson

from toolstand.reporting.formats import to_json
from toolstand.reporting.metrics import compute_files


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A JSON report as written by ``toolstand report --json``, or one computed from a
    JSONL history. Raises OSError, or ValueError for a file that is neither."""
    name = os.fspath(path)
    with open(name, "rb") as fh:
        first = fh.readline().strip()
    try:
        rec = orjson.loads(first) if first not in (b"", b"{") else None
    except orjson.JSONDecodeError:
        rec = None
    if first != b"{" and not (isinstance(rec, dict) and "results" in rec):
        report = to_json(compute_files([name]))  # a history, even with a torn first line
        if not report["results"]:
            raise ValueError(f"{name}: no attempts in this history")
        return report
    with open(name, "rb") as fh:
        data = orjson.loads(fh.read())
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError(f"{name}: neither a JSONL history nor a JSON report with results[]")
    problem = report_problem(data)
    if problem is not None:
        raise ValueError(f"{name}: {problem}")
    return data


def report_problem(data: Mapping[str, Any]) -> str | None:
    """What makes a JSON report impossible (a count that is not a count, a numerator
    above its denominator, a part of the wrong type), as ``path: problem``; None when
    every part the comparison reads can be true. A hand-edited or truncated baseline
    must not crash the gate, nor pass it with counts no run could give."""
    for i, entry in enumerate(data.get("results") or []):
        where = f"results[{i}]"
        if not isinstance(entry, dict):
            return f"{where}: not an object"
        problem = _entry_problem(where, entry)
        if problem is not None:
            return problem
    return None


def _entry_problem(where: str, entry: Mapping[str, Any]) -> str | None:
    for name in ("provider", "model", "mode"):
        value = entry.get(name)
        if value is not None and not isinstance(value, str):
            return f"{where}.{name}: {value!r} is not text"
    for name in ("attempted", "scored"):
        value = entry.get(name)
        if value is not None and not _is_count(value):
            return f"{where}.{name}: {value!r} is not a count"
    errors = entry.get("transport_errors")
    if errors is not None:
        if not isinstance(errors, dict):
            return f"{where}.transport_errors: not an object"
        for code, n in errors.items():
            if not _is_count(n):
                return f"{where}.transport_errors.{code}: {n!r} is not a count"
    for metric, value in entry.items():
        if isinstance(value, dict) and "denominator" in value:
            problem = _fraction_problem(
                f"{where}.{metric}", value.get("numerator") or 0, value["denominator"]
            )
            if problem is not None:
                return problem
    return _cases_problem(f"{where}.per_case", entry.get("per_case"))


def _cases_problem(where: str, per_case: Any) -> str | None:
    if per_case is None:
        return None
    if not isinstance(per_case, dict):
        return f"{where}: not an object"
    for cid, case in per_case.items():
        if not isinstance(case, dict):
            return f"{where}.{cid}: not an object"
        for name in ("attempted", "scored"):
            if case.get(name) is not None and not _is_count(case[name]):
                return f"{where}.{cid}.{name}: {case[name]!r} is not a count"
        counts = case.get("counts") or {}
        if not isinstance(counts, dict):
            return f"{where}.{cid}.counts: not an object"
        for metric, nd in counts.items():
            if not isinstance(nd, list) or len(nd) != 2:
                return f"{where}.{cid}.counts.{metric}: not a [numerator, denominator] pair"
            problem = _fraction_problem(f"{where}.{cid}.counts.{metric}", nd[0], nd[1])
            if problem is not None:
                return problem
    return None


def _fraction_problem(where: str, numerator: Any, denominator: Any) -> str | None:
    for name, value in (("numerator", numerator), ("denominator", denominator)):
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{where}.{name}: {value!r} is not a whole number"
    if denominator < 0:
        return f"{where}: denominator {denominator} is negative"
    if numerator < 0:
        return f"{where}: numerator {numerator} is negative"
    if numerator > denominator:
        return f"{where}: numerator {numerator} is more than denominator {denominator}"
    return None


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
