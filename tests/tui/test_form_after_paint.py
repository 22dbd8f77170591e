"""The Cases screen's form is built after the screen's first frame (widgets/case_form.py),
and the screen is usable from that frame on: a key or a click pressed before the form is
built waits for it, then does what it does on the finished screen.

Most tests here hold the form's own build off (FORM_AFTER_S: an hour), so that the keys
pressed are the ones that build it, and nothing races them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, TextArea

from tests.support.tui import SIZE, shown, wait_for
from toolstand.tui.app import ToolstandApp
from toolstand.tui.messages import OpenCase
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.modals import TemplateModal
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets import case_form
from toolstand.tui.widgets.case_form import CaseForm
from toolstand.tui.widgets.case_list import CaseTable

AppFor = Callable[..., ToolstandApp]


@pytest.fixture(autouse=True)
def built_later(form_built_with_its_screen: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the app runs outside the tests (the conftest composes the form at once)."""
    monkeypatch.setattr(CaseForm, "BUILT_LATER", True)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> None:
    """The form's own build never comes within a test: only a key or a call builds it."""
    monkeypatch.setattr(case_form, "FORM_AFTER_S", 3600.0)


async def listed(pilot: Pilot[Any]) -> CasesScreen:
    """Until the Cases screen lists its cases and is drawn (no key pressed)."""
    app = pilot.app
    for _ in range(200):
        screen = app.screen
        if isinstance(screen, CasesScreen) and screen.query_one(CaseTable).row_count:
            await pilot.pause()
            return screen
        await pilot.pause()
    raise AssertionError("the case list never showed")


def form_of(screen: CasesScreen) -> CaseForm:
    return screen.query_one(CaseForm)


def checked(form: CaseForm) -> bool:
    return form.draft is not None


def shown_id(app: ToolstandApp) -> str:
    return app.screen.query_one("#f-id", Input).value


@pytest.mark.usefixtures("held")
async def test_the_list_is_drawn_before_the_form_and_the_form_then_shows_the_first_case(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        form = form_of(screen)
        assert not form.built and not form.children  # drawn without its fields
        assert screen.line == 1  # the first case is the one the form will show
        await form.build()
        await pilot.pause()
        assert shown_id(app) == "direct_lookup"
        assert str(screen.query_one("#draft-status").render()) == "line 1 · saved"


async def test_the_form_builds_itself_after_the_first_frame(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        form = form_of(await listed(pilot))
        await asyncio.wait_for(form.wait_built(), timeout=60)
        await pilot.pause()
        assert shown_id(app) == "direct_lookup"


@pytest.mark.usefixtures("held")
async def test_down_and_enter_at_once_open_the_second_case(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        await pilot.press("down", "enter")
        assert form_of(screen).built
        assert screen.line == 2
        assert shown_id(app) == "missing_id"


@pytest.mark.usefixtures("held")
async def test_tab_at_once_goes_where_it_goes_on_the_finished_screen(
    app_for: AppFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks = []
    for later in (True, False):  # the form built by the key, and composed at once
        monkeypatch.setattr(CaseForm, "BUILT_LATER", later)
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            screen = await listed(pilot)
            assert isinstance(screen.focused, CaseTable)
            walk = []
            for _ in range(3):
                await pilot.press("tab")
                walk.append(screen.focused.id if screen.focused else None)
            assert shown_id(app) == "direct_lookup"
            walks.append(walk)
    assert walks[0] == walks[1]
    assert "f-id" in walks[0]  # into the form's fields, not around the list


@pytest.mark.usefixtures("held")
async def test_f2_at_once_switches_and_the_form_is_there_on_the_way_back(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot)
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        assert shown_id(app) == "direct_lookup"


@pytest.mark.usefixtures("held")
async def test_a_new_case_at_once_starts_from_the_template(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: isinstance(app.screen, TemplateModal))
        options = app.screen.query_one(OptionList)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        user = screen.query_one("#f-user", TextArea)
        assert screen.focused is user and user.placeholder
        assert screen.line is None and options.option_count


@pytest.mark.usefixtures("held")
async def test_a_case_opened_before_the_form_is_built_is_the_one_it_shows(
    app_for: AppFor,
) -> None:
    # History's "open the case" (OpenCase) reaches the screen before any key does
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        screen = await listed(pilot)
        app.post_message(OpenCase("quote_complete"))
        await shown(pilot, lambda: screen.line == 3)  # not wait_for: the build is held
        assert not form_of(screen).built
        await pilot.press("ctrl+s")  # saving nothing changed: the form's own answer
        assert shown_id(app) == "quote_complete"
        assert "nothing changed" in str(screen.query_one("#draft-status").render())


@pytest.mark.usefixtures("held")
async def test_the_form_built_late_draws_the_screen_the_form_built_at_once_does(
    app_for: AppFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    shots = []
    for later in (True, False):
        monkeypatch.setattr(CaseForm, "BUILT_LATER", later)
        app = app_for()
        async with app.run_test(size=SIZE) as pilot:
            screen = await listed(pilot)
            form = form_of(screen)
            await form.build()
            await shown(pilot, partial(checked, form))
            await pilot.pause()
            shots.append(app.export_screenshot())
    assert shots[0] == shots[1]
