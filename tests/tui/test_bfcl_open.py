"""An imported BFCL run opens in History and Report, over the import's own config."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from textual.widgets import OptionList, Select

from tests.support import bfcl as fx
from tests.support.tui import SIZE, screen_after, status, wait_for
from toolstand.cli import main
from toolstand.spec.cases import case_paths
from toolstand.tui.app import make_app
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.report import ReportScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.attempt_list import AttemptList
from toolstand.tui.widgets.case_form import CaseForm


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
        await wait_for(pilot, lambda: screen.index is not None and screen.index.rows == 15)
        report = await screen_after(pilot, ReportScreen, "f4")
        await wait_for(pilot, lambda: report.report is not None)
        assert report.report is not None
        (group,) = report.report.groups
        rates = group.metrics()
        assert (rates["pass_rate"].numerator, rates["pass_rate"].denominator) == (15, 15)
        assert rates["normalized_pass_rate"].numerator == 15


async def test_promote_keeps_the_tools_and_expectation_of_a_case_in_another_file(
    imported_run: tuple[Path, Path],
) -> None:
    # issue 30: every case outside the config's first file came out "not in
    # cases/<first>.jsonl: expectation left for you to fill in", its tools lost
    out, history = imported_run
    files = case_paths(out)  # the config's cases: the folder's *.jsonl, first one opened
    assert len(files) > 1
    found = [(f, orjson.loads(x)) for f in files[1:] for x in f.read_bytes().splitlines()]
    lines = {c["id"]: c for _, c in found if "id" in c}
    homes = {c["id"]: f for f, c in found if "id" in c}
    app = make_app(str(out / "config.json"), root=out, history=str(history))
    async with app.run_test(size=SIZE) as pilot:
        screen = await screen_after(pilot, HistoryScreen)
        # indexing done: the list is shown for the last time before the cursor is set
        await wait_for(
            pilot,
            lambda: screen.index is not None and screen.index.rows == 15 and not screen.indexing,
        )
        await app.workers.wait_for_complete()
        await pilot.pause()
        ix = screen.index
        assert ix is not None
        row = next(r for r in range(ix.rows) if str(ix.value("case", r)) in lines)
        case_id = str(ix.value("case", row))
        listing = screen.query_one(AttemptList)

        def on_row() -> bool:
            # the list may still be re-shown as the index settles: put the cursor on the
            # row until it stays there (its position, through the list's own view)
            if listing.current_row != row:
                view = listing.view
                listing.cursor = row if view is None else list(view).index(row)
            return listing.current_row == row

        await wait_for(pilot, on_row)
        await pilot.pause()
        assert listing.current_row == row
        cases = await screen_after(pilot, CasesScreen, "p")
        form = cases.query_one(CaseForm)
        await wait_for(pilot, lambda: form.draft is not None and form.draft.data is not None)
        assert form.draft is not None and form.draft.data is not None
        data = form.draft.data
        # the draft opens in the file of the case it came from, so ctrl+s saves it there
        # (it opened in the config's first file, another BFCL category, before)
        assert app.project.cases_path == homes[case_id]
        assert cases.query_one("#case-file", Select).value == str(homes[case_id])
    original = lines[case_id]
    assert data["id"] == f"{case_id}_regression"
    assert data["tools"] == original["tools"] and data["expect"] == original["expect"]
    assert form.draft.valid, form.draft.reason


async def test_cases_switches_between_the_files_of_the_config(
    imported_run: tuple[Path, Path],
) -> None:
    out, _ = imported_run
    files = case_paths(out)
    app = make_app(str(out / "config.json"), root=out)
    async with app.run_test(size=SIZE) as pilot:
        cases = await screen_after(pilot, CasesScreen)
        chooser = cases.query_one("#case-file", Select)
        assert chooser.display and chooser.value == str(files[0])
        other = files[1]
        want = [orjson.loads(x)["id"] for x in other.read_bytes().splitlines() if b'"id"' in x]
        chooser.value = str(other)
        await wait_for(pilot, lambda: app.project.cases_path == other)
        form = cases.query_one(CaseForm)
        await wait_for(pilot, lambda: form.original is not None and form.original["id"] in want)
        assert [c.id for c in app.project.casefile.cases] == want
        assert form.draft is not None and form.draft.valid and not form.draft.changed
        assert other.name in str(cases.query_one("#nav").render())


async def test_run_lists_every_case_of_the_config_and_runs_one_of_another_file(
    imported_run: tuple[Path, Path],
) -> None:
    # hfix B3: Run's case list held only the file open in Cases (400 of 3,491 for BFCL)
    out, _ = imported_run
    files = case_paths(out)
    ids = [
        c["id"]
        for f in files
        for x in f.read_bytes().splitlines()
        if "id" in (c := orjson.loads(x))
    ]
    app = make_app(str(out / "config.json"), root=out)
    async with app.run_test(size=SIZE) as pilot:
        cases = await screen_after(pilot, CasesScreen, "f1")
        cases.open_file(files[-1])  # Cases now edits the last file of the config
        run = await screen_after(pilot, RunScreen, "f2")
        await pilot.pause()
        select = run.query_one("#run-case", Select)
        listed = [str(o.prompt) for o in select.query_one(OptionList).options]
        assert listed == ["case", *ids]  # the blank, then every case in the config's order
        other = next(i for f in files[:-1] for i in ids if i.startswith(f.stem))
        run.prepare(other, run=True)  # a case of a file Cases does not show
        await wait_for(pilot, lambda: "recorded in" in status(app))
    (rec,) = [
        r
        for r in map(orjson.loads, next(out.glob("runs/live-*.jsonl")).read_bytes().splitlines())
        if r["type"] == "attempt"
    ]
    assert rec["case_id"] == other and rec["judgement"]["verdict"] == "pass"
