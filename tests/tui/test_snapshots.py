"""SVG snapshots of the two screens, checked by eye once, then compared on every run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from textual.pilot import Pilot
from textual.widgets import Input, Select, TextArea

from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.modals import PasteModal
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.case_form import CaseForm
from toolstand.tui.widgets.case_list import CaseTable

from .conftest import SIZE, wait_for
from .test_run_screen import PASTED_CALL

AppFor = Callable[..., ToolstandApp]


def test_cases_screen(snap_compare: Any, app_for: AppFor) -> None:
    async def show_a_call_case(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        app.screen.query_one(CaseTable).focus()
        await pilot.press("down", "down")  # quote_complete: a call with arguments
        await wait_for(pilot, lambda: app.screen.query_one(CaseForm).own_line == 3)
        await pilot.pause()

    assert snap_compare(app_for(), terminal_size=SIZE, run_before=show_a_call_case)


def test_cases_screen_with_an_error_at_the_field(snap_compare: Any, app_for: AppFor) -> None:
    async def break_the_arguments(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        app.screen.query_one("#f-arguments", TextArea).load_text('{"order_id": "ORD-12"}')
        await wait_for(
            pilot, lambda: "cannot save" in str(app.screen.query_one("#draft-status").render())
        )
        await pilot.pause()  # the field's error laid out first: the scroll depends on it
        app.screen.query_one(CaseForm).scroll_to_widget(
            app.screen.query_one("#field-arguments"), animate=False
        )
        await pilot.pause()

    assert snap_compare(app_for(), terminal_size=SIZE, run_before=break_the_arguments)


def test_run_screen_with_a_pasted_body(snap_compare: Any, app_for: AppFor) -> None:
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

    assert snap_compare(app_for(), terminal_size=SIZE, run_before=paste_a_call)
