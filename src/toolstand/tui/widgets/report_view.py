"""A computed metrics.Report as tables: metrics per provider × model × mode (counts, 95%
intervals, bars), the error table, and per-case pass rates with flaky cases marked.

Every number comes from the Report (reporting/metrics.py, reporting/formats.py); nothing is recomputed here.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from toolstand.history import error_code
from toolstand.reporting import (
    LOWER_IS_BETTER,
    METRICS,
    GroupStats,
    Rate,
    Report,
    by_category,
)
from toolstand.tui.fit import fit_id
from toolstand.util.printable import visible

SHORT = {
    "pass_rate": "pass",
    "normalized_pass_rate": "norm pass",
    "decision_accuracy": "decision",
    "tool_selection_accuracy": "tool sel",
    "raw_schema_validity": "schema",
    "exact_argument_accuracy": "exact",
    "normalized_argument_accuracy": "norm",
    "unsafe_call_rate": "unsafe",
    "error_recovery_accuracy": "recovery",
    "consistency": "consist",
}
_EIGHTHS = " ▏▎▍▌▋▊▉"
# the Categories tab's rates, the verdicts first (at 80 columns the rest scroll sideways)
CATEGORY_RATES = (
    "pass_rate",
    "normalized_pass_rate",
    "tool_selection_accuracy",
    "raw_schema_validity",
    "exact_argument_accuracy",
    "decision_accuracy",
)


def bar(value: float | None, width: int = 10) -> str:
    """A horizontal bar of ``value`` (0..1) in ``width`` cells, to an eighth of a cell."""
    if value is None:
        return " " * width
    eighths = round(max(0.0, min(1.0, value)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(width)


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


CASE_WIDTH = 30  # longer case ids are cut in the middle: their ends tell them apart


def group_name(g: GroupStats) -> str:
    """provider/model, and what tells its run from another that reads alike (api, options)."""
    run = f" · {g.run_label}" if g.run_label else ""
    return visible(f"{g.provider}/{g.model}{run}") + (" (simulated)" if g.simulated else "")


def rate_style(name: str, rate: Rate) -> str:
    v = rate.value
    if v is None:
        return "$text-muted"
    good = 1 - v if name in LOWER_IS_BETTER else v
    return "$success" if good >= 0.9 else "$warning" if good >= 0.6 else "$error"


def arms(mode: str, feedback: str | None, stream: bool) -> str:
    """A mode and the arms of its group: "auto · allowed", "auto · streamed"."""
    return (
        mode
        + (f" · {feedback}" if feedback is not None else "")
        + (" · streamed" if stream else "")
    )


def mode_label(g: GroupStats) -> str:
    """The group's mode, and its repair and stream arms when it has them."""
    return visible(arms(g.mode, g.feedback, g.stream))


REPAIR_SHORT = {
    "first_attempt_validity": "1st valid",
    "repair_success_rate": "repaired",
    "repair_success_after_1": "≤1 repair",
    "repair_success_after_2": "≤2 repairs",
    "repair_success_after_3": "≤3 repairs",
    "fallback_rate": "fallback",
}


def _rate_line(label: str, name: str, rate: Rate) -> Content:
    ci = rate.interval
    interval = f"{pct(ci[0])}–{pct(ci[1])}" if ci else "—"
    nd = f"{rate.numerator}/{rate.denominator}"
    return Content.assemble(
        f"{label:<10} {pct(rate.value):>7} ",
        (bar(rate.value), rate_style(name, rate)),
        f" {nd:>11}  {interval}",
    )


def repair_lines(g: GroupStats) -> list[Content]:
    """The repair block of a group with a feedback arm: the rates, the 1/2/3 curve,
    repairs per success and the tokens the repair turns cost."""
    if g.repair is None:
        return []
    r = g.repair
    out = [
        Content.styled(
            f"repair turns · feedback {visible(r.feedback)} · {r.needed} needed repair", "bold"
        )
    ]
    for name, rate in r.rates(g.metrics()["raw_schema_validity"]).items():
        out.append(_rate_line(REPAIR_SHORT[name], name, rate))
    rps, tok = r.repairs_per_success(), r.overhead_per_attempt()
    out.append(
        Content(
            f"repairs per success {'—' if rps is None else f'{rps:.2f}'} · repair overhead "
            f"{'—' if tok is None else f'{tok:,.0f}'} tokens per attempt that needed repair"
        )
    )
    return out


