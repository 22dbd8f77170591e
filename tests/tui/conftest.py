"""A private copy of the project's files per test, an app over it, and text cursors that
do not blink (a snapshot or a Pilot test must not depend on the blink's phase)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, TextArea
from textual.worker import WorkerCancelled, WorkerFailed

from toolstand.tui.app import ToolstandApp, make_app

ROOT = Path(__file__).resolve().parents[2]
SIZE = (100, 30)
S = TypeVar("S", bound=Screen[Any])


@pytest.fixture(autouse=True)
def no_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Input and TextArea starts with a steady cursor."""
    for widget in (Input, TextArea):
        monkeypatch.setattr(widget.cursor_blink, "_default", False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for folder in ("cases", "contracts", "prompts"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    shutil.copy(ROOT / "config.example.json", tmp_path / "config.example.json")
    (tmp_path / "runs").mkdir()
    return tmp_path


def write_config(project: Path, **changes: Any) -> None:
    """A config.json (preferred over the example) with some top-level keys changed."""
    config = orjson.loads((project / "config.example.json").read_bytes())
    config.update(changes)
    (project / "config.json").write_bytes(orjson.dumps(config))


@pytest.fixture
def app_for(project: Path) -> Callable[..., ToolstandApp]:
    def make(**kw: Any) -> ToolstandApp:
        return make_app(root=project, **kw)

    return make


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


async def screen_after(pilot: Pilot[Any], cls: type[S], *keys: str) -> S:
    """Press ``keys`` and wait until the app shows a ``cls`` screen; that screen."""
    await pilot.press(*keys)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, cls))
    screen = pilot.app.screen
    assert isinstance(screen, cls)
    return screen


async def type_into(pilot: Pilot[Any], area: TextArea, text: str) -> None:
    """Clear a text area and type ``text`` key by key, as a user would."""
    area.focus()
    area.clear()
    await pilot.press(*text)
