"""The Run screen at 80x24 cuts nothing it cannot show whole another way (issue 30): the
request pane's title ends its path whole, the turn-2 panel names each call whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import orjson
from textual.widgets import ContentSwitcher, Select, TextArea
from textual.widgets._select import SelectOverlay

from tests.support.tui import (
    on_run,
    open_run,
    screen_rows,
    status,
    until_repair,
    wait_for,
    write_config,
)
from toolstand.tui.app import ToolstandApp
from toolstand.tui.widgets.footer import Footer
from toolstand.tui.widgets.step_panel import StepPanel
from toolstand.tui.widgets.titled import Pane, ScrollPane
from toolstand.types import FEEDBACK_STYLES

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
        # F11 on the request: the whole URL in its title, and f6 (a body pane took it to
        # select a line) turns it to the headers the pane's narrow form has no room for
        app.screen.query_one("#request-body").focus()
        await pilot.press("f11", "f6")
        await pilot.pause()
        assert app.screen.maximized is pane
        assert str(pane.border_title).startswith("headers: request · POST /v1beta/")
        assert app.screen.query_one("#request-switch", ContentSwitcher).current == "request-head"
        head = app.screen.query_one("#request-head", TextArea)
        assert head.text.splitlines()[0] == f"POST {url}"


async def test_a_repair_turn_s_verdict_title_is_cut_in_no_word(
    app_for: AppFor, project: Path
) -> None:
    # the pane read "pass · turn 2 · r…r 1 · path_value": its label cut in the middle
    app = on_run(app_for, "quote_complete")
    async with app.run_test(size=(80, 24)) as pilot:
        await until_repair(pilot, app, run=GEMINI)
        # the style list opens whole where the footer stays in sight: under its field it
        # covered the panel's border and the footer, down to the screen's last row
        await pilot.press("ctrl+l")
        overlay = app.screen.query_one("#canned-0").query_one(SelectOverlay)
        await wait_for(pilot, lambda: overlay.display and overlay.size.height > 0)
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        assert overlay.region.height == overlay.option_count == 5  # the prompt, 4 styles
        assert overlay.region.bottom <= footer.region.y, (overlay.region, footer.region)
        rows = screen_rows(app)
        assert sum(f"feedback: {s}" in row for row in rows for s in FEEDBACK_STYLES) >= 5
        await pilot.press("down", "enter")  # traceback is highlighted: path_value
        await wait_for(
            pilot, lambda: "(path_value)" in str(app.screen.query_one(StepPanel).border_title)
        )
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "repair 1 · path_value of" in status(app))
        await pilot.pause()
        title = str(app.screen.query_one("#pane-verdict", ScrollPane).border_title)
        assert "…" not in title and " · repair 1" in title, title


async def test_the_case_and_run_lists_hold_each_choice_on_one_line_at_80x24(
    app_for: AppFor, project: Path
) -> None:
    # the open lists were their fields wide: "boundary_decimal_comm" / "a", and
    # "sim/sim-positional · openai-responses" / "(simulator)"; a run wider than the room
    # right of the field moves left rather than losing its end at the screen's edge
    runs = orjson.loads((project / "config.example.json").read_bytes())["runs"]
    long = {"provider": "openrouter", "model": "meta-llama/llama-3.1-405b-instruct"}
    write_config(project, runs=[*runs, {**long, "api": "openai-chat", "base_url": "http://x"}])
    app = on_run(app_for, "boundary_decimal_comma")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, "boundary_decimal_comma")
        await pilot.press("c")  # the case list, open
        overlay = app.screen.query_one("#run-case").query_one(SelectOverlay)
        await wait_for(pilot, lambda: overlay.display and overlay.size.width > 0)
        await pilot.pause()
        rows = screen_rows(app)
        assert any("boundary_decimal_comma" in row for row in rows), "\n".join(rows)
        await pilot.press("escape", "r")  # the run list, open
        target = app.screen.query_one("#run-target", Select)
        overlay = target.query_one(SelectOverlay)
        await wait_for(pilot, lambda: overlay.display and overlay.size.width > 0)
        await pilot.pause()
        rows = screen_rows(app)
        labels = [str(overlay.get_option_at_index(i).prompt) for i in range(overlay.option_count)]
        assert len(labels) == 6 and all(any(x in row for row in rows) for x in labels), rows
        assert labels[5] == "openrouter/meta-llama/llama-3.1-405b-instruct · openai-chat"
        # chosen, the longest is cut on its one line in the bar, and says so
        await pilot.press(*(["down"] * 3), "enter")
        await pilot.pause()
        assert target.value == 3 and labels[3].endswith(" (simulator)")
        bar = screen_rows(app)[1]
        assert "sim/sim-positional · openai-responses (s… ▼" in bar, bar
