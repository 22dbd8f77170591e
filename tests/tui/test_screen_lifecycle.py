"""The screens' lifecycle: Run, History and Report built once, out of sight, after the
first paint, kept mounted, and refreshed on their return with only what changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Select

from tests.support.tui import SIZE, settle, wait_for
from tests.support.tui_history import write_history
from toolstand.tui.app import ToolstandApp
from toolstand.tui.model.verdicts import LastVerdict
from toolstand.tui.screens import history as history_screen
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.report import ReportScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.case_list import CaseTable

AppFor = Callable[..., ToolstandApp]


@pytest.fixture
def built_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """As the app runs outside the tests: the three screens built after the first paint."""
    monkeypatch.setattr(ToolstandApp, "BUILT_AHEAD", ("cases", "run", "history", "report"))


@pytest.fixture
def no_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    """History's poll never fires within a test: only its return can catch it up."""
    monkeypatch.setattr(history_screen, "POLL_S", 3600.0)


ALL = {"cases", "run", "history", "report"}


def _built(app_for: AppFor, project: Path) -> tuple[ToolstandApp, list[dict[str, Any]]]:
    """A history in runs/ and an app over it (run it, then wait for ``_ready``)."""
    return app_for(), write_history(project)


async def _ready(pilot: Pilot[Any], app: ToolstandApp, key: str) -> Screen[Any]:
    """Every screen built ahead, then ``key`` pressed: the screen it shows."""
    await wait_for(pilot, lambda: app.built_modes == ALL)
    await pilot.press(key)
    return app.screen


def _append(path: Path, rec: dict[str, object]) -> None:
    with path.open("ab") as fh:
        fh.write(orjson.dumps(rec) + b"\n")


@pytest.mark.usefixtures("built_ahead")
async def test_the_screens_are_built_out_of_sight_and_the_first_visit_shows_them(
    app_for: AppFor, project: Path
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.built_modes == ALL)
        await settle(pilot)
        # Cases stayed current and kept its focus while the others were built
        assert isinstance(app.screen, CasesScreen)
        assert isinstance(app.focused, CaseTable)
        for key, kind in (("f2", RunScreen), ("f3", HistoryScreen), ("f4", ReportScreen)):
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, kind)
        await pilot.press("f2")
        await settle(pilot)
        # the Run screen built ahead offers the cases, the first chosen
        run = app.screen
        assert isinstance(run, RunScreen)
        first = app.project.casefile.cases[0].id
        assert run.query_one("#run-case", Select).value == first


async def test_a_screen_visited_twice_is_the_same_screen(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        seen = {}
        for key in ("f2", "f3", "f4", "f1"):
            await pilot.press(key)
            await settle(pilot)
            seen[key] = app.screen
        for key in ("f2", "f3", "f4", "f1"):
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is seen[key]


@pytest.mark.usefixtures("built_ahead", "no_poll")
async def test_a_history_appended_while_away_is_shown_on_return(
    app_for: AppFor, project: Path
) -> None:
    app, recs = _built(app_for, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ready(pilot, app, "f3")
        assert isinstance(screen, HistoryScreen)
        await wait_for(
            pilot, lambda: screen.result is not None and len(screen.result.rows) == len(recs)
        )
        await pilot.press("f1")
        await settle(pilot)
        _append(project / "runs" / "fixture.jsonl", {**recs[0], "attempt": 99})
        await settle(pilot)
        assert screen.index is not None and screen.index.rows == len(recs)  # not while away
        await pilot.press("f3")
        await wait_for(
            pilot, lambda: screen.index is not None and screen.index.rows == len(recs) + 1
        )
        assert app.screen is screen


@pytest.mark.usefixtures("built_ahead")
async def test_a_report_is_recomputed_on_return_only_when_its_file_changed(
    app_for: AppFor, project: Path
) -> None:
    app, recs = _built(app_for, project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ready(pilot, app, "f4")
        assert isinstance(screen, ReportScreen)
        await wait_for(pilot, lambda: screen.report is not None)
        first = screen.report
        assert first is not None
        attempted = sum(g.attempted for g in first.groups)
        await pilot.press("f1")
        await pilot.press("f4")
        await settle(pilot)
        assert screen.report is first  # the file did not change: nothing recomputed
        await pilot.press("f1")
        _append(project / "runs" / "fixture.jsonl", {**recs[0], "attempt": 99})
        await pilot.press("f4")
        await wait_for(pilot, lambda: screen.report is not first)
        assert screen.report is not None
        assert sum(g.attempted for g in screen.report.groups) == attempted + 1


async def test_a_verdict_recorded_on_another_screen_is_listed_on_return_to_cases(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        cases = app.screen
        table = cases.query_one(CaseTable)
        first = str(table.get_row_at(0)[0])
        await pilot.press("f2")
        await settle(pilot)
        app.record_verdict(first, LastVerdict("fail", "p/m auto"))
        await pilot.press("f1")
        await settle(pilot)
        assert app.screen is cases
        assert str(table.get_row_at(0)[0]) == first
        assert str(table.get_row_at(0)[table.get_column_index("last")]) == "FAIL"
