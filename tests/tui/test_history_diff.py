"""History's diff of two attempts: the summary fields, and each turn's raw response body
and normalized decision line by line (issue 30)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.tui import open_history, screen_after, screen_rows, wait_for
from tests.support.tui_history import write_history, write_records
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.attempt import DiffScreen
from toolstand.tui.widgets.attempt_list import AttemptList
from toolstand.tui.widgets.line_diff_view import LineDiffView
from toolstand.util.line_diff import line_diff

AppFor = Callable[..., ToolstandApp]


def test_a_line_diff_marks_each_side_and_folds_long_unchanged_runs() -> None:
    a = "\n".join(["{", *(f'  "k{i}": {i},' for i in range(20)), '  "name": "cancel_order"', "}"])
    b = a.replace("cancel_order", "get_order")
    lines = line_diff(a, b, context=2)
    assert [(x.tag, x.text) for x in lines if x.tag in ("removed", "added")] == [
        ("removed", '  "name": "cancel_order"'),
        ("added", '  "name": "get_order"'),
    ]
    folded = [x for x in lines if x.tag == "folded"]
    assert len(folded) == 1 and folded[0].count == 21 - 2  # "{" and 20 keys, 2 kept
    assert lines[-1].tag == "same" and (lines[-1].a, lines[-1].b) == (23, 23)
    assert line_diff("same\n", "same\n") == [line_diff("same", "same")[0]]


async def test_the_diff_compares_raw_bodies_and_decisions_line_by_line(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    eager, careful = (
        next(
            i for i, r in enumerate(recs)
            if r["model"] == model and r["case_id"] == "cancel_implicit"
        )
        for model in ("sim-eager", "sim-careful")
    )  # fmt: skip
    app = app_for(start_mode="history")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_history(pilot, app, len(recs))
        lst = screen.query_one(AttemptList)
        lst.cursor = eager
        await pilot.press("m")
        await wait_for(pilot, lambda: screen.marked == eager)
        lst.cursor = careful
        diff = await screen_after(pilot, DiffScreen, "d")
        await wait_for(pilot, lambda: bool(diff.rows))
        raw = diff.query_one("#diff-raw", LineDiffView)
        decision = diff.query_one("#diff-decision", LineDiffView)
        # the eager model called cancel_order, the careful one answered in text
        (turn1,) = decision.sections
        removed = [x.text for x in turn1.lines if x.tag == "removed"]
        added = [x.text for x in turn1.lines if x.tag == "added"]
        assert any('"name": "cancel_order"' in t for t in removed)
        assert any('"kind": "text"' in t for t in added)
        (body,) = raw.sections
        assert body.title == "turn 1 · raw response body"
        assert any('"tool_calls"' in x.text for x in body.lines if x.tag == "removed")
        assert body.changed > 0
        head = str(diff.query_one("#diff-head").render())
        assert f"raw bodies {body.changed} lines" in head
        # b shows the raw bodies, focused, so the arrows scroll them
        await pilot.press("b")
        await pilot.pause()
        assert raw.has_focus and raw.region.height > 0
        shown = "\n".join(str(w.render()) for w in raw.query(".diff-body"))
        assert "- " in shown and "cancel_order" in shown
        await pilot.press("n")
        await pilot.pause()
        assert decision.has_focus
        await pilot.press("f")
        await pilot.pause()
        assert diff.query_one("#diff").has_focus


async def test_two_run_ids_are_cut_where_they_differ_at_80x24(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    # "live-20261203T132343Z-43…" beside "live-20261203T132458Z-6c…": cut at their ends,
    # two ids of one family read alike where they differ
    recs = write_history(project)
    for n, rec in enumerate(recs):
        rec["run_id"] = f"live-20261203T1323{n:02d}Z-{n:06x}abcdef"
    write_records(project, recs)
    app = app_for(start_mode="history")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_history(pilot, app, len(recs))
        lst = screen.query_one(AttemptList)
        lst.cursor = 0
        await pilot.press("m")
        await wait_for(pilot, lambda: screen.marked == 0)
        lst.cursor = 1
        diff = await screen_after(pilot, DiffScreen, "d")
        await wait_for(pilot, lambda: bool(diff.rows))
        await pilot.pause()
        row = next(r for r in screen_rows(app) if " run_id " in r)
        assert "000001abcdef" in row and "000000abcdef" in row, row
