"""Driving the TUI in Pilot tests: the app's size, a changed config, waiting on workers,
and the steps that open each screen and read what it shows."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Select, Static, TextArea
from textual.worker import WorkerCancelled, WorkerFailed

from toolstand.sim import SimServer
from toolstand.sim.http import Request
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.report import ReportScreen
from toolstand.tui.screens.run import RunScreen

SIZE = (100, 30)
S = TypeVar("S", bound=Screen[Any])


def write_config(project: Path, **changes: Any) -> None:
    """A config.json (preferred over the example) with some top-level keys changed."""
    config = orjson.loads((project / "config.example.json").read_bytes())
    config.update(changes)
    (project / "config.json").write_bytes(orjson.dumps(config))


async def settle(pilot: Pilot[Any]) -> None:
    """Wait until the app's workers are done and the messages they posted are handled."""
    # a worker that failed or was cancelled is done too: the test asserts on what it left
    with contextlib.suppress(WorkerFailed, WorkerCancelled):
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def wait_for(pilot: Pilot[Any], check: Callable[[], bool], rounds: int = 100) -> None:
    """Let the workers run until ``check`` holds: a handler may start the next worker (a
    query after an index batch, turn 2 after turn 1), so wait for each in turn."""
    for _ in range(rounds):
        if check():
            return
        await settle(pilot)
    raise AssertionError("condition not reached after the workers settled")


async def shown(pilot: Pilot[Any], check: Callable[[], bool], rounds: int = 200) -> None:
    """Let the app handle its messages until ``check`` holds, without waiting for its
    workers: for what a screen shows while a request is still in flight."""
    for _ in range(rounds):
        if check():
            return
        await pilot.pause()
    raise AssertionError("condition not reached while the workers ran")


@contextlib.contextmanager
def held_sim_replies(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The embedded simulator holds every answer until the event is set: a test acts
    while a request is in flight on that event, not in a race with a simulated latency."""
    release = threading.Event()
    original = SimServer._write

    async def held(server: SimServer, *args: Any) -> bool:
        await asyncio.to_thread(release.wait, 60)
        return await original(server, *args)

    monkeypatch.setattr(SimServer, "_write", held)
    try:
        yield release
    finally:
        release.set()


@contextlib.contextmanager
def sim_requests(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """The body of every request the embedded simulator answers, in order: a test counts
    what was asked of the provider, not what the screen says."""
    seen: list[bytes] = []
    original = SimServer._reply

    def logged(server: SimServer, request: Request) -> Any:
        seen.append(request.body)
        return original(server, request)

    monkeypatch.setattr(SimServer, "_reply", logged)
    yield seen


async def screen_after(pilot: Pilot[Any], cls: type[S], *keys: str) -> S:
    """Press ``keys`` and wait until the app shows a ``cls`` screen; that screen."""
    await pilot.press(*keys)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, cls))
    screen = pilot.app.screen
    assert isinstance(screen, cls)
    return screen


async def type_into(pilot: Pilot[Any], area: TextArea, text: str, typed: int = 8) -> None:
    """Clear a text area, put in ``text`` but its last ``typed`` characters as one edit
    (as a paste), then type those key by key, as a user would (a Pilot key press costs
    ~0.2 s of a test: a 60-character text typed whole took 12 s)."""
    area.focus()
    area.clear()
    area.insert(text[: max(0, len(text) - typed)])
    await pilot.press(*text[max(0, len(text) - typed) :])


def help_text(app: ToolstandApp) -> str:
    """The text of the help screen shown (``?``)."""
    from toolstand.tui.screens.help import HelpScreen

    screen = app.screen
    assert isinstance(screen, HelpScreen)
    return "\n".join(str(s.render()) for s in screen.query(Static))


def status(app: ToolstandApp) -> str:
    return str(app.screen.query_one("#run-status", Static).render())


def records(project: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted((project / "runs").glob("live-*.jsonl")):
        out += [orjson.loads(line) for line in path.read_bytes().splitlines()]
    return out


def on_run(make: Callable[..., ToolstandApp], case_id: str, **kw: Any) -> ToolstandApp:
    """An app (``make``: the ``app_for`` fixture) that starts on the Run screen with
    ``case_id`` chosen before the screen is shown (it reads ``selected_case_id`` then): a
    test of the Run screen builds no Cases screen it would not use (~1 s of CPU)."""
    app = make(start_mode="run", **kw)
    app.selected_case_id = case_id
    return app


async def open_run(
    pilot: Pilot[Any], app: ToolstandApp, case_id: str, run: int = 0, mode: str = "auto"
) -> None:
    """The Run screen on ``case_id``, the configured run ``run`` and ``mode``: by F2 from
    the screen shown, or chosen in the bar of the Run screen the app shows already."""
    screen = app.screen
    if isinstance(screen, RunScreen):
        screen.prepare(case_id)  # as the bar's case list would choose it
    else:
        app.selected_case_id = case_id
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
    await pilot.pause()
    app.screen.query_one("#run-target", Select).value = run
    app.screen.query_one("#run-mode", Select).value = mode
    assert app.screen.query_one("#run-case", Select).value == case_id


def attempts(project: Path) -> list[dict[str, Any]]:
    return [r for r in records(project) if r["type"] == "attempt"]


PASTED_CALL = {
    "id": "chatcmpl-pasted",
    "object": "chat.completion",
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "cancel_order",
                            "arguments": '{"order_id":"ORD-654321","reason":"changed_mind"}',
                        },
                    }
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5},
}


def screen_of(app: ToolstandApp) -> HistoryScreen:
    screen = app.screen
    assert isinstance(screen, HistoryScreen)
    return screen


async def open_history(pilot: Pilot[Any], app: ToolstandApp, rows: int) -> HistoryScreen:
    await pilot.press("f3")
    await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
    screen = screen_of(app)
    await wait_for(
        pilot,
        lambda: screen.index is not None and screen.index.rows == rows and not screen.indexing,
    )
    await wait_for(pilot, lambda: screen.result is not None and screen.result.end == rows)
    return screen


async def open_report(pilot: Pilot[Any], app: ToolstandApp) -> ReportScreen:
    screen = await screen_after(pilot, ReportScreen, "f4")
    await wait_for(pilot, lambda: screen.report is not None)
    await pilot.pause()
    return screen


def cells(table: DataTable[Any]) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def turn_one(pilot: Pilot[Any], app: ToolstandApp, case_id: str) -> None:
    """Open the Run screen on ``case_id`` and run turn 1, up to the turn-2 editor."""
    await open_run(pilot, app, case_id)
    await pilot.press("ctrl+g")
    await wait_for(pilot, lambda: "ctrl+t sends turn 2" in status(app))


def screen_rows(app: ToolstandApp) -> list[str]:
    """The screen as drawn, one string a row (what a terminal of that size shows)."""
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


async def until_repair(
    pilot: Pilot[Any], app: ToolstandApp, case_id: str = "quote_complete", run: int = 0
) -> None:
    """Run ``case_id`` until sim-sloppy breaks its call and the repair panel opens."""
    await open_run(pilot, app, case_id, run)
    for _ in range(30):  # sim-sloppy breaks this call now and then
        await pilot.press("ctrl+g")
        await wait_for(
            pilot, lambda: "recorded in" in status(app) or "sends repair turn" in status(app)
        )
        if "sends repair turn 1" in status(app):
            return
    raise AssertionError("sim-sloppy never sent an invalid call")
