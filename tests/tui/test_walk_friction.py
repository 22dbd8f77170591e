"""The friction a new user met walking the three stories at 80x24 (issue 30): words cut
with no way to read them, counts not shown, a toast over what it is about, a long list
slow to open."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.content import Content
from textual.widgets import Select
from textual.widgets._select import SelectOverlay

from tests.support.tui import screen_after, settle, wait_for
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.run import RunScreen

AppFor = Callable[..., ToolstandApp]
SMALL = (80, 24)


def many_cases(project: Path, n: int) -> list[str]:
    """``n`` more cases in the config's case file (as BFCL's thousands are); their ids."""
    path = project / "cases" / "delivery.jsonl"
    first = orjson.loads(path.read_bytes().splitlines()[0])
    ids = [f"many_{i:03}" for i in range(n)]
    lines = [orjson.dumps({**first, "id": i}).decode() for i in ids]
    path.write_text(path.read_text() + "\n".join(lines) + "\n")
    return ids


async def test_the_run_case_list_of_many_cases_opens_measuring_each_case_once(
    app_for: AppFor, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = many_cases(project, 300)
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        screen = await screen_after(pilot, RunScreen, "f2")
        await settle(pilot)
        select = screen.query_one("#run-case", Select)
        overlay = select.query_one(SelectOverlay)
        await wait_for(pilot, lambda: overlay.option_count > len(ids))
        measured = 0
        height = Content.get_height

        def counted(self: Content, *args: Any, **kw: Any) -> int:
            nonlocal measured
            measured += 1
            return height(self, *args, **kw)

        monkeypatch.setattr(Content, "get_height", counted)
        await pilot.press("c")  # opens the case list
        await pilot.pause()
        await pilot.pause()
        monkeypatch.undo()
        assert select.expanded and overlay.region.height == 12  # as tall as it may be
        # Textual's overlay summed every option's height on each layout: 8 per case here
        assert measured <= 2 * overlay.option_count
        await pilot.press(*"many_250", "enter")  # typing still finds a case
        assert select.value == "many_250" and not select.expanded
