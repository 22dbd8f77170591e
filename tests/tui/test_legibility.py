"""Legibility at 80x24 (issue 30): placeholders in templates, "/" in a text field, focus
after Discard, focus that shows in 256 colours, and the open dialog's path box."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.color import Color as RichColor
from rich.color import ColorSystem
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Select, TextArea
from textual.widgets._select import SelectCurrent

from tests.support.tui import open_history, wait_for
from tests.support.tui_history import write_history
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.modals import ConfirmModal, TemplateModal
from toolstand.tui.screens.run_picker import RunPicker
from toolstand.tui.widgets.attempt_list import AttemptList
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


def _c256(color: Any) -> int | None:
    """A rich colour as tmux's 256-colour palette shows it."""
    return RichColor.from_rgb(*color.triplet).downgrade(ColorSystem.EIGHT_BIT).number


async def test_a_focused_history_list_draws_its_cursor_row_as_focused(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    app = app_for(start_mode="history")
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_history(pilot, app, len(recs))
        lst = screen.query_one(AttemptList)
        lst.cursor = 3
        await pilot.pause()

        def cursor_bg() -> int | None:
            strip = lst.render_line(lst.line_of(lst.cursor))
            return _c256(next(s.style.bgcolor for s in strip if s.style and s.style.bgcolor))

        assert lst.has_focus
        focused = cursor_bg()
        await pilot.press("f")  # into the filter panel: the list is blurred
        await pilot.pause()
        assert not lst.has_focus
        blurred = cursor_bg()
        assert blurred != focused  # plain in 256 colours which list has the keys
        await pilot.press("escape")  # back to the list: its cursor row drawn as focused
        await pilot.pause()
        assert lst.has_focus and cursor_bg() == focused


async def test_a_focused_select_is_distinct_from_an_unfocused_one_in_256_colours(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        for select in app.screen.query(Select):
            current = select.query_one(SelectCurrent)
            select.focus()
            await pilot.pause()
            on = current.rich_style.bgcolor
            app.screen.query_one(CaseTable).focus()
            await pilot.pause()
            off = current.rich_style.bgcolor
            assert on is not None and off is not None
            assert _c256(on) != _c256(off), select.id


async def test_the_run_bar_s_compact_selects_show_focus_in_256_colours(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        body = app.screen.query_one("#request-body", TextArea)
        for which in ("case", "target", "mode"):
            select = app.screen.query_one(f"#run-{which}", Select)
            current = select.query_one(SelectCurrent)
            select.focus()
            await pilot.pause()
            on = current.rich_style.bgcolor
            body.focus()
            await pilot.pause()
            off = current.rich_style.bgcolor
            assert on is not None and off is not None
            assert _c256(on) != _c256(off), which


async def test_the_open_dialog_s_path_box_has_a_border_takes_focus_and_opens_what_is_typed(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    write_history(project, "a.jsonl")
    recs = write_history(project, "b.jsonl")
    app = app_for(start_mode="history")
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        history = app.screen
        assert isinstance(history, HistoryScreen)
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, RunPicker))
        listed = app.screen.query_one("#picker-list", OptionList)
        await wait_for(pilot, lambda: listed.option_count == 2)
        box = app.screen.query_one("#picker-path", Input)
        assert app.focused is box  # typing goes to the path, not the list
        assert box.styles.border_top[0] not in ("", "none") and box.region.height >= 3
        highlighted = listed.highlighted_option
        assert highlighted is not None
        other = next(n for n in ("a.jsonl", "b.jsonl") if not str(highlighted.id).endswith(n))
        await pilot.press(*f"runs/{other}")
        assert isinstance(app.screen, RunPicker)  # nothing opened while typing
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is history)
        assert history.path == str(project / "runs" / other)  # what was typed, not the list's
        await wait_for(pilot, lambda: history.index is not None and history.index.rows == len(recs))


async def test_slash_in_history_s_filter_text_types_a_slash_and_is_not_offered(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    app = app_for(start_mode="history")
    async with app.run_test(size=SMALL) as pilot:
        await open_history(pilot, app, len(recs))
        await pilot.press("f")
        field = app.screen.query_one("#f-text", Input)
        field.focus()
        await pilot.press("a", "slash", "b")
        assert field.value == "a/b" and field.has_focus
        assert "slash" not in footer_keys(app)
