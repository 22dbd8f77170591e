"""Table columns sized to their content (issue 30, "nothing is cut without a way to read
it"): Cases' ids and History's case ids and error codes whole at 80 columns, the rest of
a wide pane to the errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
from textual.widgets import Static

from tests.support.tui import open_history
from tests.support.tui_history import write_history, write_records
from toolstand.spec.cases import load_cases
from toolstand.tui.app import ToolstandApp
from toolstand.tui.widgets.attempt_layout import INDENT, fit_codes, layout, lines
from toolstand.tui.widgets.attempt_list import AttemptList
from toolstand.tui.widgets.case_list import CaseTable
from toolstand.tui.widgets.columns import (
    Column,
    fewest_two_line,
    fit_widths,
    pick_layout,
    two_line_width,
    two_lines,
)

AppFor = Callable[..., ToolstandApp]


def test_columns_take_their_content_and_the_rest_goes_to_one() -> None:
    cols = [Column("id", 21, 14), Column("expects", 14, 6), Column("last", 4, 4)]
    assert fit_widths(60, cols, rest="id") == {"id": 21 + 21, "expects": 14, "last": 4}
    # short of room: the id is raised first, the others keep their least
    assert fit_widths(31, cols, rest="id") == {"id": 21, "expects": 6, "last": 4}
    # content narrower than the least takes no more than it needs
    assert fit_widths(20, [Column("mode", 4, 8)]) == {"mode": 4}


def test_a_column_gives_way_only_when_a_goal_cannot_be_met_with_it() -> None:
    full = [Column("id", 21, 14), Column("category", 8, 6), Column("last", 4, 4)]
    stages = [full, [full[0], full[2]]]
    wide = pick_layout(50, stages, gap=2, goals={"id": 21})
    assert wide == {"id": 21, "category": 8, "last": 4}
    narrow = pick_layout(33, stages, gap=2, goals={"id": 21})
    assert narrow == {"id": 21, "last": 4}  # the category went so that the id is whole
    # no stage meets the goal: the fullest that fits, not one that gave up more in vain
    assert pick_layout(30, stages, gap=2, goals={"id": 99}) == {"id": 14, "category": 6, "last": 4}


def test_an_id_goes_on_to_a_second_line_after_a_separator_never_inside_a_word() -> None:
    assert two_line_width("recovery_retryable_problem") == 17  # recovery_ / retryable_problem
    assert two_lines("recovery_retryable_problem", 19) == ["recovery_retryable_", "problem"]
    assert two_lines("live_parallel_multiple_13-11-0", 16) == ["live_parallel_", "multiple_13-11-0"]
    assert two_line_width("refusal") == 7 and two_lines("refusal", 7) == ["refusal"]
    assert two_lines("2 calls", 5) == ["2 …ls"]  # no separator: cut, as before, on one line
    assert two_lines("recovery_retryable_problem", 12) == ["recove…oblem"]
    # the room of two columns split where the fewest rows take a second line
    rows = [(26, 4), (13, 9), (14, 14), (12, 12), (22, 4)]
    goals = {"id": 13, "expects": 8}
    split = fewest_two_line(("id", "expects"), rows, {"id": 19, "expects": 8}, goals)
    assert split == {"id": 15, "expects": 12}  # three rows wrap (19/8: all five); a tie
    # goes to the id


def test_history_columns_hold_case_ids_and_codes_whole_from_80_columns() -> None:
    wants = {"case": 26, "errors": 15, "model": 14, "provider": 3, "mode": 8}
    for width in range(40, 160):
        shown = dict(layout(width, wants))
        assert {"verdict", "errors", "case"} <= shown.keys(), width
        assert sum(shown.values()) + len(shown) <= width, width
        if width >= 78:  # 80 columns less the scrollbar
            assert shown["case"] >= 26 and shown["errors"] >= 15, width
            # which run: the provider and the model, in one column where two do not fit
            assert {"provider", "model"} <= shown.keys() or "provider/model" in shown, width
            assert shown["verdict"] >= len("verdict") and "#" in shown, width
        if width >= 100:
            assert "network" in shown, width
    assert dict(layout(150, wants))["errors"] > 15  # the rest to the errors


def test_a_row_takes_two_lines_where_one_would_cut_its_run_case_or_codes() -> None:
    # demo.jsonl's widest: sim-positional, recovery_retryable_problem, three codes
    wants = {"case": 26, "errors": 47, "model": 14, "provider": 3, "mode": 8}
    wants["provider/model"] = 14  # one provider: the models alone under "model (sim)"
    for width in range(40, 160):
        shown = lines(width, wants)
        for n, line in enumerate(shown):
            assert sum(w for _, w in line) + len(line) + INDENT * n <= width, width
        cells = {t: w for line in shown for t, w in line}
        assert {"verdict", "errors", "case", "mode", "#"} <= cells.keys(), width
        if width >= 44:  # 80 columns with the filter panel open, less the scrollbar
            assert cells["case"] >= 26 and cells["errors"] >= 15, width
            assert max(cells.get("provider/model", 0), cells.get("model", 0)) >= 14, width
        assert len(shown) == (1 if width >= 78 else 2), width  # 80 columns: one line
    assert dict(lines(44, wants)[0]) == {"provider/model": 14, "case": 26}


def test_error_codes_that_do_not_fit_say_how_many_more_there_are() -> None:
    codes = ["invalid_arguments", "argument_mismatch", "unsafe_call"]
    assert fit_codes(codes, 60) == "invalid_arguments,argument_mismatch,unsafe_call"
    assert fit_codes(codes, 40) == "invalid_arguments,argument_mismatch +1"
    assert fit_codes(codes, 20) == "invalid_arguments +2"
    assert fit_codes(codes, 18) == "invalid_arguments…"  # the first whole, more there
    assert fit_codes(codes, 10) == "invalid_a…" and fit_codes(["wrong_tool"], 10) == "wrong_tool"


def row_text(lst: AttemptList, model: str, case: str, recs: list[dict[str, object]]) -> str:
    lst.cursor = next(i for i, r in enumerate(recs) if r["model"] == model and r["case_id"] == case)
    return "".join(s.text for s in lst.render_line(lst.cursor - lst.scroll_offset.y + 1))


async def test_history_shows_case_ids_and_error_codes_whole_at_80_and_120_columns(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    for size, panel in (((80, 24), False), ((120, 40), True)):
        app = app_for(start_mode="history")
        async with app.run_test(size=size) as pilot:
            screen = await open_history(pilot, app, len(recs))
            if panel:
                await pilot.press("f")  # the filter panel open beside the list
            await pilot.pause()
            lst = screen.query_one(AttemptList)
            line = row_text(lst, "sim-eager", "cancel_implicit", recs)
            await pilot.pause()
            assert "cancel_implicit" in line and "FAIL" in line, (size, line)
            assert "unexpected_call" in line, (size, line)
            header = "".join(s.text for s in lst.render_line(0))
            assert len(header.rstrip()) <= lst.scrollable_content_region.width


def whole_cells(table: CaseTable, key: str) -> list[str]:
    """A column's cells as the table shows them, each checked to fit its width, and its
    lines joined again."""
    width = table.widths[key]
    column = table.get_column_index(key)
    cells = [str(table.get_row_at(i)[column]) for i in range(table.row_count)]
    assert all(len(line) <= width for cell in cells for line in cell.split("\n")), key
    assert all(cell.count("\n") <= 1 for cell in cells)  # two lines at most
    return [cell.replace("\n", "") for cell in cells]


async def test_the_case_list_shows_ids_and_expected_tools_whole_at_80x24(
    app_for: AppFor, project: Path
) -> None:
    # walk leftover of issue 30: at 80 columns "implicit_w…ng_address", "quo…ry" and
    # "ref…al"; a BFCL file's ids ("live_paral…iple_0-0-0"), "2 c…ls" and no category
    bfcl = project / "cases" / "live_parallel_multiple.jsonl"
    ids = [f"live_parallel_multiple_{n}-{n}-{n % 3}" for n in range(14)]
    calls = [{"tool": "get_order"}, {"tool": "quote_delivery"}]
    bfcl.write_bytes(
        b"".join(
            orjson.dumps({"id": i, "category": "live_parallel_multiple", "user": "u",
                          "expect": {"kind": "tool_call", "calls": calls}}) + b"\n"
            for i in ids
        )
    )  # fmt: skip
    delivery = load_cases(project / "cases" / "delivery.jsonl")
    for cases, want_ids in ((None, [c.id for c in delivery.cases]), (str(bfcl), ids)):
        app = app_for(cases=cases)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            screen = app.screen
            table = screen.query_one(CaseTable)
            assert whole_cells(table, "id") == want_ids
            expects = whole_cells(table, "expects")
            assert "last" in table.widths  # the last verdict stays
            used = sum(w + 2 for w in table.widths.values())
            assert used <= table.size.width - table.styles.scrollbar_size_vertical
            caption = screen.query_one("#case-caption", Static)
            if cases is None:
                assert {"quote_delivery", "cancel_order", "refusal"} <= set(expects)
                assert not caption.display  # the categories differ: the form says each
            else:
                assert set(expects) == {"2 calls"} and "category" not in table.widths
                assert caption.display
                assert str(caption.render()) == "all in category live_parallel_multiple"


async def header_and_first_row(app: ToolstandApp, rows: int) -> tuple[str, str]:
    """History at 80x24 on the project's fixture: the list's header and first row."""
    async with app.run_test(size=(80, 24)) as pilot:
        lst = (await open_history(pilot, app, rows)).query_one(AttemptList)
        return tuple("".join(s.text for s in lst.render_line(y)) for y in (0, 1))  # type: ignore[return-value]


async def test_history_at_80x24_names_the_provider_and_cuts_no_title(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    # the verdict's title read "ver…", and no column said which provider an attempt went
    # to (the provider's column, a title of 8 cells for "sim", gave way first)
    recs = write_history(project)
    for rec in recs[1::2]:
        rec["provider"] = "acme"
    write_records(project, recs)
    header, first = await header_and_first_row(app_for(start_mode="history"), len(recs))
    assert "provider/model" in header.split() and "verdict" in header.split(), header
    assert "…" not in header
    assert f"{recs[0]['provider']}/{recs[0]['model']}" in first.split(), first


async def test_one_provider_is_named_in_the_title_and_its_models_are_whole(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    header, first = await header_and_first_row(app_for(start_mode="history"), len(recs))
    assert "model (sim)" in header and "provider" not in header, header
    assert recs[0]["model"] in first.split(), first


def test_the_layout_helpers_take_empty_huge_and_zero_width_values() -> None:
    # an empty id, no room at all, an id of separators only, a huge one: never an error,
    # never more cells than given
    huge = "a_" * 50_000
    assert two_lines("", 0) == [""] and two_lines("abc", 0) == [""]
    assert two_line_width("____") == 2 and two_line_width("") == 0
    assert all(len(x) <= 40 for x in two_lines(huge, 40))
    assert fit_codes([], 0) == "" and fit_codes(["x" * 50], 0) == ""
    assert len(fit_codes(["unexpected_call", huge], 20)) <= 20
    for width in (0, 5, 80):
        for line in lines(width, {"case": len(huge), "errors": len(huge), "model": 10**6}):
            assert all(w >= 0 for _, w in line)
