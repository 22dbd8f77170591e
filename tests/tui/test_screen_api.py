"""The screens' declared API: the app's history path, RunScreen.prepare, the base screen's
hooks, and the reactive state of History (issue 15, point 5)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from textual.widgets import Input, Select, Static

from tests.support.tui import SIZE, attempts, open_history, screen_after, status, wait_for
from tests.support.tui_history import write_history
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.base import ToolstandScreen
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.report import ReportScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.attempt_list import AttemptList

AppFor = Callable[..., ToolstandApp]


def history_status(screen: HistoryScreen) -> str:
    return str(screen.query_one("#history-status", Static).render())


async def test_marked_indexing_and_the_query_drive_the_status(
    app_for: AppFor, project: Path
) -> None:
    recs = write_history(project)
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))
        lst = screen.query_one(AttemptList)
        assert "marked" not in history_status(screen)
        screen.marked = 3
        assert lst.marked == 3 and "1 marked" in history_status(screen)
        screen.marked = None
        assert lst.marked is None and "marked" not in history_status(screen)
        ix = screen.index
        assert ix is not None and ix.end == ix.size_hint  # read to its end
        screen.indexing = True  # a poll of the file, which did not grow: nothing to say
        assert "indexing" not in history_status(screen)
        screen.indexing = False
        ix.size_hint = ix.end * 2  # the file doubled: the worker is half-way through it
        screen.indexing = True
        assert "indexing 50%" in history_status(screen)
        screen.indexing = False
        assert "indexing" not in history_status(screen)
        ix.size_hint = ix.end
        screen.set_query(screen.query_.__class__(verdict={"fail"}))
        assert screen.result is None and screen.to_top  # a new filter starts from the top
        await wait_for(pilot, lambda: screen.result is not None)
        assert screen.result is not None
        assert "match: verdict" in history_status(screen)
        assert len(screen.result.rows) == sum(
            1 for r in recs if r["judgement"]["verdict"] == "fail"
        )


async def test_the_cursor_is_clamped_to_the_rows_shown(app_for: AppFor, project: Path) -> None:
    recs = write_history(project)
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))
        lst = screen.query_one(AttemptList)
        lst.cursor = 10**6
        assert lst.cursor == len(recs) - 1 and lst.current_row == len(recs) - 1
        lst.cursor = -5
        assert lst.cursor == 0 and lst.current_row == 0
        assert lst.neighbour(-1) == 0 and lst.neighbour(2) == 2


async def test_a_theme_change_repaints_the_cached_lines(app_for: AppFor, project: Path) -> None:
    recs = write_history(project)
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))
        lst = screen.query_one(AttemptList)
        before = lst.render_line(2)
        assert len(lst._cache) > 0
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        assert app.screen is screen
        after = lst.render_line(2)
        assert after.text == before.text  # the same row, in the new theme's colours
        assert [s.style for s in after] != [s.style for s in before]


async def test_the_history_path_is_the_apps_and_report_follows_it(
    app_for: AppFor, project: Path
) -> None:
    write_history(project, "a.jsonl")
    path = project / "runs" / "a.jsonl"
    app = app_for(history=str(path))
    assert app.history_path == os.path.abspath(path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        assert isinstance(app.screen, HistoryScreen) and app.screen.path == app.history_path
        screen = await screen_after(pilot, ReportScreen, "f4")
        await wait_for(pilot, lambda: screen.report is not None)
        assert screen.path == app.history_path


async def test_prepare_chooses_the_case_run_and_mode_then_runs(
    app_for: AppFor, project: Path
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        screen = await screen_after(pilot, RunScreen, "f2")
        screen.prepare("direct_lookup", 1, "forced", run=True)
        bar = [screen.query_one(f"#run-{n}", Select).value for n in ("case", "target", "mode")]
        assert bar == ["direct_lookup", 1, "forced"] and app.selected_case_id == "direct_lookup"
        await wait_for(pilot, lambda: "recorded in" in status(app))
        [rec] = attempts(project)
        assert (rec["case_id"], rec["model"], rec["mode"]) == (
            "direct_lookup",
            "sim-eager",
            "forced",
        )
        screen.prepare("missing_id")  # the run and the mode stay as they were
        bar = [screen.query_one(f"#run-{n}", Select).value for n in ("case", "target", "mode")]
        assert bar == ["missing_id", 1, "forced"] and len(attempts(project)) == 1


async def test_every_mode_is_a_toolstand_screen_and_cursors_do_not_blink(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        for key in ("f1", "f2", "f3", "f4"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, ToolstandScreen), key
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        assert all(not i.cursor_blink for i in app.screen.query(Input))
