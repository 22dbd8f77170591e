"""Renderings of a computed Report: the seed's JSON, the error CSV, JUnit XML, a text table.

All four are views of metrics.Report; none re-reads or re-judges anything.
"""

from __future__ import annotations

import csv
import re
import textwrap
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from typing import IO, Any

import orjson

from toolstand.history import error_code
from toolstand.reporting import categories, parity
from toolstand.reporting.metrics import FailedAttempt, GroupStats, Report
from toolstand.reporting.repairs import comparison_lines
from toolstand.reporting.stats import Rate
from toolstand.util.canonical import canonical_json
from toolstand.util.printable import visible, visible_lines

CSV_COLUMNS = (
    "provider",
    "model",
    "mode",
    "case_id",
    "attempt",
    "error_code",
    "expected",
    "actual",
)
WIDTH = 100


def _one_or_list(values: list[str], *, force_list: bool = False) -> Any:
    if not values:
        return None
    return values if force_list or len(values) > 1 else values[0]


def group_to_json(g: GroupStats, report: Report) -> dict[str, Any]:
    """One results[] entry: counts, every metric at the top level, then the extras."""
    attempted = g.attempted
    out: dict[str, Any] = {
        "provider": g.provider,
        "model": g.model,
        "mode": g.mode,
        "api": _one_or_list(g.apis),
        # the run's identity, and what tells it from a group that reads the same
        "run_identity": g.identity,
        **({"run": g.run_label} if g.run_label else {}),
        "simulated": g.simulated,
        "attempted": attempted,
        "scored": g.scored,
        "transport_errors": dict(sorted(g.transport_errors.items())),
        "second_turn_transport_errors": dict(sorted(g.second_turn_transport_errors.items())),
        "unjudged": g.unjudged,
        "case_count": len(g.cases),
        "repetitions": g.repetitions,
        "planned": g.slots,
    }
    for name, rate in g.metrics().items():
        out[name] = rate.to_dict()
    out["latency_ms"] = g.latency()
    out["tokens"] = g.tokens()
    out["retries"] = {
        "total": g.retries,
        "per_attempt": g.retries / attempted if attempted else None,
    }
    out["cost"] = g.cost(report.price_for(g))
    if g.stream or report.streaming:
        out["stream"] = g.stream
    if g.stream:
        out.update(g.stream_times())
    if g.repair is not None:
        out["feedback"] = g.feedback
        out.update(g.repair.to_json(g.metrics()["raw_schema_validity"]))
    out["flaky_cases"] = g.flaky_cases()
    out["per_case"] = {
        cid: {
            "attempted": t.attempted,
            "scored": t.scored,
            "passed": t.passed,
            "pass_rate": t.passed / t.scored if t.scored else None,
            "flaky": t.flaky,
            "counts": {
                name: list(nd)
                for name, nd in (
                    t.counts() | (g.repair.case_counts(cid) if g.repair is not None else {})
                ).items()
            },
        }
        for cid, t in g.cases.items()
    }
    return out


def to_json(report: Report) -> dict[str, Any]:
    """The seed's report format, extended with hashes, intervals and per-case counts."""
    m = report.meta
    out = {
        "run_id": _one_or_list(m.run_ids, force_list=len(report.files) > 1),
        "contract_hash": _one_or_list(m.contract_hashes),
        "contract": _one_or_list(m.contract_names),
        "prompt_version": _one_or_list(m.prompt_versions),
        "prompt_hash": _one_or_list(m.prompt_hashes),
        "cases_version": _one_or_list(m.cases_versions),
        "cases_hash": _one_or_list(m.cases_hashes),
        "files": report.files,
        "warnings": [str(w) for w in report.warnings],
        "results": [group_to_json(g, report) for g in report.groups],
    }
    stream_parity = parity.to_json(report)
    if stream_parity is not None:
        out["stream_parity"] = stream_parity
    return out


# DEL and the C1 controls in UTF-8: JSON may hold them raw (orjson does), a terminal acts
# on them (\x9b is a one-byte CSI); inside a JSON string \u escapes mean the same
_RAW_C1 = re.compile(rb"\x7f|\xc2[\x80-\x9f]")


def json_text(value: Any) -> bytes:
    """Indented JSON that is safe to print: no control character left raw."""
    data = orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"
    return _RAW_C1.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), data)