def metric_lines(g: GroupStats) -> list[Content]:
    """The highlighted group's metrics: rate, bar, counts and 95% interval per line."""
    te = visible(", ".join(f"{k} {n}" for k, n in g.transport_errors.most_common())) or "none"
    lat = g.latency()
    p50, p95 = lat.get("p50"), lat.get("p95")
    head = (
        f"{group_name(g)} · {mode_label(g)} · attempted {g.attempted} · scored {g.scored} · "
        f"transport errors: {te}"
        + (f" · latency p50 {p50:.0f} ms p95 {p95:.0f} ms" if p50 is not None and p95 else "")
    )
    out = [Content.styled(head, "bold")]
    out.append(Content.styled(f"{'metric':<10} {'rate':>7} {'':10} {'n/d':>11}  95% CI", "dim"))
    for name, rate in g.metrics().items():
        out.append(_rate_line(SHORT[name], name, rate))
    return out + repair_lines(g)


def error_counts(report: Report) -> list[tuple[str, str, str, int]]:
    """(group, mode and arms, code, count) for every error code and transport failure,
    most first; the arms of a group are counted apart."""
    counts: Counter[tuple[str, str, str]] = Counter()
    names = {(*g.key, g.identity): group_name(g) for g in report.groups}
    for f in report.failures:
        key = (f.provider, f.model, f.mode, f.identity)
        name = names.get(key) or visible(f"{f.provider}/{f.model}")
        mode = arms(f.mode, f.feedback, f.stream)
        for e in f.errors:
            counts[(name, mode, error_code(e))] += 1
        if f.second_turn_transport_error:
            code = f"second_turn.{f.second_turn_transport_error.get('code')}"
            counts[(name, mode, code)] += 1
    for g in report.groups:
        mode = arms(g.mode, g.feedback, g.stream)
        for code, n in g.transport_errors.items():
            counts[(group_name(g), mode, f"transport.{code}")] += n
    return [
        (name, visible(mode), visible(code), n) for (name, mode, code), n in counts.most_common()
    ]


