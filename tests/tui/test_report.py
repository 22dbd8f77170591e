"""The Report screen over the fixture history: tables from metrics.Report, exports."""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from textual.pilot import Pilot
from textual.widgets import DataTable, OptionList, Static

from tests.support.tui import SIZE, cells, open_report, wait_for
from tests.support.tui_history import write_history
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.report import ReportScreen
from toolstand.tui.widgets.report_view import ReportView, bar

AppFor = Callable[..., ToolstandApp]


def write_flaky_history(project: Path) -> list[dict[str, Any]]:
    """The fixture plus one failed repetition of a case sim-careful otherwise passes."""
    recs = write_history(project)
    extra = next(r for r in recs if r["model"] == "sim-eager" and r["case_id"] == "missing_id")
    extra = dict(extra, model="sim-careful", attempt=3)
    with open(project / "runs" / "fixture.jsonl", "ab") as fh:
        fh.write(orjson.dumps(extra) + b"\n")
    return [*recs, extra]


def test_bars_fill_eighths() -> None:
    assert bar(1.0, 4) == "████" and bar(0.0, 4) == "    " and bar(None, 2) == "  "
    assert bar(0.5, 3) == "█▌ "


async def test_metrics_errors_and_flaky_cases(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    write_flaky_history(project)
    app = app_for(start_mode="report")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_report(pilot, app)
        assert screen.path is not None and screen.path.endswith("fixture.jsonl")
        metrics = cells(screen.query_one("#metric-table", DataTable))
        assert [r[:3] for r in metrics] == [
            ["sim/sim-careful (simulated)", "auto", "13/13"],
            ["sim/sim-eager (simulated)", "auto", "12/12"],
        ]
        assert metrics[0][3].endswith("92.3%")  # 12 of 13 passed
        assert metrics[1][3].endswith("33.3%")  # only direct_lookup passes
        detail = str(screen.query_one("#metric-detail", Static).render())
        assert "12/13" in detail and "95% CI" in detail and "(simulated)" in detail
        errors = cells(screen.query_one("#error-table", DataTable))
        assert ["4", "unsafe_call", "auto", "sim/sim-eager (simulated)"] in errors
        cases = cells(screen.query_one("#case-table-r", DataTable))
        flaky = {r[0]: r[4] for r in cases}
        assert flaky == {"cancel_implicit": "", "direct_lookup": "", "missing_id": "≈ flaky"}
        # the other group's cases when its row is highlighted
        await pilot.press("down")
        await wait_for(
            pilot,
            lambda: "sim-eager" in str(screen.query_one("#cases-title", Static).render()),
        )


async def test_exports_go_to_runs_with_a_notice(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    write_history(project)
    app = app_for(start_mode="report")
    async with app.run_test(size=SIZE) as pilot:
        await open_report(pilot, app)
        await pilot.press("e", "c")
        json_path = project / "runs" / "fixture.report.json"
        csv_path = project / "runs" / "fixture.errors.csv"
        await wait_for(pilot, lambda: json_path.exists() and csv_path.exists())
        await wait_for(pilot, lambda: len(app._notifications) >= 2)
        notes = [n.message for n in app._notifications]
        assert any(str(json_path) in n for n in notes) and any(str(csv_path) in n for n in notes)
    data = orjson.loads(json_path.read_bytes())
    assert [(r["model"], r["mode"]) for r in data["results"]] == [
        ("sim-careful", "auto"),
        ("sim-eager", "auto"),
    ]
    eager = data["results"][1]
    assert eager["pass_rate"]["numerator"] == 4 and eager["pass_rate"]["denominator"] == 12
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:3] == ["provider", "model", "mode"]
    assert sum(1 for r in rows[1:] if r[5] == "unsafe_call") == 4


async def test_switching_run_files(app_for: AppFor, project: Path, fixed_clock: None) -> None:
    write_history(project)
    (project / "runs" / "small.jsonl").write_bytes(
        (project / "runs" / "fixture.jsonl").read_bytes().splitlines(keepends=True)[0]
        + b"".join((project / "runs" / "fixture.jsonl").read_bytes().splitlines(keepends=True)[1:4])
    )
    app = app_for(start_mode="report")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_report(pilot, app)
        await pilot.press("o")
        await wait_for(pilot, lambda: bool(app.screen.query("#picker-list")))
        options = app.screen.query_one("#picker-list", OptionList)
        await wait_for(pilot, lambda: options.option_count == 2)
        texts = [str(options.get_option_at_index(i).prompt) for i in range(2)]
        options.highlighted = next(i for i, t in enumerate(texts) if t.startswith("small.jsonl"))
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: screen.path is not None and screen.path.endswith("small.jsonl")
        )
        await wait_for(
            pilot, lambda: screen.report is not None and screen.report.files[0] == screen.path
        )
        assert screen.report is not None
        assert sum(g.attempted for g in screen.report.groups) == 3
        assert isinstance(screen.query_one(ReportView), ReportView)


