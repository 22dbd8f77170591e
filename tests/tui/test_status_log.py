"""A status message cut at 80 columns says so, and F10 or a click shows it whole with the
messages before it (issue 30, "nothing is cut without a way to read it")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import Static

from tests.support.tui import open_history, open_run, wait_for
from tests.support.tui_history import write_history
from toolstand.tui.app import ToolstandApp
from toolstand.tui.widgets.status_line import MessageLog, StatusLine

AppFor = Callable[..., ToolstandApp]
SMALL = (80, 24)
SEARCH = "a search long enough to run past the edge"


def drawn(line: StatusLine) -> str:
    return "".join(s.text for s in line.render_lines(line.region.reset_offset)[0])


def logged(app: ToolstandApp) -> list[str]:
    screen = app.screen
    assert isinstance(screen, MessageLog)
    return [str(s.render()) for s in screen.query(".log-said").results(Static)]


async def test_a_cut_history_status_ends_in_its_key_and_f10_shows_it_whole(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    app = app_for(start_mode="history")
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_history(pilot, app, len(recs))
        line = screen.query_one("#history-status", StatusLine)
        before = str(line.content)
        await pilot.press("F", "slash", *SEARCH)
        await wait_for(pilot, lambda: SEARCH in str(line.content))
        await pilot.pause()
        whole = str(line.content)
        assert len(whole) > line.size.width and line.is_cut
        shown = drawn(line).strip()  # the padding left out
        assert shown.endswith("… f10") and len(shown) <= line.size.width
        await pilot.press("f10")
        await wait_for(pilot, lambda: isinstance(app.screen, MessageLog))
        said = logged(app)
        assert said[0].endswith(whole)  # the newest, whole, first
        assert any(s.endswith(before) for s in said[1:])  # and what it said before
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)


async def test_a_click_on_the_run_status_opens_its_messages(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        await open_run(pilot, app, "direct_lookup")
        line = app.screen.query_one("#run-status", StatusLine)
        first = str(line.content)
        assert not line.is_cut and "…" not in drawn(line)  # a message that fits is as said
        await pilot.click(StatusLine)
        await wait_for(pilot, lambda: isinstance(app.screen, MessageLog))
        assert logged(app)[0].endswith(first)
        await pilot.press("f10")  # the key that opened it closes it too
        await wait_for(pilot, lambda: not isinstance(app.screen, MessageLog))
