"""The Run screen steps through repair turns like second turns: the feedback shown, another
style picked, sent, and the attempt recorded with its repair turns."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
from textual.widgets import Select, TextArea

from tests.support.tui import SIZE, open_run, records, status, wait_for, write_config
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
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "quote_complete")
        for _ in range(30):  # sim-sloppy breaks this call now and then
            await pilot.press("ctrl+g")
            await wait_for(
                pilot, lambda: "recorded in" in status(app) or "sends repair turn" in status(app)
            )
            if "sends repair turn 1" in status(app):
                break
        else:
            raise AssertionError("sim-sloppy never sent an invalid call")
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
    assert rec["feedback"] == "allowed" and rec["repair"]["needed"]
    turns = rec["repair_turns"]
    assert 1 <= len(turns) <= 2 and turns[0]["index"] == 1
    sent = turns[0]["tool_results"][0]["result"]
    assert sent["error"].startswith("Traceback (most recent call last)")
    assert "Traceback" in orjson.dumps(turns[0]["request"]["body"]).decode()
