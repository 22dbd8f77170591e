"""Legibility at 80x24 (issue 30): placeholders in templates, "/" in a text field, focus
after Discard, and focus that shows in 256 colours."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, OptionList, TextArea

from tests.support.tui import wait_for
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.modals import ConfirmModal, TemplateModal
from toolstand.tui.widgets.case_form import CaseForm
from toolstand.tui.widgets.case_list import CaseTable

AppFor = Callable[..., ToolstandApp]
SMALL = (80, 24)


def footer_keys(app: ToolstandApp) -> set[str]:
    """The keys the footer offers now (a binding check_action hides is left out)."""
    return {key for key, b in app.screen.active_bindings.items() if b.binding.show}


async def new_from_template(pilot: Pilot[Any], app: ToolstandApp, name: str) -> None:
    await pilot.press("ctrl+n")
    await wait_for(pilot, lambda: isinstance(app.screen, TemplateModal))
    options = app.screen.query_one(OptionList)
    options.highlighted = next(
        i for i in range(options.option_count) if options.get_option_at_index(i).id == name
    )
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
    await pilot.pause()


async def test_a_template_s_words_are_a_placeholder_that_typing_replaces(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        await new_from_template(pilot, app, "missing_data")
        user = app.screen.query_one("#f-user", TextArea)
        assert user.has_focus and user.text == ""
        assert "leaves out" in str(user.placeholder)  # what to write, shown, not text
        await pilot.press(*"Where is it?")
        assert user.text == "Where is it?"  # nothing was appended to
        assert app.screen.query_one(CaseForm).values().user == "Where is it?"
        # another case: no placeholder left behind
        await pilot.press("escape")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen.query_one(CaseForm).own_line is not None)
        assert str(user.placeholder) == "" and user.text != ""


async def test_slash_in_a_text_field_types_a_slash_and_search_is_not_offered_there(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert app.screen.query_one(CaseTable).has_focus
        assert "slash" in footer_keys(app)  # on the list, / searches
        field = app.screen.query_one("#f-note", Input)
        field.focus()
        await pilot.pause()
        assert "slash" not in footer_keys(app) and "ctrl+f" in footer_keys(app)
        await pilot.press("a", "slash", "b")
        assert field.value.endswith("a/b") and field.has_focus
        user = app.screen.query_one("#f-user", TextArea)
        user.focus()
        await pilot.press("end", "slash")
        assert user.text.endswith("/") and user.has_focus
        assert "slash" not in footer_keys(app)
        app.screen.query_one(CaseTable).focus()
        await pilot.press("slash")
        assert app.screen.query_one("#search", Input).has_focus


async def test_after_discard_focus_leaves_the_editor(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        await new_from_template(pilot, app, "boundary")
        await pilot.press(*"Quote 1000 kg")
        assert app.screen.query_one("#f-user", TextArea).has_focus
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")  # Discard
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        await pilot.pause()
        focused = app.screen.focused
        assert isinstance(focused, CaseTable)
        assert app.screen.query_one(CaseForm) not in focused.ancestors_with_self
