"""Reaching a pane or a list by key at 80x24 (issue 30): the Run bar's lists each have a
key, and the jump overlay puts a letter on every pane that takes focus."""

from __future__ import annotations

from collections.abc import Callable

from textual.widget import Widget
from textual.widgets import Input, Label, OptionList, Select, TextArea

from tests.support.tui import help_text, on_run, open_run, turn_one, wait_for
from toolstand.tui.app import ToolstandApp
from toolstand.tui.commands import ToolstandCommands
from toolstand.tui.screens.help import HelpScreen
from toolstand.tui.widgets.case_list import CaseTable
from toolstand.tui.widgets.footer import Footer
from toolstand.tui.widgets.jump_overlay import JumpOverlay

AppFor = Callable[..., ToolstandApp]
SMALL = (80, 24)


def footer_text(app: ToolstandApp) -> str:
    """What the footer's keys and group labels say, in order."""
    footer = app.screen.query_one(Footer)
    return " ".join(str(w.render()) for w in footer.query(Widget) if not w.children)


async def test_each_list_of_the_run_bar_has_a_key_that_opens_it(app_for: AppFor) -> None:
    app = on_run(app_for, "direct_lookup")
    async with app.run_test(size=SMALL) as pilot:
        await open_run(pilot, app, "direct_lookup")
        app.screen.query_one("#request-body", TextArea).focus()
        await pilot.pause()
        footer = footer_text(app)
        assert "Case/run/mode" in footer, footer
        for key, which in (("c", "case"), ("r", "target"), ("m", "mode")):
            select = app.screen.query_one(f"#run-{which}", Select)
            await pilot.press(key)
            await pilot.pause()
            assert select.expanded, which
            assert isinstance(app.focused, OptionList) and select in app.focused.ancestors
            await pilot.press("escape")
            await pilot.pause()
            assert not select.expanded and app.focused is select
        await pilot.press("m")
        await pilot.press("down", "enter")  # the next mode after auto
        await pilot.pause()
        assert app.screen.query_one("#run-mode", Select).value == "forced"


async def test_the_bar_keys_type_into_the_results_editor_and_are_in_the_help(
    app_for: AppFor,
) -> None:
    app = on_run(app_for, "recovery_retryable_problem")
    async with app.run_test(size=SMALL) as pilot:
        await turn_one(pilot, app, "recovery_retryable_problem")
        editor = app.screen.query_one("#result-0", TextArea)
        editor.focus()
        editor.text = ""
        await pilot.press("c", "r", "m")
        assert editor.text == "crm" and app.focused is editor
        assert not any(s.expanded for s in app.screen.query(Select))
        app.screen.query_one("#request-body", TextArea).focus()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = help_text(app)
        for said in ("Choose the case", "Choose the run (provider/model)", "Choose the mode"):
            assert said in text


async def test_the_bar_keys_stay_out_of_a_full_footer_and_move_with_the_keymap(
    app_for: AppFor,
) -> None:
    app = on_run(app_for, "recovery_retryable_problem", keymap={"run.bar.mode": "M"})
    async with app.run_test(size=SMALL) as pilot:
        await turn_one(pilot, app, "recovery_retryable_problem")
        app.screen.query_one("#request-body", TextArea).focus()
        await pilot.pause()
        footer = footer_text(app)
        assert "Send turn 2" in footer and "Help" in footer  # no room for the bar's keys
        assert "Case/run/mode" not in footer
        await pilot.press("m")
        await pilot.pause()
        assert not app.screen.query_one("#run-mode", Select).expanded
        await pilot.press("M")  # the remapped key, in this state too
        await pilot.pause()
        assert app.screen.query_one("#run-mode", Select).expanded


async def test_jump_mode_letters_each_pane_and_a_letter_focuses_it(app_for: AppFor) -> None:
    app = on_run(app_for, "direct_lookup")
    async with app.run_test(size=SMALL) as pilot:
        await open_run(pilot, app, "direct_lookup")
        run = app.screen
        before = run.focused
        await pilot.press("f9")
        await pilot.pause()
        overlay = app.screen
        assert isinstance(overlay, JumpOverlay)
        targets = overlay.targets
        # every pane and list Tab reaches on screen, each under its own letter, drawn there
        wanted = {"run-case", "run-target", "run-mode", "request-body", "response-body"}
        assert wanted <= {w.id for w in targets.values()}
        assert len(set(map(id, targets.values()))) == len(targets)
        for letter, widget in targets.items():
            label = overlay.query_one(f"#jump-{letter}", Label)
            assert str(label.render()) == letter
            assert label.region.offset == widget.region.offset
        await pilot.press("tab", "x")  # neither moves the focus beneath nor closes
        assert app.screen is overlay and run.focused is before
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is run and run.focused is before
        verdict = next(w for w in targets.values() if "verdict" in (w.id or ""))
        letter = next(k for k, w in targets.items() if w is verdict)
        await pilot.press("f9")
        await pilot.pause()
        await pilot.press(letter)
        await pilot.pause()
        assert app.screen is run and run.focused is verdict


async def test_jump_mode_works_from_a_text_field_and_is_in_the_help_and_palette(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        cases = app.screen
        note = cases.query_one("#f-note", Input)
        note.focus()
        await pilot.press("f9")
        await pilot.pause()
        overlay = app.screen
        assert isinstance(overlay, JumpOverlay) and note.value == ""
        table = cases.query_one(CaseTable)
        await pilot.press(next(k for k, w in overlay.targets.items() if w is table))
        await pilot.pause()
        assert cases.focused is table
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert "Jump to a pane: each shows a letter, press one to focus it" in help_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is cases)
        titles = [title for title, _, _ in ToolstandCommands(cases)._commands()]
        assert "Jump to a pane: each shows a letter, press one to focus it" in titles
