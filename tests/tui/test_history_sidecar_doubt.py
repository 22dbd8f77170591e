"""Issue 31 M7 in the TUI: a corrupt sidecar (its head rewritten, as a crash or another
tool might) is rebuilt, and History lists every attempt instead of staying at
"0 attempts · indexing 0%"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.support.tui import SIZE, open_history
from tests.support.tui_history import write_history
from toolstand.history import sidecar as history_sidecar
from toolstand.history.index import HistoryIndex
from toolstand.tui.app import ToolstandApp


async def test_history_rebuilds_a_corrupt_sidecar(
    app_for: Callable[..., ToolstandApp], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recs = write_history(project)
    path = project / "runs" / "fixture.jsonl"
    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1)
    ix = HistoryIndex(path)
    ix.update()
    target = history_sidecar.save(ix)
    assert target is not None
    raw = target.read_bytes()
    m = len(history_sidecar.MAGIC)
    n = int.from_bytes(raw[m : m + 8], "little")
    head = orjson.loads(raw[m + 8 : m + 8 + n])
    head["user_text"] = "x"  # the old load raised on it, and History never moved again
    blob = orjson.dumps(head)
    target.write_bytes(
        history_sidecar.MAGIC + len(blob).to_bytes(8, "little") + blob + raw[m + 8 + n :]
    )
    app = app_for(history=str(path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))  # every row, indexing done
        assert screen.index is not None and screen.index.rows == len(recs)
    assert history_sidecar.load(HistoryIndex(path))  # and a sound sidecar saved again