def dumps_json(report: Report) -> bytes:
    return json_text(to_json(report))


# ---- error CSV ------------------------------------------------------------------------


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return canonical_json(value)


def error_rows(failures: list[FailedAttempt], *, streaming: bool = False) -> list[tuple[Any, ...]]:
    """One row per error code of every failed attempt, transport failures included; with
    ``streaming`` (a report with a streamed group) each row ends with its stream arm."""
    rows: list[tuple[Any, ...]] = []
    for f in failures:
        head = (f.provider, f.model, f.mode, f.case_id, f.attempt)
        tail = (str(f.stream).lower(),) if streaming else ()
        if f.transport_error:
            te = f.transport_error
            rows.append((*head, str(te.get("code")), "", _cell(te.get("message")), *tail))
        for err in f.errors:
            expected, actual = _cell(err.get("expected")), _cell(err.get("actual"))
            rows.append((*head, error_code(err), expected, actual, *tail))
        if f.second_turn_transport_error:
            te = f.second_turn_transport_error
            msg = f"second turn: {_cell(te.get('message'))}"
            rows.append((*head, str(te.get("code")), "", msg, *tail))
    return rows


# a cell a spreadsheet would run as a formula: = + - @, and tab or CR before one of them
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def csv_cell(value: Any) -> Any:
    """A cell as a spreadsheet shows it and a terminal prints it: control characters but
    newline and tab spelled out, and text that starts like a formula (``=HYPERLINK(...)``,
    ``+``, ``-``, ``@``, a tab) behind a single quote, the OWASP convention that Excel,
    LibreOffice and Sheets read as "this is text". A plain number such as ``-5`` is no
    formula and stays as it is."""
    if not isinstance(value, str):
        return value
    text = visible_lines(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_columns(report: Report) -> tuple[str, ...]:
    """The error table's columns: the fixed ones (design.md), then ``stream`` when a group
    of the report streamed, as the JSON's results[] entries then carry ``stream``: the
    rows of the two arms of a ``stream: "both"`` run are told apart, never mixed."""
    return (*CSV_COLUMNS, "stream") if report.streaming else CSV_COLUMNS


def write_errors_csv(report: Report, fh: IO[str]) -> int:
    """Write the error table; returns the number of rows. ``fh`` opened with newline=''."""
    writer = csv.writer(fh)
    writer.writerow(csv_columns(report))
    rows = error_rows(report.failures, streaming=report.streaming)
    writer.writerows([tuple(map(csv_cell, row)) for row in rows])
    return len(rows)


# ---- JUnit XML ------------------------------------------------------------------------


def _attempt_codes(f: FailedAttempt) -> list[str]:
    codes = [str(f.transport_error.get("code"))] if f.transport_error else []
    codes += [error_code(e) for e in f.errors]
    if f.second_turn_transport_error:
        codes.append(f"second_turn.{f.second_turn_transport_error.get('code')}")
    return codes


def suite_name(g: GroupStats, report: Report) -> str:
    """``provider/model/mode``, then the group's arms: ``/feedback-<style>`` and, in a
    report with a streamed group, ``/streamed`` or ``/not-streamed``; then, for a group
    that would read the same as another run's, `` (<what tells them apart>)``."""
    name = f"{g.provider}/{g.model}/{g.mode}"
    name += f"/feedback-{g.feedback}" if g.feedback is not None else ""
    if report.streaming:
        name += "/streamed" if g.stream else "/not-streamed"
    name += f" ({g.run_label})" if g.run_label else ""
    return name


def to_junit(report: Report) -> ET.Element:
    """One testcase per case × provider/model/mode and arm (classname: ``suite_name``).

    A case with any attempt the judge failed gets <failure>. A case whose only problems
    were transport failures gets <error>: the stand could not measure it, which CI should
    show, but it is not a model regression and stays out of the failure count.
    """
    by_case: dict[tuple[Any, ...], list[FailedAttempt]] = defaultdict(list)
    for f in report.failures:
        by_case[(f.provider, f.model, f.mode, f.feedback, f.stream, f.identity, f.case_id)].append(
            f
        )
    root = ET.Element("testsuites", name="toolstand")
    totals: Counter[str] = Counter()
    for g in report.groups:
        classname = suite_name(g, report)
        suite = ET.SubElement(root, "testsuite", name=classname)
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="simulated", value=str(g.simulated).lower())
        counts: Counter[str] = Counter()
        for cid, tally in g.cases.items():
            case = ET.SubElement(suite, "testcase", classname=classname, name=cid)
            counts["tests"] += 1
            slot = (g.provider, g.model, g.mode, g.feedback, g.stream, g.identity, cid)
            fails = by_case.get(slot, [])
            judged = [f for f in fails if f.failed]
            lines = [f"attempt {f.attempt}: {', '.join(_attempt_codes(f))}" for f in fails]
            if judged:
                top = Counter(c for f in judged for c in _attempt_codes(f)).most_common(1)
                el = ET.SubElement(
                    case,
                    "failure",
                    message=f"{len(judged)} of {tally.attempted} attempts failed",
                    type=top[0][0] if top else "fail",
                )
                counts["failures"] += 1
            elif fails:
                el = ET.SubElement(
                    case,
                    "error",
                    message=f"{len(fails)} of {tally.attempted} attempts hit transport errors",
                    type="transport",
                )
                counts["errors"] += 1
            else:
                continue
            el.text = "\n".join(lines)
        for key in ("tests", "failures", "errors"):
            suite.set(key, str(counts[key]))
            totals[key] += counts[key]
        suite.set("skipped", "0")
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    return root