class ReportView(Vertical):
    """Header, then tabs: Metrics (+ the highlighted group in full), Errors, Cases."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.report: Report | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="report-head", markup=False)
        with TabbedContent(id="report-tabs"):
            with TabPane("Metrics", id="tab-metrics"):
                yield DataTable(id="metric-table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="metric-detail")
            with TabPane("Categories", id="tab-categories"):
                yield Static("", id="categories-title", markup=False)
                yield DataTable(id="category-table", cursor_type="row", zebra_stripes=True)
            with TabPane("Errors", id="tab-errors"):
                yield DataTable(id="error-table", cursor_type="row", zebra_stripes=True)
            with TabPane("Cases", id="tab-cases"):
                yield Static("", id="cases-title", markup=False)
                yield DataTable(id="case-table-r", cursor_type="row", zebra_stripes=True)

    def step_tab(self, step: int) -> str:
        """Show the tab ``step`` after the one shown (round the end), its table focused;
        the tab's name."""
        tabs = self.query_one("#report-tabs", TabbedContent)
        panes = list(tabs.query(TabPane))
        at = next((n for n, p in enumerate(panes) if p.id == tabs.active), 0)
        pane = panes[(at + step) % len(panes)]
        tabs.active = str(pane.id)
        pane.query_one(DataTable).focus()
        return str(tabs.get_tab(pane).label)

    def show(self, report: Report) -> None:
        self.report = report
        meta = report.meta
        head = [
            f"{', '.join(Path(f).name for f in report.files)} · "
            f"{sum(g.attempted for g in report.groups):,} attempts · "
            f"{len(report.groups)} provider × model × mode groups",
            f"contract {', '.join(meta.contract_names) or '?'} · prompt "
            f"{', '.join(meta.prompt_versions) or '?'} · cases {', '.join(meta.cases_versions)[:20] or '?'}",
        ]
        if report.warnings:
            head.append(f"⚠ {len(report.warnings)} warnings, first: {report.warnings[0]}")
        self.query_one("#report-head", Static).update("\n".join(map(visible, head)))
        self._metrics(report)
        self._errors(report)
        self._detail(0)

    def _metrics(self, report: Report) -> None:
        t = self.query_one("#metric-table", DataTable)
        t.clear(columns=True)
        # explicit widths: the table sizes columns from plain strings, not styled content
        names = [group_name(g) for g in report.groups]
        t.add_column("provider/model", key="group", width=max(map(len, names), default=14))
        t.add_column(
            "mode", key="mode", width=max(8, *(len(mode_label(g)) for g in report.groups), 0)
        )
        t.add_column(
            "scored",
            key="n",
            width=max(7, *(len(f"{g.scored}/{g.attempted}") for g in report.groups))
            if report.groups
            else 7,
        )
        for name in METRICS:
            t.add_column(SHORT[name], key=name, width=10)
        for i, g in enumerate(report.groups):
            cells: list[Any] = [
                Content(group_name(g)),
                Content(mode_label(g)),
                f"{g.scored}/{g.attempted}",
            ]
            for name, rate in g.metrics().items():
                cells.append(
                    Content.assemble(
                        (bar(rate.value, 3), rate_style(name, rate)), f" {pct(rate.value)}"
                    )
                )
            t.add_row(*cells, key=str(i))

    def _errors(self, report: Report) -> None:
        # the count first, then the code: at 80 columns a long group name may run past
        # the edge (the table scrolls sideways), never the number the row is about
        t = self.query_one("#error-table", DataTable)
        t.clear(columns=True)
        rows = error_counts(report)
        titles = ("count", "error code", "mode", "provider/model")
        widths = [
            max((len(f"{r[3]:,}") for r in rows), default=0),
            max((len(r[2]) for r in rows), default=0),
            max((len(r[1]) for r in rows), default=0),
            max((len(r[0]) for r in rows), default=0),
        ]
        widths = [max(w, len(title)) for w, title in zip(widths, titles, strict=True)]
        for title, w in zip(titles, widths, strict=True):
            t.add_column(title, width=w)
        for name, mode, code, n in rows:
            t.add_row(Text(f"{n:,}", justify="right"), Content(code), Content(mode), Content(name))

    @on(DataTable.RowHighlighted, "#metric-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._detail(int(event.row_key.value))

    def _detail(self, i: int) -> None:
        report = self.report
        if report is None or not report.groups:
            self.query_one("#metric-detail", Static).update("no attempts")
            # nothing of another file's cases may stay behind
            self.query_one("#cases-title", Static).update("no attempts: no cases")
            self.query_one("#case-table-r", DataTable).clear(columns=True)
            self.query_one("#categories-title", Static).update("no attempts: no categories")
            self.query_one("#category-table", DataTable).clear(columns=True)
            return
        g = report.groups[min(i, len(report.groups) - 1)]
        self.query_one("#metric-detail", Static).update(Content("\n").join(metric_lines(g)))
        self._cases(g)
        self._categories(g, report)

    def _categories(self, g: GroupStats, report: Report) -> None:
        """The highlighted group per category (BFCL's main axis): cases and rates."""
        rows = by_category(g, report.categories)
        title = f"{group_name(g)} · {mode_label(g)}: "
        self.query_one("#categories-title", Static).update(
            title
            + (
                f"{len(rows)} categories · pick another group on the Metrics tab"
                if rows
                else "its cases name no category"
            )
        )
        t = self.query_one("#category-table", DataTable)
        t.clear(columns=True)
        if not rows:
            return
        wide = min(CASE_WIDTH, max(len(visible(r.category)) for r in rows))
        t.add_column("category", width=max(8, wide))
        t.add_column("cases", width=5)
        for name in CATEGORY_RATES:
            t.add_column(SHORT[name], key=name, width=10)
        t.add_column("scored", width=max(6, *(len(f"{r.scored}/{r.attempted}") for r in rows)))
        for r in rows:
            cells: list[Any] = [Content(fit_id(r.category, wide)), f"{r.cases:>5}"]
            for name in CATEGORY_RATES:
                rate = r.rates[name]
                cells.append(
                    Content.assemble(
                        (bar(rate.value, 3), rate_style(name, rate)), f" {pct(rate.value)}"
                    )
                )
            cells.append(f"{r.scored}/{r.attempted}")
            t.add_row(*cells)

    def _cases(self, g: GroupStats) -> None:
        flaky = set(g.flaky_cases())
        self.query_one("#cases-title", Static).update(
            f"{group_name(g)} · {mode_label(g)}: {len(g.cases)} cases, {len(flaky)} flaky "
            "(repetitions disagree) · pick another group on the Metrics tab"
        )
        t = self.query_one("#case-table-r", DataTable)
        t.clear(columns=True)
        wide = min(CASE_WIDTH, max((len(visible(c)) for c in g.cases), default=4))
        for title, w in (("case", wide), ("passed", 7), ("rate", 6), ("", 10), ("flaky", 7)):
            t.add_column(title, width=w)
        for cid, tally in sorted(g.cases.items()):
            rate = Rate(tally.passed, tally.scored)
            t.add_row(
                Content(fit_id(cid, wide)),
                f"{tally.passed}/{tally.scored}",
                pct(rate.value),
                Content.styled(bar(rate.value), rate_style("pass_rate", rate)),
                Content.styled("≈ flaky", "bold $warning") if cid in flaky else "",
            )