def test_report_screen_snapshot(
    snap_compare: Any, app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    write_flaky_history(project)

    async def show(pilot: Pilot[Any]) -> None:
        await open_report(pilot, pilot.app)  # type: ignore[arg-type]
        await pilot.pause()

    assert snap_compare(app_for(start_mode="report"), terminal_size=SIZE, run_before=show)


async def test_a_file_that_is_not_a_history_leaves_nothing_of_the_last_one(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    write_history(project)
    notes = project / "runs" / "notes.jsonl"
    notes.write_bytes(b"".join(b"plain text line %d\n" % i for i in range(9)) + b"no newline")
    os.utime(notes, (1e9, 1e9))  # older: the fixture opens first
    app = app_for(start_mode="report")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_report(pilot, app)
        assert screen.query_one("#case-table-r", DataTable).row_count == 3
        screen.open(str(notes))
        await wait_for(
            pilot, lambda: screen.report is not None and screen.report.files[0] == str(notes)
        )
        await pilot.pause()
        assert screen.query_one("#case-table-r", DataTable).row_count == 0
        assert "no cases" in str(screen.query_one("#cases-title", Static).render())
        status = str(screen.query_one("#report-status", Static).render())
        assert "notes.jsonl holds no attempts" in status
        # the History screen follows: the file the Report opened is the one it shows
        app.history_path = str(notes)
        await pilot.press("f3")
        await wait_for(pilot, lambda: getattr(app.screen, "path", None) == str(notes))
        history = app.screen
        await wait_for(pilot, lambda: not getattr(history, "indexing", True))
        await pilot.pause()
        said = str(history.query_one("#history-status", Static).render())
        assert "notes.jsonl is not a toolstand history" in said and "line 1" in said


async def test_the_report_shows_escapes_spelled(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    evil = dict(recs[0], provider="sim\x1b]0;T\x07", case_id="case\x1b[2J\x9b")
    with open(project / "runs" / "fixture.jsonl", "ab") as fh:
        fh.write(orjson.dumps(evil) + b"\n")
    app = app_for(start_mode="report")
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_report(pilot, app)
        metrics = cells(screen.query_one("#metric-table", DataTable))
        assert any(r[0].startswith("sim\\x1b]0;T\\x07/sim-careful") for r in metrics), metrics
        for row in range(len(metrics)):
            screen.query_one("#metric-table", DataTable).move_cursor(row=row)
            await pilot.pause()
            for table in ("#metric-table", "#error-table", "#case-table-r"):
                for r in cells(screen.query_one(table, DataTable)):
                    assert not any("\x1b" in c or "\x9b" in c for c in r)
        shown = app.export_screenshot()
        assert "\x1b" not in shown and "\x9b" not in shown


async def test_an_export_notice_spells_control_characters_in_the_file_name(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    name = "ev\x1b]0;T\x07il\x9b.jsonl"
    write_history(project, name)
    app = app_for(history=str(project / "runs" / name), start_mode="report")
    async with app.run_test(size=SIZE) as pilot:
        await open_report(pilot, app)
        await pilot.press("e")
        await wait_for(pilot, lambda: any("Exported" in n.message for n in app._notifications))
        notes = [n.message for n in app._notifications]
        assert not any("\x1b" in n or "\x07" in n or "\x9b" in n for n in notes), notes
        assert any("ev\\x1b]0;T\\x07il\\x9b.report.json" in n for n in notes), notes


async def test_the_app_starts_on_the_report_of_the_history_it_was_given(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    write_history(project)
    older = project / "runs" / "older.jsonl"
    lines = (project / "runs" / "fixture.jsonl").read_bytes().splitlines(keepends=True)
    older.write_bytes(b"".join(lines[:4]))  # the header and three attempts
    os.utime(older, (1e9, 1e9))  # not the newest: opened only because it was asked for
    app = app_for(history=str(older), start_mode="report")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen))
        screen = app.screen
        assert isinstance(screen, ReportScreen) and app.built_modes == {"report"}
        await wait_for(pilot, lambda: screen.report is not None)
        assert screen.path == str(older) and app.history_path == str(older)
        assert screen.report is not None
        assert sum(g.attempted for g in screen.report.groups) == 3
