"""A private copy of the project's files per test, and an app over it that does not blink."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea

from toolstand.tui.app import ToolstandApp, make_app

ROOT = Path(__file__).resolve().parents[2]
SIZE = (100, 30)


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
        return make_app(root=project, blink=False, **kw)

    return make


async def wait_for(pilot: Pilot[Any], check: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until ``check`` holds (live calls take real milliseconds)."""
    steps = int(timeout / 0.05)
    for _ in range(steps):
        if check():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not reached in time")


async def type_into(pilot: Pilot[Any], area: TextArea, text: str) -> None:
    """Clear a text area and type ``text`` key by key, as a user would."""
    area.focus()
    area.clear()
    await pilot.press(*text)