# what XML 1.0 forbids besides the C0 controls visible() spells: surrogates, U+FFFE/FFFF
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str, *, one_line: bool) -> str:
    text = visible(text) if one_line else visible_lines(text)
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def xml_safe(root: ET.Element) -> ET.Element:
    """Every attribute and text of the tree with what XML 1.0 cannot hold spelled out
    (``\\x1b``, ``\\ufffe``): whatever a history holds, the JUnit file parses."""
    for el in root.iter():
        for key, value in el.attrib.items():
            el.set(key, _xml_text(value, one_line=True))
        if el.text:
            el.text = _xml_text(el.text, one_line=False)
    return root


def write_junit(report: Report, fh: IO[bytes]) -> None:
    tree = ET.ElementTree(xml_safe(to_junit(report)))
    ET.indent(tree)
    tree.write(fh, encoding="utf-8", xml_declaration=True)


# ---- terminal table -------------------------------------------------------------------


def fmt_rate(rate: Rate) -> str:
    """92.0% (23/25) [80.5–97.8]; a dash for an empty denominator."""
    if rate.value is None or rate.interval is None:
        return f"— ({rate.numerator}/{rate.denominator})"
    lo, hi = rate.interval
    return f"{rate.value:.1%} ({rate.numerator}/{rate.denominator}) [{lo * 100:.1f}–{hi * 100:.1f}]"


def _num(value: float | int | None, unit: str = "") -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}{unit}" if abs(value) >= 10_000 else f"{value:,.1f}{unit}"


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:.6f}" if value < 0.01 else f"${value:.4f}"


def pack(items: list[str], first: str, indent: int, width: int = WIDTH) -> list[str]:
    """Comma-separated items in lines of at most ``width``, never breaking an item."""
    lines = [first]
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        if len(lines[-1]) + 1 + len(piece) > width and lines[-1].strip():
            lines.append(" " * indent + piece)
        else:
            lines[-1] += ("" if lines[-1].endswith(" ") else " ") + piece
    return lines


def _wrap(label: str, items: list[str]) -> list[str]:
    return pack([visible(item) for item in items], f"  {label}:", 4)


def _head(report: Report) -> list[str]:
    m = report.meta
    parts = []
    if m.run_ids:
        parts.append("run " + ", ".join(m.run_ids))
    if m.contract_names or m.contract_hashes:
        hashes = ", ".join(h[:12] for h in m.contract_hashes)
        parts.append(f"contract {', '.join(m.contract_names)} ({hashes})".replace(" ()", ""))
    if m.prompt_versions:
        parts.append("prompt " + ", ".join(m.prompt_versions))
    if m.cases_versions:
        parts.append("cases " + ", ".join(v[:19] for v in m.cases_versions))
    lines: list[str] = []
    for part in map(visible, parts):  # break between parts, not inside one
        if lines and len(lines[-1]) + 3 + len(part) <= WIDTH:
            lines[-1] += " · " + part
        else:
            lines += textwrap.wrap(part, WIDTH)
    return lines or ["(no run header)"]


