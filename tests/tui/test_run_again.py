"""After turn 2 is recorded, another turn 2 is edited and sent from the same turn 1:
the provider is not asked for turn 1 again, and each send is its own attempt whose
record holds a marked copy of that turn 1 (issue 30)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from textual.widgets import Static, TextArea

from tests.support.tui import (
    SIZE,
    attempts,
    on_run,
    sim_requests,
    status,
    turn_one,
    type_into,
    wait_for,
)
from toolstand.tui.app import ToolstandApp
from toolstand.tui.widgets.step_panel import StepPanel

AppFor = Callable[..., ToolstandApp]

LOCKED = {"ok": False, "error": {"code": "ORDER_LOCKED", "retryable": False}}


async def test_turn_two_is_sent_again_from_the_same_turn_one(
    app_for: AppFor, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = on_run(app_for, "recovery_lookup_ok")
    with sim_requests(monkeypatch) as asked:
        async with app.run_test(size=SIZE) as pilot:
            await turn_one(pilot, app, "recovery_lookup_ok")
            await pilot.press("ctrl+t")  # the executor's default result: a success
            await wait_for(pilot, lambda: len(attempts(project)) == 1)
            await wait_for(pilot, lambda: "turn 2 again" in status(app))
            panel = app.screen.query_one(StepPanel)
            assert panel.is_open  # the results sent, there to edit
            area = panel.query_one("#result-0", TextArea)
            assert orjson.loads(area.text)["ok"] is True
            assert not area.has_focus  # [ and ] still step between the turns
            await type_into(pilot, area, orjson.dumps(LOCKED).decode())
            await pilot.press("ctrl+t")
            await wait_for(pilot, lambda: len(attempts(project)) == 2)
            await wait_for(pilot, lambda: "recorded in" in status(app))
            verdict = str(app.screen.query_one("#verdict-text", Static).render())
            assert "ORDER_LOCKED" in verdict  # the new attempt's turn 2 is what shows
    # three requests: one turn 1, two turns 2
    assert len(asked) == 3
    turn1 = asked[0]
    assert asked.count(turn1) == 1 and b"ORDER_LOCKED" in asked[2]
    first, again = attempts(project)
    assert (first["attempt"], again["attempt"]) == (1, 2)  # each send its own attempt
    assert "first_turn_shared" not in first and again["first_turn_shared"] is True
    # the copy of turn 1 is the turn 1 that was sent and answered, byte for byte
    for key in ("request_hash", "request", "response", "decision", "started_at", "tries"):
        assert again[key] == first[key], key
    assert first["second_turn"]["tool_results"][0]["result"]["ok"] is True
    assert again["second_turn"]["tool_results"][0]["result"] == LOCKED
    assert b"ORDER_LOCKED" in orjson.dumps(again["second_turn"]["request"]["body"])
    assert first["second_turn"]["request_hash"] != again["second_turn"]["request_hash"]


async def test_f11_fills_the_screen_with_the_result_editor(app_for: AppFor) -> None:
    # hfix B2: F11 in the turn-2 editor stayed 8 lines, centred in hatching, the JSON
    # wrapped beside the picker at ~45 columns
    app = on_run(app_for, "recovery_lookup_ok")
    async with app.run_test(size=(80, 24)) as pilot:
        await turn_one(pilot, app, "recovery_lookup_ok")
        panel = app.screen.query_one(StepPanel)
        area = panel.query_one("#result-0", TextArea)
        area.focus()
        await pilot.press("f11")
        assert app.screen.maximized is panel  # the pane with its title, not the bare area
        await pilot.pause()
        assert panel.region.height >= 20 and panel.region.width == 80
        assert area.region.width >= 70  # the picker above it, not beside it
        await pilot.press("f11")
        assert app.screen.maximized is None
