"""The Run screen at 80x24 cuts nothing it cannot show whole another way (issue 30): the
request pane's title ends its path whole, the turn-2 panel names each call whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from textual.widgets import Select
from textual.widgets._select import SelectOverlay

from tests.support.tui import on_run, open_run, screen_rows, status, until_repair, wait_for
from toolstand.tui.app import ToolstandApp
from toolstand.tui.widgets.titled import Pane, ScrollPane

AppFor = Callable[..., ToolstandApp]
GEMINI = 2  # sim/sim-sloppy · gemini in config.example.json


async def test_gemini_s_request_title_ends_its_path_whole_and_results_name_their_call(
    app_for: AppFor, project: Path
) -> None:
    # the title read "request · /v1beta…:generateContent" (the path cut in its middle),
    # and the turn-2 label "get_order · call gemini-call-" (its last cell cut off)
    app = on_run(app_for, "recovery_lookup_ok")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, "recovery_lookup_ok", run=GEMINI)
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "ctrl+t sends turn 2" in status(app))
        await pilot.pause()
        pane = app.screen.query_one("#pane-request", Pane)
        title = str(pane.border_title)
        url = str(app.screen.views[0].request["url"])  # type: ignore[attr-defined]
        shown = title.removeprefix("request · ").removeprefix("…")
        assert urlsplit(url).path.endswith(shown) and shown.endswith(":generateContent"), title
        rows = screen_rows(app)
        at = next(i for i, row in enumerate(rows) if "│get_order " in row)
        assert "gemini-call-0 " in rows[at + 1], "\n".join(rows)


async def test_a_repair_turn_s_verdict_title_is_cut_in_no_word(
    app_for: AppFor, project: Path
) -> None:
    # the pane read "pass · turn 2 · r…r 1 · path_value": its label cut in the middle
    app = on_run(app_for, "quote_complete")
    async with app.run_test(size=(80, 24)) as pilot:
        await until_repair(pilot, app, run=GEMINI)
        app.screen.query_one("#canned-0", Select).value = "feedback: path_value"
        await pilot.pause()
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "repair 1 · path_value of" in status(app))
        await pilot.pause()
        title = str(app.screen.query_one("#pane-verdict", ScrollPane).border_title)
        assert "…" not in title and " · repair 1" in title, title


async def test_the_case_list_holds_each_id_on_one_line_at_80x24(
    app_for: AppFor, project: Path
) -> None:
    # the open list was the bar's field wide (20 cells): "boundary_decimal_comm" / "a"
    app = on_run(app_for, "boundary_decimal_comma")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, "boundary_decimal_comma")
        await pilot.press("c")  # the case list, open
        overlay = app.screen.query_one("#run-case").query_one(SelectOverlay)
        await wait_for(pilot, lambda: overlay.display and overlay.size.width > 0)
        await pilot.pause()
        rows = screen_rows(app)
        assert any("boundary_decimal_comma" in row for row in rows), "\n".join(rows)