def _group_lines(g: GroupStats, report: Report) -> list[str]:
    title = f"{g.provider} / {g.model}{' (simulated)' if g.simulated else ''} · mode {g.mode}"
    title += f" · feedback {g.feedback}" if g.feedback is not None else ""
    title += " · streamed" if g.stream else (" · not streamed" if report.streaming else "")
    title += f" · api {', '.join(g.apis)}" if g.apis else ""
    run = [p for p in g.run_parts if not p.startswith("api ")]  # the title says the api
    title = visible(title + (f" · {', '.join(run)}" if run else ""))
    errs = sum(g.transport_errors.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(g.transport_errors.items()))
    line = f"  attempted {g.attempted} · scored {g.scored} · transport errors {errs}"
    line += f" ({detail})" if detail else ""
    line += f" · {len(g.cases)} cases × ≤{g.repetitions}"
    out = [*textwrap.wrap(title, WIDTH), *textwrap.wrap(line, WIDTH, subsequent_indent="    ")]
    if g.slots is not None and g.attempted > g.slots:
        out += textwrap.wrap(
            "! " + g.over_matrix(), WIDTH, initial_indent="  ", subsequent_indent="    "
        )
    if g.unjudged:
        out.append(f"  {g.unjudged} attempts without metrics in their judgement (not scored)")
    for name, rate in g.metrics().items():
        out.append(f"  {name:<30} {fmt_rate(rate)}")
    lat, tok = g.latency(), g.tokens()
    per = g.retries / g.attempted if g.attempted else 0.0
    out.append(
        f"  latency p50 {_num(lat['p50'], ' ms')} · p95 {_num(lat['p95'], ' ms')}"
        f" · max {_num(lat['max'], ' ms')} · retries {g.retries} ({per:.2f}/attempt)"
    )
    if g.stream:
        st = g.stream_times()
        tok1, call1 = st["first_token_ms"], st["first_call_ms"]
        out.append(
            f"  first token p50 {_num(tok1['p50'], ' ms')} · p95 {_num(tok1['p95'], ' ms')}"
            f" · first call p50 {_num(call1['p50'], ' ms')} · p95 {_num(call1['p95'], ' ms')}"
        )
    out.append(
        f"  tokens per attempt: in {_num(tok['input_per_attempt'])}"
        f" · out {_num(tok['output_per_attempt'])}"
        f" (over {tok['attempts_with_usage']} attempts reporting usage)"
    )
    if g.repair is not None:
        out += g.repair.lines(g.metrics()["raw_schema_validity"], fmt_rate)
    cost = g.cost(report.price_for(g))
    if cost:
        out.append(
            f"  cost {_money(cost['total_usd'])} total · {_money(cost['per_attempt_usd'])}"
            f"/attempt · {_money(cost['per_passed_attempt_usd'])}/passed attempt"
            f" (from {cost['source']})"
        )
    out += categories.lines(g, report.categories, fmt_rate, visible, WIDTH)
    flaky = g.flaky_cases()
    if flaky:
        out += _wrap(f"flaky cases ({len(flaky)})", flaky)
    weak = [f"{cid} {t.passed}/{t.scored}" for cid, t in g.cases.items() if t.passed < t.scored]
    if weak:
        out += _wrap(f"cases below 100% ({len(weak)})", weak)
    return out


def render_table(report: Report) -> str:
    """The human report: fits 100 columns, no colours, no Textual. Names come from the
    histories: each is shown with its control characters spelled out (printable.visible),
    and a last pass over every line makes sure nothing else reaches the terminal raw."""
    lines = _head(report)
    if report.warnings:
        lines.append(f"{len(report.warnings)} warning(s): {report.warnings[0]}"[:WIDTH])
    if not report.groups:
        lines.append("no attempts")
    for g in report.groups:
        lines.append("")
        lines += _group_lines(g, report)
    lines += _repair_comparison(report)
    lines += parity.lines(report, fmt_rate, visible)
    return "\n".join(map(visible, lines)) + "\n"


def _repair_comparison(report: Report) -> list[str]:
    arms = [
        (f"{g.provider} / {g.model} · mode {g.mode}", g.repair, g.metrics()["raw_schema_validity"])
        for g in report.groups
        if g.repair is not None
    ]
    return comparison_lines(arms, fmt_rate)
