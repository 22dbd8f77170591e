"""The friction a new user met walking the three stories at 80x24 (issue 30): words cut
with no way to read them, counts not shown, a toast over what it is about, a long list
slow to open."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.cells import cell_len
from textual.content import Content
from textual.widgets import DataTable, Label, Select, SelectionList, Static, TabbedContent, TextArea
from textual.widgets._select import SelectOverlay

from tests.support import bfcl as fx
from tests.support.tui import (
    help_text,
    open_history,
    open_report,
    screen_after,
    settle,
    status,
    turn_one,
    wait_for,
)
from tests.support.tui_history import write_history
from toolstand.cli import main
from toolstand.spec.cases import case_paths, load_cases
from toolstand.tui.app import ToolstandApp, make_app
from toolstand.tui.screens.attempt import AttemptScreen, DiffScreen
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.help import HelpScreen
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.report import ReportScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.attempt_list import AttemptList
from toolstand.tui.widgets.case_list import CaseTable
from toolstand.tui.widgets.filter_bar import FilterBar

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


@pytest.fixture
def bfcl_import(tmp_path: Path) -> Path:
    """The BFCL fixtures imported into bfcl/: a config with a case file per category."""
    out = tmp_path / "bfcl"
    assert main(["import", "bfcl", str(fx.write_wheel(tmp_path)), "--out", str(out)]) == 0
    return out


async def test_the_case_file_chooser_says_how_many_cases_each_file_holds(
    bfcl_import: Path,
) -> None:
    files = case_paths(bfcl_import)
    assert len(files) > 1
    counts = [len(load_cases(p).cases) for p in files]
    want = [
        f"{p.name} · {n} case{'' if n == 1 else 's'}" for p, n in zip(files, counts, strict=True)
    ]
    assert len(set(counts)) > 1  # a count of each file, not one for all
    app = make_app(str(bfcl_import / "config.json"), root=bfcl_import)
    async with app.run_test(size=SMALL) as pilot:
        cases = await screen_after(pilot, CasesScreen)
        chooser = cases.query_one("#case-file", Select)
        overlay = chooser.query_one(SelectOverlay)

        def labels() -> list[str]:
            # the first option is the blank one, the chooser's prompt
            return [str(overlay.get_option_at_index(i).prompt) for i in range(1, len(files) + 1)]

        await wait_for(pilot, lambda: all(" case" in x for x in labels()))
        assert labels() == want
        assert chooser.value == str(files[0])  # labelled, still the file open
        shown = chooser.query_one("SelectCurrent #label", Static).content
        assert str(shown) == want[0]


async def test_marking_for_a_diff_says_so_in_the_status_line_and_no_toast_covers_the_diff(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    app = app_for(start_mode="history")
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        screen = await open_history(pilot, app, len(recs))
        lst = screen.query_one(AttemptList)
        lst.cursor = 1
        await pilot.press("m")
        await wait_for(pilot, lambda: screen.marked == 1)
        said = str(screen.query_one("#history-status", Static).content)
        assert "1 marked" in said and "d on another" in said
        assert not app._notifications  # the status line says it
        lst.cursor = 2
        diff = await screen_after(pilot, DiffScreen, "d")
        await wait_for(pilot, lambda: bool(diff.rows))
        assert not app._notifications
        # marked from one attempt's screen (no status line there): a toast, gone when
        # the diff it is about opens
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        lst.cursor = 3
        attempt = await screen_after(pilot, AttemptScreen, "enter")
        await pilot.press("m")
        await wait_for(pilot, lambda: screen.marked == 3)
        await pilot.pause()
        assert [n.message for n in app._notifications] == [
            "Marked: d on another attempt diffs the two."
        ]
        await pilot.press("right_square_bracket")  # the next attempt
        await wait_for(pilot, lambda: attempt.row == 4)
        diff = await screen_after(pilot, DiffScreen, "d")
        await wait_for(pilot, lambda: bool(diff.rows))
        await pilot.pause()
        assert not app._notifications


async def test_report_s_help_says_how_to_switch_tabs_and_the_keys_do(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    write_history(project)
    app = app_for(start_mode="report")
    async with app.run_test(size=SMALL) as pilot:
        report = await open_report(pilot, app)
        await screen_after(pilot, HelpScreen, "question_mark")
        said = help_text(app)
        assert "Next tab: Metrics, Categories, Errors, Cases" in said
        assert "]" in said and "[" in said and "Previous tab" in said
        await screen_after(pilot, ReportScreen, "escape")
        tabs = report.query_one("#report-tabs", TabbedContent)
        assert tabs.active == "tab-metrics"
        await pilot.press("right_square_bracket")
        assert tabs.active == "tab-categories"
        assert isinstance(app.focused, DataTable) and app.focused.id == "category-table"
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert tabs.active == "tab-cases"
        await pilot.press("right_square_bracket")  # round the end
        assert tabs.active == "tab-metrics"
        await pilot.press("left_square_bracket")
        assert tabs.active == "tab-cases" and app.focused is not None
        assert app.focused.id == "case-table-r"


@pytest.fixture
def bfcl_history(bfcl_import: Path) -> Path:
    """The imported cases run on the simulator (outside the app's loop)."""
    history = bfcl_import.parent / "bfcl.jsonl"
    config = str(bfcl_import / "config.json")
    assert main(["run", "--config", config, "--output", str(history)]) == 0
    return history


async def test_history_s_category_facet_is_in_sight_at_80x24_without_scrolling(
    bfcl_import: Path, bfcl_history: Path
) -> None:
    config = str(bfcl_import / "config.json")
    app = make_app(config, root=bfcl_import, history=str(bfcl_history))
    async with app.run_test(size=SMALL) as pilot:
        screen = await screen_after(pilot, HistoryScreen)
        await wait_for(pilot, lambda: screen.result is not None and screen.result.end == 15)
        await pilot.press("f")
        await pilot.pause()
        bar = screen.query_one(FilterBar)
        assert bar.scroll_offset.y == 0
        title = bar.query_one("#t-category", Label)
        values = bar.query_one("#f-category", SelectionList)
        assert str(title.content) == "category (11)"  # a question file each
        shown = bar.content_region
        assert shown.contains_region(title.region)
        # its first values too, not only its title
        assert values.region.y + 2 <= shown.bottom and values.region.height >= 2


async def test_at_80_columns_column_and_pane_titles_fit_and_f6_shows_the_url_whole(
    app_for: AppFor,
) -> None:
    app = app_for()
    async with app.run_test(size=SMALL) as pilot:
        cases = await screen_after(pilot, CasesScreen)
        table = cases.query_one(CaseTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        labels = {str(c.label): c.width for c in table.columns.values()}
        assert "expect" in labels  # the case format's word: "expects" was cut to 6
        assert all(cell_len(label) <= width for label, width in labels.items())
        await turn_one(pilot, app, "recovery_lookup_ok")
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "recorded in" in status(app))
        run = app.screen
        titles = {}
        for pane in run.query(".pane"):
            title = str(pane.border_title or "")
            titles[pane.id] = title
            # "…" only where even the shortest wording does not fit: none at 80 columns
            assert cell_len(title) <= pane.outer_size.width - 6 and "…" not in title, title
        assert titles["pane-request"] == "request · /v1/chat/completions"
        assert titles["pane-response"].startswith("raw response · HTTP 200 · ")
        assert titles["step"].startswith("turn 2 again · ctrl+r edit")
        await pilot.press("f6")  # the whole URL, the status, the tries
        await pilot.pause()
        head = run.query_one("#request-head", TextArea).text.splitlines()[0]
        assert head.startswith("POST http://127.0.0.1:") and head.endswith("/v1/chat/completions")
        # maximized, the request pane has the room for its whole title
        run.query_one("#request-head", TextArea).focus()
        await pilot.press("f11")
        await pilot.pause()
        assert str(run.query_one("#pane-request").border_title).startswith(
            "headers: request · POST http://127.0.0.1:"
        )
