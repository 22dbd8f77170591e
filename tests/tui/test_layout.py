"""Layout at the sizes people use: focus plain in 256 colours (tmux's default) and
footers whose keys all fit at 80 and 120 columns."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.color import ColorSystem
from rich.style import Style
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from tests.support.tui import open_history, wait_for
from tests.support.tui_history import write_history
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.attempt import AttemptScreen
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.help import HelpScreen
from toolstand.tui.screens.report import ReportScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.case_list import CaseTable

AppFor = Callable[..., ToolstandApp]
SMALL = (80, 24)
CLEARLY = 60  # RGB distance between two 256-colour backgrounds an eye tells apart at once


def rgb(style: Style | None) -> tuple[int, int, int] | None:
    """The background as a 256-colour terminal shows it."""
    if style is None or style.bgcolor is None:
        return None
    tc = style.bgcolor.downgrade(ColorSystem.EIGHT_BIT).get_truecolor()
    return (tc.red, tc.green, tc.blue)


def background(app: ToolstandApp, region: Region) -> tuple[int, int, int]:
    """The most common 256-colour background over ``region`` of the screen."""
    strips = app.screen._compositor.render_strips()
    seen: Counter[tuple[int, int, int] | None] = Counter()
    for y in range(region.y, region.bottom):
        x = 0
        for seg in strips[y]:
            lo, hi = max(x, region.x), min(x + len(seg.text), region.right)
            if hi > lo:
                seen[rgb(seg.style)] += hi - lo
            x += len(seg.text)
    colour, _ = seen.most_common(1)[0]
    assert colour is not None
    return colour


def apart(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    return math.dist(a, b)


@pytest.fixture
def tmux_colours(monkeypatch: pytest.MonkeyPatch) -> None:
    """What tmux says by default: 256 colours, no truecolor."""
    monkeypatch.setenv("TERM", "screen-256color")
    monkeypatch.delenv("COLORTERM", raising=False)


async def test_a_focused_field_stands_out_in_256_colours(
    app_for: AppFor, tmux_colours: None
) -> None:
    app = app_for()
    assert app.console.color_system == "256"
    async with app.run_test(size=SMALL) as pilot:  # one app: each field from the list
        for field in ["#search", "#filter-kind", "#f-id", "#f-category", "#f-user"]:
            widget = app.screen.query_one(field)
            widget.focus()  # scrolls the form to it
            await pilot.pause()
            focused = background(app, widget.region)
            app.screen.query_one(CaseTable).focus()  # in the other pane: the form stays put
            await pilot.pause()
            blurred = background(app, widget.region)
            assert apart(focused, blurred) >= CLEARLY, (field, focused, blurred)


async def test_the_cursor_row_says_whether_its_list_has_focus_in_256_colours(
    app_for: AppFor, tmux_colours: None
) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        table = app.screen.query_one(CaseTable)
        table.focus()
        await pilot.pause()
        top = table.region.y + 1  # under the header
        cursor = Region(table.region.x, top, table.region.width - 1, 1)
        other = Region(table.region.x, top + 1, table.region.width - 1, 1)
        focused_cursor, row = background(app, cursor), background(app, other)
        app.screen.query_one("#search").focus()
        await pilot.pause()
        blurred_cursor = background(app, cursor)
        field = background(app, app.screen.query_one("#search").region)
    assert apart(focused_cursor, row) >= CLEARLY
    assert apart(focused_cursor, blurred_cursor) >= CLEARLY
    # the cursor of a list left behind is not mistaken for the field that has focus
    assert apart(blurred_cursor, field) >= CLEARLY


# --- footers ------------------------------------------------------------------------------


def footer_fits(app: ToolstandApp) -> list[str]:
    """The footer's keys, each asserted to lie whole inside the footer, left of the
    palette key (a footer too long scrolls its last keys out of sight)."""
    footer = app.screen.query_one(Footer)
    keys = [k for k in footer.query(FooterKey) if not k.has_class("-command-palette")]
    palette = footer.query_one(".-command-palette", Widget)
    assert keys, "a footer with no keys"
    for key in keys:
        assert key.region.width > 0, key.key
        assert key.region.right <= palette.region.x, (key.key, key.region, palette.region)
    return [k.description for k in keys]


async def show_screen(pilot: Pilot[Any], app: ToolstandApp, which: str, rows: int) -> None:
    """``which`` shown, in an app started on its screen (STARTS_ON), else on Cases."""
    if which == "cases":
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        app.screen.query_one(CaseTable).focus()
    elif which == "run":
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
    elif which in ("history", "attempt"):
        await open_history(pilot, app, rows)
        if which == "attempt":
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
    elif which == "report":
        await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen))
    elif which == "help":
        app.screen.query_one(CaseTable).focus()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
    await footer_laid_out(pilot, app)


async def footer_laid_out(pilot: Pilot[Any], app: ToolstandApp) -> None:
    """The footer recomposes when the bindings or the size change: wait until its keys
    are laid out."""
    await pilot.pause()
    footer = app.screen.query_one(Footer)
    await wait_for(pilot, lambda: all(k.region.width for k in footer.query(FooterKey)))


STARTS_ON = {"run": "run", "history": "history", "attempt": "history", "report": "report"}
MOST_USED = {
    "cases": ["Save", "New", "Run it", "Search", "Help"],
    "run": ["Run", "Paste body", "Help"],
    "history": ["Open", "Open file", "Failures", "Mark", "Diff", "Promote", "Help"],
    "attempt": ["Back", "Request", "Turn 1/2", "Mark", "Diff", "Promote", "Help"],
    "report": ["Open file", "Export JSON", "Export CSV", "Help"],
    "help": ["Close help"],
}


@pytest.mark.parametrize("which", list(MOST_USED))
async def test_every_footer_fits(
    app_for: AppFor, project: Path, fixed_clock: None, which: str
) -> None:
    rows = len(write_history(project))
    # started on the screen (Attempt: on History): its footer, not the way to it
    app = app_for(start_mode=STARTS_ON.get(which, "cases"))
    async with app.run_test(size=(80, 24)) as pilot:
        await show_screen(pilot, app, which, rows)
        for width in (80, 120):  # tmux's default, then a wide terminal: one app, resized
            if width != 80:
                await pilot.resize_terminal(width, 24)
                await footer_laid_out(pilot, app)
            shown = footer_fits(app)
            for description in MOST_USED[which]:
                assert description in shown, (width, description)
