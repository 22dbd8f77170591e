"""The Report screen: the metrics of one run file, computed by metrics.compute_files in a
thread worker (its fast path), shown by ReportView, exported by reporting/formats.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from toolstand.history import list_run_files
from toolstand.reporting import Report, compute_files, dumps_json, write_errors_csv
from toolstand.tui.screens.base import PaletteCommand, ToolstandScreen
from toolstand.tui.screens.run_picker import RunPicker
from toolstand.tui.widgets.footer import Footer
from toolstand.tui.widgets.nav import NavBar
from toolstand.tui.widgets.report_view import ReportView
from toolstand.tui.widgets.status_line import StatusLine
from toolstand.util.printable import visible


def export_paths(runs_dir: Path, history: str) -> tuple[Path, Path]:
    """Where the exports of ``history`` go: runs/<stem>.report.json and .errors.csv."""
    stem = Path(history).stem
    return runs_dir / f"{stem}.report.json", runs_dir / f"{stem}.errors.csv"


Stamp = tuple[int, int]  # a file's size and modification time (ns): what it was computed at


def stamp_of(path: str) -> Stamp:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


class ReportScreen(ToolstandScreen):
    CSS_PATH = "../history.tcss"
    AUTO_FOCUS = "#metric-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "o",
            "open_file",
            "Open file",
            tooltip="Open a run file for the report",
            id="report.open_file",
        ),
        Binding(
            "e",
            "export_json",
            "Export JSON",
            tooltip="Export the report as JSON",
            id="report.export_json",
        ),
        Binding(
            "c",
            "export_csv",
            "Export CSV",
            tooltip="Export the error table as CSV",
            id="report.export_csv",
        ),
        # the tabs (Metrics, Categories, Errors, Cases) from the table, as [ ] step
        # between attempts on an attempt's screen
        Binding(
            "right_square_bracket",
            "step_tab(1)",
            "Next tab",
            tooltip="Next tab: Metrics, Categories, Errors, Cases (or click a tab's name)",
            id="report.tab_next",
        ),
        Binding(
            "left_square_bracket",
            "step_tab(-1)",
            "Previous tab",
            show=False,
            tooltip="Previous tab",
            id="report.tab_prev",
        ),
        Binding(
            "ctrl+l",
            "recompute",
            "Recompute",
            show=False,
            tooltip="Recompute the report from the file",
            id="report.recompute",
        ),
    ]

    @dataclass
    class Computed(Message):
        """The metrics of ``path`` (None, and why, when it could not be read)."""

        path: str
        report: Report | None
        error: str = ""
        stamp: Stamp | None = None

    @dataclass
    class Exported(Message):
        """An export ended: what to tell the user, and whether it worked."""

        text: str
        ok: bool

    def __init__(self) -> None:
        super().__init__()
        self.path: str | None = None
        self.report: Report | None = None
        self.stamp: Stamp | None = None  # the file as the report on show was computed from
        self.computing = False

    def compose(self) -> ComposeResult:
        yield NavBar("report")
        yield StatusLine("no history open · o opens one", id="report-status")
        yield ReportView(id="report")
        yield Footer()

    def on_screen_resume(self) -> None:
        # follow the file the History screen has open, if it changed
        wanted = self.app.history_path
        if wanted and wanted != self.path:
            self.open(wanted)
        elif self.path is None:
            self._newest()
        elif not self.computing:  # kept mounted: recomputed only if the file changed
            self.computing = True
            self._compute(self.path, self.stamp)

    @work(thread=True, exclusive=True, group="pick", exit_on_error=False)
    def _newest(self) -> None:
        files = list_run_files(self.app.project.runs_dir)
        if files:
            self.app.call_from_thread(self.open, files[0].path)
        else:
            self.app.call_from_thread(self._say, f"no *.jsonl in {self.app.project.runs_dir}")

    def _say(self, text: str) -> None:
        self.query_one("#report-status", Static).update(visible(text))

    def open(self, path: str) -> None:
        self.path = path
        self.query_one(NavBar).set_detail(visible(Path(path).name))
        self._say(f"computing the metrics of {Path(path).name} …")
        self.computing = True
        self._compute(path)

    @work(thread=True, exclusive=True, group="compute", exit_on_error=False)
    def _compute(self, path: str, unless: Stamp | None = None) -> None:
        """The metrics of ``path``; nothing new when it is still as stamped ``unless``."""
        try:
            stamp = stamp_of(path)
            report = None if stamp == unless else compute_files([path], collect_failures=True)
        except OSError as exc:
            self.post_message(self.Computed(path, None, f"cannot read {path}: {exc.strerror}"))
            return
        self.post_message(self.Computed(path, report, stamp=stamp))

    @on(Computed)
    def _computed(self, event: Computed) -> None:
        if event.path != self.path:
            return
        self.computing = False
        if event.report is None and not event.error:
            return  # unchanged since the report on show
        self.stamp = event.stamp
        if event.report is None:
            self._say(event.error)
            self.notify(visible(event.error), severity="error", markup=False)
            return
        self.report = event.report
        self.query_one(ReportView).show(event.report)
        warned = f" · {len(event.report.warnings)} warnings" if event.report.warnings else ""
        name = Path(event.path).name
        if not event.report.groups:
            first = f": {event.report.warnings[0]}" if event.report.warnings else ""
            self._say(f"{name} holds no attempts: not a toolstand history?{first}")
            return
        self._say(f"{name}: metrics per provider × model × mode{warned}")

    # --- keys --------------------------------------------------------------------------

    def action_open_file(self) -> None:
        def chosen(path: str | None) -> None:
            if path:
                self.app.history_path = path
                self.open(path)

        self.app.push_screen(RunPicker(self.app.project.runs_dir, self.path), chosen)

    def action_step_tab(self, step: int) -> None:
        self.query_one(ReportView).step_tab(step)

    def action_recompute(self) -> None:
        if self.path:
            self.open(self.path)

    def action_export_json(self) -> None:
        self._export("json")

    def action_export_csv(self) -> None:
        self._export("csv")

    def _export(self, kind: str) -> None:
        if self.report is None or self.path is None:
            self.notify("Nothing to export yet.", markup=False)
            return
        self._write(kind, self.report, self.path)

    @work(thread=True, group="export", exit_on_error=False)
    def _write(self, kind: str, report: Report, history: str) -> None:
        runs = self.app.project.runs_dir
        json_path, csv_path = export_paths(runs, history)
        try:
            runs.mkdir(parents=True, exist_ok=True)
            if kind == "json":
                json_path.write_bytes(dumps_json(report))
                text = f"Exported the JSON report to {json_path}"
            else:
                with open(csv_path, "w", newline="", encoding="utf-8") as fh:
                    n = write_errors_csv(report, fh)
                text = f"Exported {n} error rows to {csv_path}"
        except OSError as exc:
            self.post_message(self.Exported(f"Export failed: {exc}", False))
            return
        self.post_message(self.Exported(text, True))

    @on(Exported)
    def _exported(self, event: Exported) -> None:
        # the paths are named after the history file, which may hold control characters
        text = visible(event.text)
        self.notify(text, severity="information" if event.ok else "error", markup=False)

    def palette_commands(self) -> Iterator[PaletteCommand]:
        yield ("Report: export JSON", "to runs/<name>.report.json (e)", self.action_export_json)
        yield ("Report: export error CSV", "to runs/<name>.errors.csv (c)", self.action_export_csv)
