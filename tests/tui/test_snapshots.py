"""SVG snapshots of the screens at 100×30 and at 80×24, checked by eye once, then compared
on every run."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static, TextArea

from tests.support.tui import (
    PASTED_CALL,
    SIZE,
    open_history,
    open_run,
    screen_after,
    status,
    wait_for,
)
from tests.support.tui_history import write_history
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.attempt import AttemptScreen
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.help import HelpScreen
from toolstand.tui.screens.modals import PasteModal
from toolstand.tui.screens.report import ReportScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.attempt_detail import AttemptDetail
from toolstand.tui.widgets.case_form import CaseForm
from toolstand.tui.widgets.case_list import CaseTable
from toolstand.tui.widgets.titled import Titled

AppFor = Callable[..., ToolstandApp]
SMALL = (80, 24)  # a terminal nobody resized, tmux's default


async def show_a_call_case(pilot: Pilot[Any]) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
    app.screen.query_one(CaseTable).focus()
    await pilot.press("down", "down")  # quote_complete: a call with arguments
    await wait_for(pilot, lambda: app.screen.query_one(CaseForm).own_line == 3)
    await pilot.pause()


async def break_the_arguments(pilot: Pilot[Any]) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
    app.screen.query_one("#f-arguments", TextArea).load_text('{"order_id": "ORD-12"}')
    await wait_for(
        pilot, lambda: "cannot save" in str(app.screen.query_one("#draft-status").render())
    )
    form = app.screen.query_one(CaseForm)
    field = app.screen.query_one("#field-arguments")
    # the form's fields settle their heights over a few refreshes: scroll until it holds
    last = -1.0
    while form.scroll_y != last:
        last = form.scroll_y
        form.scroll_to_widget(field, animate=False)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()


async def paste_a_call(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, ToolstandApp)
    app.selected_case_id = "cancel_implicit"
    await pilot.press("f2")
    await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
    await pilot.pause()
    app.screen.query_one("#run-target", Select).value = 0
    await pilot.press("ctrl+o")
    await wait_for(pilot, lambda: isinstance(app.screen, PasteModal))
    app.screen.query_one("#paste-status", Input).value = "200"
    app.screen.query_one("#paste-body", TextArea).load_text(orjson.dumps(PASTED_CALL).decode())
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
    await pilot.pause()


def test_cases_screen(snap_compare: Any, app_for: AppFor) -> None:
    assert snap_compare(app_for(), terminal_size=SIZE, run_before=show_a_call_case)


def test_cases_screen_with_an_error_at_the_field(snap_compare: Any, app_for: AppFor) -> None:
    assert snap_compare(app_for(), terminal_size=SIZE, run_before=break_the_arguments)


def test_run_screen_with_a_pasted_body(snap_compare: Any, app_for: AppFor) -> None:
    assert snap_compare(app_for(), terminal_size=SIZE, run_before=paste_a_call)


# --- the same at 80×24, and the screens only a small terminal had no snapshot of ----------


def test_cases_screen_80x24(snap_compare: Any, app_for: AppFor) -> None:
    assert snap_compare(app_for(), terminal_size=SMALL, run_before=show_a_call_case)


def test_cases_screen_with_an_error_at_the_field_80x24(snap_compare: Any, app_for: AppFor) -> None:
    assert snap_compare(app_for(), terminal_size=SMALL, run_before=break_the_arguments)


def test_run_screen_with_a_pasted_body_80x24(snap_compare: Any, app_for: AppFor) -> None:
    assert snap_compare(app_for(), terminal_size=SMALL, run_before=paste_a_call)


def test_help_screen_80x24(snap_compare: Any, app_for: AppFor) -> None:
    async def open_help(pilot: Pilot[Any]) -> None:
        await show_a_call_case(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
        await pilot.pause()

    assert snap_compare(app_for(), terminal_size=SMALL, run_before=open_help)


def test_history_failures_80x24(
    snap_compare: Any, app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    rows = len(write_history(project))

    async def failures(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, ToolstandApp)
        screen = await open_history(pilot, app, rows)
        await pilot.press("F")
        await wait_for(pilot, lambda: screen.query_.verdict == {"fail"} and not screen.querying)
        await pilot.pause()

    assert snap_compare(app_for(), terminal_size=SMALL, run_before=failures)


def test_a_failing_attempt_80x24(
    snap_compare: Any, app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    rows = len(write_history(project))

    async def open_a_failure(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, ToolstandApp)
        screen = await open_history(pilot, app, rows)
        await pilot.press("F")
        await wait_for(pilot, lambda: screen.query_.verdict == {"fail"} and not screen.querying)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
        detail = app.screen.query_one(AttemptDetail)
        await wait_for(pilot, lambda: detail.rec is not None)
        await pilot.pause()

    assert snap_compare(app_for(), terminal_size=SMALL, run_before=open_a_failure)


def test_report_screen_80x24(
    snap_compare: Any, app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    write_history(project)

    async def show(pilot: Pilot[Any]) -> None:
        screen = await screen_after(pilot, ReportScreen, "f4")
        await wait_for(pilot, lambda: screen.report is not None)
        await pilot.pause()

    assert snap_compare(app_for(), terminal_size=SMALL, run_before=show)


def test_run_screen_second_turn_80x24(snap_compare: Any, app_for: AppFor) -> None:
    async def send_turn_two(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, ToolstandApp)
        await open_run(pilot, app, "recovery_lookup_ok")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "ctrl+t sends turn 2" in status(app))
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "recorded in" in status(app))
        # the file, the port, the times and the answer's "created" differ run to run
        app.screen.query_one("#run-status", Static).update("turn 2 recorded")
        for pane in app.screen.query(".pane"):  # each wording, as the pane fits one in
            assert isinstance(pane, Titled)
            pane.titled(
                *(re.sub(r"\d+ ms", "N ms", re.sub(r":\d+\S*", ":PORT", x)) for x in pane.choices)
            )
        raw = app.screen.query_one("#response-body", TextArea)
        raw.load_text(re.sub(r'"created": \d+', '"created": 0', raw.text))
        app.screen.query_one("#pane-verdict").focus()
        await pilot.pause()

    assert snap_compare(app_for(), terminal_size=SMALL, run_before=send_turn_two)
