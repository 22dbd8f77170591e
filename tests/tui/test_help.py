"""Everything findable from the app: the help screen, the palette in words, maximizing a
pane, Esc closing Textual's Keys panel, the arrows in a confirm dialog."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from textual.command import CommandPalette
from textual.widgets import Button, HelpPanel

from tests.support.tui import help_text, on_run, settle, wait_for
from toolstand.tui.app import ToolstandApp, load_keymap
from toolstand.tui.commands import ToolstandCommands
from toolstand.tui.helpdoc import story_ids
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.help import HelpScreen, all_bindings
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.modals import ConfirmModal
from toolstand.tui.screens.report import ReportScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.case_list import CaseTable

AppFor = Callable[..., ToolstandApp]
SMALL = (80, 24)


@pytest.mark.parametrize(
    ("mode", "screen_type", "lines"),
    [
        (
            "cases",
            CasesScreen,
            ["^s             Save the case", "^g             Run this case live"],
        ),
        ("run", RunScreen, ["^t             Send turn 2 with the edited tool result"]),
        ("history", HistoryScreen, ["p              Promote this attempt to a new case"]),
        ("report", ReportScreen, ["e              Export the report as JSON"]),
    ],
)
async def test_question_mark_opens_the_screens_keys_and_esc_closes_it(
    app_for: AppFor, mode: str, screen_type: type, lines: list[str]
) -> None:
    app = app_for(start_mode=mode)  # the screen's help, not the way to it (no Cases first)
    async with app.run_test(size=SMALL) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, screen_type))
        app.set_focus(None)  # a text field would take the "?" as text
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = help_text(app)
        for line in lines:
            assert line in text
        assert f"the {screen_type.__name__.removesuffix('Screen')} screen" in text
        # the three walkthroughs, with the keys of the day
        assert "1. Write a new negative case and run it live" in text
        assert "· ^t sends turn 2" not in text and "then ^t sends turn 2." in text
        assert "· m marks one failure; move to another and d shows the two" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, screen_type))


async def test_the_help_follows_the_keymap(app_for: AppFor, tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_bytes(orjson.dumps({"cases.save": "f9", "run.step": "f6"}))
    app = app_for(keymap=load_keymap(str(keys)))
    async with app.run_test(size=SMALL) as pilot:
        app.screen.query_one(CaseTable).focus()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = help_text(app)
        assert "f9             Save the case" in text
        assert "· f9 saves the case" in text and "then f6 sends turn 2." in text


def test_every_key_a_walkthrough_names_is_bound() -> None:
    ids = {b.id for b in all_bindings(ToolstandApp)}
    assert story_ids() - ids == set()
    assert len(story_ids()) > 15


async def test_the_palette_speaks_in_actions_with_their_keys(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        app.screen.query_one(CaseTable).focus()
        await pilot.pause()
        provider = ToolstandCommands(app.screen)
        found = {title: help_text for title, help_text, _ in provider._commands()}
        assert found["Save the case"] == "^s"
        assert found["Run this case live"] == "^g"
        assert found["Search the cases by id or text"] == "/ or ^f"
        assert found["Go to Run"] == "F2 · the Run screen"
        assert found["Show the keys and walkthroughs"] == "?"
        assert list(found).count("Reload the case file") == 1
        for title, help_text in found.items():
            assert "(" not in help_text and "'" not in title, (title, help_text)
        # and it runs what it says
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"Show the keys")
        await settle(pilot)  # the palette searches in a worker
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_f11_maximizes_the_focused_pane_and_back(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        table = app.screen.query_one(CaseTable)
        table.focus()
        await pilot.press("f11")
        assert app.screen.maximized is table
        await pilot.pause()
        assert table.region.width == SMALL[0]
        await pilot.press("f11")
        assert app.screen.maximized is None


async def test_esc_closes_textuals_keys_panel(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        app.action_show_help_panel()
        await pilot.pause()
        assert len(app.screen.query(HelpPanel)) == 1
        await pilot.press("escape")
        await pilot.pause()
        assert len(app.screen.query(HelpPanel)) == 0
        # with no panel open, Esc is the screen's again
        app.screen.query_one("#search").focus()
        await pilot.press("escape")
        assert isinstance(app.focused, CaseTable)


async def test_left_and_right_move_between_a_confirm_dialogs_buttons(app_for: AppFor) -> None:
    app = app_for()
    answers: list[bool | None] = []
    async with app.run_test(size=SMALL) as pilot:
        await app.push_screen(ConfirmModal("Discard?", yes="Discard"), answers.append)
        await pilot.pause()
        focused = lambda: app.focused.id if isinstance(app.focused, Button) else None  # noqa: E731
        assert focused() == "no"
        await pilot.press("left")
        assert focused() == "yes"
        await pilot.press("right")
        assert focused() == "no"
        await pilot.press("left", "enter")
        await wait_for(pilot, lambda: answers == [True])


async def test_a_keymaps_control_characters_are_spelled_in_the_help(app_for: AppFor) -> None:
    app = app_for(keymap={"cases.save": "f9\x1b[2J"})
    async with app.run_test(size=SMALL) as pilot:
        app.screen.query_one(CaseTable).focus()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = help_text(app)
    assert "\x1b" not in text
    assert "\\x1b" in text


async def test_f11_maximizes_the_verdict_pane_never_a_one_line_field(app_for: AppFor) -> None:
    # issue 30: on the verdict pane F11 answered "Nothing here to maximize"
    app = on_run(app_for, "direct_lookup")
    async with app.run_test(size=SMALL) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        await pilot.press("ctrl+g")
        await wait_for(
            pilot, lambda: "recorded in" in str(app.screen.query_one("#run-status").render())
        )
        verdict = app.screen.query_one("#pane-verdict")
        verdict.focus()
        await pilot.press("f11")
        assert app.screen.maximized is verdict
        await pilot.pause()
        assert verdict.region.width == SMALL[0]
        await pilot.press("f11")
        assert app.screen.maximized is None
        # a text pane maximizes with its border and title, not the bare text area
        app.screen.query_one("#request-body").focus()
        await pilot.press("f11")
        assert app.screen.maximized is app.screen.query_one("#pane-request")
        await pilot.press("f11")
        app.screen.query_one("#run-mode").focus()  # a one-line Select: nothing to fill
        await pilot.press("f11")
        assert app.screen.maximized is None
