"""An imported BFCL run opens in History and Report, over the import's own config."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import bfcl as fx
from tests.support.tui import SIZE, screen_after, wait_for
from toolstand.cli import main
from toolstand.tui.app import make_app
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.report import ReportScreen


@pytest.fixture
def imported_run(tmp_path: Path) -> tuple[Path, Path]:
    """The fixtures imported into bfcl/ and run on the simulator (outside the app's loop)."""
    out = tmp_path / "bfcl"
    assert main(["import", "bfcl", str(fx.write_wheel(tmp_path)), "--out", str(out)]) == 0
    history = tmp_path / "bfcl.jsonl"
    assert main(["run", "--config", str(out / "config.json"), "--output", str(history)]) == 0
    return out, history


async def test_an_imported_bfcl_run_opens_in_history_and_report(
    imported_run: tuple[Path, Path],
) -> None:
    out, history = imported_run
    app = make_app(str(out / "config.json"), root=out, history=str(history))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await wait_for(pilot, lambda: screen.index is not None and screen.index.rows == 14)
        report = await screen_after(pilot, ReportScreen, "f4")
        await wait_for(pilot, lambda: report.report is not None)
        assert report.report is not None
        (group,) = report.report.groups
        rates = group.metrics()
        assert (rates["pass_rate"].numerator, rates["pass_rate"].denominator) == (14, 14)
        assert rates["normalized_pass_rate"].numerator == 14
