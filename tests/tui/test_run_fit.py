"""The Run screen at 80x24 cuts nothing it cannot show whole another way (issue 30): the
request pane's title ends its path whole, the turn-2 panel names each call whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.tui import open_run, screen_rows, status, wait_for
from toolstand.tui.app import ToolstandApp
from toolstand.tui.widgets.titled import Pane

AppFor = Callable[..., ToolstandApp]
GEMINI = 2  # sim/sim-sloppy · gemini in config.example.json


async def test_gemini_s_request_title_ends_its_path_whole_and_results_name_their_call(
    app_for: AppFor, project: Path
) -> None:
    # the title read "request · /v1beta…:generateContent" (the path cut in its middle),
    # and the turn-2 label "get_order · call gemini-call-" (its last cell cut off)
    app = app_for()
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
