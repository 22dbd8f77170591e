"""Issue 9 in the TUI: a save that cannot land keeps the draft and touches nothing on
disk; a planted API key never reaches a screen or a recorded line."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from tests.support.tui import SIZE, on_run, open_run, status, wait_for, write_config
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.run import RunScreen

AppFor = Callable[..., ToolstandApp]
SECRET = "sk-PLANTED-tui-7c1e0b9a4f"


def draft_status(app: ToolstandApp) -> str:
    return str(app.screen.query_one("#draft-status", Static).render())


def screen_text(app: ToolstandApp) -> str:
    """Everything the screen shows, as text (the SVG export holds every cell)."""
    return app.export_screenshot()


async def test_save_onto_a_read_only_file_keeps_the_draft(app_for: AppFor, project: Path) -> None:
    cases = project / "cases" / "delivery.jsonl"
    before = cases.read_bytes()
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one("#f-note", Input).focus()
        await pilot.press(*"mine")
        os.chmod(cases, 0o444)
        try:
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: "read-only" in draft_status(app))
            assert cases.read_bytes() == before
            assert app.screen.query_one("#f-note", Input).value == "mine"
            # no temporary file left beside it (cases/stream/ is a folder of the repo's)
            assert sorted(p.name for p in cases.parent.iterdir() if p.is_file()) == [
                "delivery.jsonl"
            ]
        finally:
            os.chmod(cases, 0o644)


async def test_save_onto_a_vanished_file_keeps_the_draft(app_for: AppFor, project: Path) -> None:
    cases = project / "cases" / "delivery.jsonl"
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one("#f-note", Input).focus()
        await pilot.press(*"mine")
        cases.unlink()
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: "not saved" in draft_status(app) or "vanish" in draft_status(app)
        )
        assert not cases.exists()  # not recreated from a partial view of the file
        assert [p for p in cases.parent.iterdir() if p.is_file()] == []
        assert app.screen.query_one("#f-note", Input).value == "mine"


async def test_a_planted_key_never_reaches_a_screen_or_a_record(
    app_for: AppFor, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANTED_TUI_KEY", SECRET)
    runs = [
        {
            "provider": "sim",
            "model": "sim-careful",
            "api": api,
            "base_url": "sim",
            "api_key_env": "PLANTED_TUI_KEY",
        }
        for api in ("openai-chat", "anthropic", "gemini")
    ]
    write_config(project, runs=runs)
    app = on_run(app_for, "missing_id")
    async with app.run_test(size=SIZE) as pilot:
        for run in range(3):
            await open_run(pilot, app, "missing_id", run=run)
            await pilot.press("ctrl+g")
            await wait_for(pilot, lambda: "recorded in" in status(app))
            assert isinstance(app.screen, RunScreen)
            assert SECRET not in screen_text(app) and SECRET[:12] not in screen_text(app)
    recorded = b"".join(p.read_bytes() for p in (project / "runs").glob("*.jsonl"))
    assert recorded.count(b'"type":"attempt"') == 3
    assert SECRET.encode() not in recorded and SECRET[:12].encode() not in recorded
