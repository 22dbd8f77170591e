"""The Run screen steps through repair turns like second turns: the feedback shown, another
style picked, sent, and the attempt recorded with its repair turns."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.pilot import Pilot
from textual.widgets import Select, TextArea

from tests.support.tui import (
    SIZE,
    attempts,
    on_run,
    records,
    sim_requests,
    status,
    until_repair,
    wait_for,
    write_config,
)
from toolstand.tui.app import ToolstandApp
from toolstand.tui.widgets.step_panel import StepPanel

AppFor = Callable[..., ToolstandApp]


async def test_repair_turns_are_stepped_with_editable_feedback(
    app_for: AppFor, project: Path
) -> None:
    write_config(
        project,
        runs=[{"provider": "sim", "model": "sim-sloppy", "api": "openai-chat", "base_url": "sim"}],
        repair={"max_repairs": 2, "feedback": ["allowed"]},
    )
    app = on_run(app_for, "quote_complete")
    async with app.run_test(size=SIZE) as pilot:
        await until_repair(pilot, app)
        panel = app.screen.query_one(StepPanel)
        assert str(panel.border_title).startswith("repair 1: feedback to send (allowed)")
        area = panel.query_one("#result-0", TextArea)
        shown = orjson.loads(area.text)
        assert shown["error"]["code"] == "INVALID_ARGUMENTS" and shown["error"]["errors"]
        assert all("allowed" in e for e in shown["error"]["errors"])
        # another style of the same problem, one pick away
        panel.query_one("#canned-0", Select).value = "feedback: traceback"
        await wait_for(pilot, lambda: area.text.startswith('{\n  "ok": false,\n  "error": "Tr'))
        await pilot.press("ctrl+t")
        await wait_for(
            pilot, lambda: "recorded in" in status(app) or "sends repair turn 2" in status(app)
        )
        tab = app.screen.query_one("#turns").query_one("#turn-1")
        assert tab.display and "turn 2 · repair 1" in str(tab.render())
        while "sends repair turn" in status(app):
            await pilot.press("ctrl+t")
            await wait_for(
                pilot, lambda: "recorded in" in status(app) or "sends repair turn 3" in status(app)
            )
        assert "recorded in" in status(app)
    rec = [r for r in records(project) if r["type"] == "attempt"][-1]
    # the style picked is the style sent, and so the one recorded, not the config's arm
    assert rec["feedback"] == "traceback" and rec["repair"]["needed"]
    turns = rec["repair_turns"]
    assert turns[0]["feedback"] == "traceback"
    assert 1 <= len(turns) <= 2 and turns[0]["index"] == 1
    sent = turns[0]["tool_results"][0]["result"]
    assert sent["error"].startswith("Traceback (most recent call last)")
    assert "Traceback" in orjson.dumps(turns[0]["request"]["body"]).decode()


async def test_the_feedback_style_picked_is_the_one_recorded(
    app_for: AppFor, project: Path
) -> None:
    # issue 30: allowed_prose picked over the default traceback was sent, yet the
    # record, the status, the tab and History all said traceback
    write_config(
        project,
        runs=[{"provider": "sim", "model": "sim-sloppy", "api": "gemini", "base_url": "sim"}],
    )
    app = on_run(app_for, "quote_complete")
    async with app.run_test(size=SIZE) as pilot:
        await until_repair(pilot, app)
        panel = app.screen.query_one(StepPanel)
        assert "(traceback)" in str(panel.border_title)  # the first style offered
        # the footer, the palette and ? word it as a repair turn, not as turn 2
        offered = {b.binding.description for b in app.screen.active_bindings.values() if b.enabled}
        assert {"Send repair turn", "Feedback styles"} <= offered
        assert not {"Send turn 2", "Canned results"} & offered
        assert panel.query_one("#canned-0", Select).prompt == "feedback style…"
        # hfix F4: the picker shows the style the editor holds, not its prompt
        assert panel.query_one("#canned-0", Select).value == "feedback: traceback"
        area = panel.query_one("#result-0", TextArea)
        panel.query_one("#canned-0", Select).value = "feedback: allowed_prose"
        await wait_for(pilot, lambda: "(allowed_prose)" in str(panel.border_title))
        prose = area.text
        await pilot.press("ctrl+t")
        await wait_for(
            pilot, lambda: "recorded in" in status(app) or "sends repair turn 2" in status(app)
        )
        title = str(app.screen.query_one("#pane-verdict").border_title)
        assert "repair 1 · allowed_prose" in title
        while "sends repair turn" in status(app):
            await pilot.press("ctrl+t")
            await wait_for(
                pilot, lambda: "recorded in" in status(app) or "sends repair turn 3" in status(app)
            )
        await pilot.press("left_square_bracket")
        await pilot.pause()
    rec = [r for r in records(project) if r["type"] == "attempt"][-1]
    assert rec["feedback"] == "allowed_prose"
    first = rec["repair_turns"][0]
    assert first["feedback"] == "allowed_prose"
    assert first["tool_results"][0]["result"] == orjson.loads(prose)


async def _until_recorded(pilot: Pilot[Any], app: ToolstandApp, done: Callable[[], bool]) -> None:
    """Send repair turns (ctrl+t) until ``done``: sim-sloppy may break the repair too."""
    await wait_for(pilot, lambda: done() or "sends repair turn" in status(app))
    while not done():
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: done() or "sends repair turn" in status(app))


async def test_the_repair_turn_is_sent_again_from_the_same_turn_one(
    app_for: AppFor, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 30 (hfix B1): once a repair attempt was recorded, ctrl+t left the footer and
    # the panel closed; another style could only be tried with a new turn 1
    write_config(
        project,
        runs=[{"provider": "sim", "model": "sim-sloppy", "api": "gemini", "base_url": "sim"}],
    )
    app = on_run(app_for, "quote_complete")
    with sim_requests(monkeypatch) as asked:
        async with app.run_test(size=SIZE) as pilot:
            await until_repair(pilot, app)
            turn1, asked_before = asked[-1], len(asked)
            panel = app.screen.query_one(StepPanel)
            panel.query_one("#canned-0", Select).value = "feedback: allowed_prose"
            await wait_for(pilot, lambda: "(allowed_prose)" in str(panel.border_title))
            before = len(attempts(project))
            await pilot.press("ctrl+t")
            await _until_recorded(pilot, app, lambda: len(attempts(project)) == before + 1)
            await wait_for(pilot, lambda: "repair turn again" in status(app))
            # the feedback for turn 1's calls stays open, worded as a repair turn sent again
            assert panel.is_open and "again" in str(panel.border_title)
            offered = {
                b.binding.description for b in app.screen.active_bindings.values() if b.enabled
            }
            assert {"Send repair turn again", "Feedback styles"} <= offered
            assert not {"Send turn 2 again", "Send repair turn"} & offered
            panel.query_one("#canned-0", Select).value = "feedback: path_value"
            await wait_for(pilot, lambda: "(path_value)" in str(panel.border_title))
            sent = orjson.loads(panel.query_one("#result-0", TextArea).text)
            await pilot.press("ctrl+t")
            await _until_recorded(pilot, app, lambda: len(attempts(project)) == before + 2)
    first, again = attempts(project)[-2:]
    assert turn1 not in asked[asked_before:]  # turn 1 was not asked again
    assert again["attempt"] == first["attempt"] + 1  # its own attempt
    assert "first_turn_shared" not in first and again["first_turn_shared"] is True
    for key in ("request_hash", "request", "response", "decision", "started_at"):
        assert again[key] == first[key], key
    assert first["feedback"] == "allowed_prose"
    assert (
        again["feedback"] == "path_value" and again["repair_turns"][0]["feedback"] == "path_value"
    )
    assert again["repair_turns"][0]["index"] == 1
    assert again["repair_turns"][0]["tool_results"][0]["result"] == sent
