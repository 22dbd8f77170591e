"""History's filter panel by the stream, feedback and category facets (issues 25 and 30):
ticking a value shows exactly the file's attempts of that value, and its count."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.widgets import SelectionList

from tests.support.tui import open_history, wait_for
from tests.support.tui_history import fixture_records, headers
from toolstand.history import value_label
from toolstand.history.read import in_key_order
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.widgets.attempt_list import AttemptList

AppFor = Callable[..., ToolstandApp]
FEEDBACK = {"sim-careful": "allowed", "sim-eager": "traceback"}
CATEGORY = {"direct_lookup": "simple_python", "missing_id": "irrelevance", "cancel_implicit": None}


def write_arms(project: Path) -> list[dict[str, Any]]:
    """The fixture with a stream arm per repetition, a feedback style per model and a
    category per case (one case without), in the writer's key order."""
    recs = []
    for rec in fixture_records(project):
        rec["stream"] = rec["attempt"] == 1
        rec["feedback"] = FEEDBACK[rec["model"]]
        rec["category"] = CATEGORY[rec["case_id"]]
        recs.append(in_key_order(rec))
    lines = [orjson.dumps(headers()[0]), *map(orjson.dumps, recs)]
    (project / "runs" / "arms.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return recs


def shown_rows(screen: HistoryScreen) -> list[int]:
    lst = screen.query_one(AttemptList)
    assert lst.index is not None
    return list(range(lst.index.rows)) if lst.view is None else list(lst.view)


async def rows_shown(pilot: Any, screen: HistoryScreen, n: int) -> None:
    await wait_for(pilot, lambda: len(shown_rows(screen)) == n)


def index_of(sl: SelectionList[str], value: str) -> int:
    return next(i for i in range(sl.option_count) if sl.get_option_at_index(i).value == value)


async def toggle(pilot: Any, sl: SelectionList[str], value: str) -> None:
    sl.focus()
    sl.highlighted = index_of(sl, value)
    await pilot.press("space")


@pytest.mark.parametrize("facet", ["stream", "feedback", "category"])
async def test_each_arm_and_category_filters_to_its_attempts(
    app_for: AppFor, project: Path, fixed_clock: None, facet: str
) -> None:
    recs = write_arms(project)
    by_value = Counter(value_label(r.get(facet)) for r in recs)
    assert len(by_value) >= 2, by_value  # a filter that can leave something out
    app = app_for(history=str(project / "runs" / "arms.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_history(pilot, app, len(recs))
        await pilot.press("f")
        await pilot.pause()
        sl = screen.query_one(f"#f-{facet}", SelectionList)
        await wait_for(pilot, lambda: sl.option_count == len(by_value))
        for value, n in by_value.items():
            label = str(sl.get_option_at_index(index_of(sl, value)).prompt)
            assert label.endswith(f"  {n:,}"), label  # its count beside it
            await toggle(pilot, sl, value)
            await wait_for(pilot, lambda: screen.result is not None and screen.query_.active)
            await rows_shown(pilot, screen, n)
            rows = shown_rows(screen)
            assert [value_label(recs[r].get(facet)) for r in rows] == [value] * n
            expected = [i for i, r in enumerate(recs) if value_label(r.get(facet)) == value]
            assert rows == expected
            await toggle(pilot, sl, value)  # and off again: everything
            await rows_shown(pilot, screen, len(recs))
