"""History state that follows the open file, filters that start at the top, records that
are odd or hostile (issue 14 items 3, 4, 14; issue 13 items 4 and 7)."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from textual.widgets import SelectionList, Static, TextArea

from tests.support.tui import SIZE, open_history, screen_after, wait_for
from tests.support.tui_history import fixture_records, headers, write_history
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.attempt import AttemptScreen
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.widgets.attempt_detail import AttemptDetail
from toolstand.tui.widgets.attempt_layout import layout
from toolstand.tui.widgets.attempt_list import AttemptList

AppFor = Callable[..., ToolstandApp]
HOSTILE = "\x1b]0;TITLE\x07\x1b[2J"  # sets the pane title, clears the screen
CSI = "\x9b"  # a one-byte CSI (C1): orjson leaves it raw in JSON text


def painted(app: ToolstandApp) -> str:
    """Every character the screen paints now, as the terminal would receive it."""
    update = app.screen._compositor.render_full_update()
    return "\n".join("".join(seg.text for seg in strip) for strip in update.strips)


def write_lines(path: Path, records: list[Any]) -> None:
    path.write_bytes(
        b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in records)
    )


def options(screen: HistoryScreen, facet: str) -> list[str]:
    sl = screen.query_one(f"#f-{facet}", SelectionList)
    return [str(sl.get_option_at_index(i).value) for i in range(sl.option_count)]


def prompts(screen: HistoryScreen, facet: str) -> list[str]:
    sl = screen.query_one(f"#f-{facet}", SelectionList)
    return [str(sl.get_option_at_index(i).prompt) for i in range(sl.option_count)]


async def test_odd_lines_never_crash_the_filters_and_are_told(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = list(fixture_records(project))
    lines: list[Any] = [headers()[0], *recs[:4], b'{"type":"attempt"}', b"not json", *recs[4:6]]
    write_lines(project / "runs" / "odd.jsonl", lines)
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        screen = await screen_after(pilot, HistoryScreen, "f3")
        await wait_for(pilot, lambda: screen.index is not None and not screen.indexing)
        await wait_for(pilot, lambda: screen.result is not None)
        await pilot.press("f")  # the panel sorts the days: a record without one is no crash
        await pilot.pause()
        await wait_for(pilot, lambda: bool(options(screen, "model")))
        assert app.is_running and isinstance(app.screen, HistoryScreen)
        assert set(options(screen, "model")) <= {"sim-careful", "?"}
        days = str(screen.query_one("#f-days", Static).render())
        assert "11-27 6" in days
        # the skipped line is named to the user, with its line number
        await wait_for(pilot, lambda: any("skipped" in n.message for n in app._notifications))
        told = next(n.message for n in app._notifications if "skipped" in n.message)
        assert "line 7" in told and "malformed" in told


async def test_another_history_brings_its_own_facets_and_counts(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    other = [dict(r, model="sim-other") for r in fixture_records(project)][:5]
    write_lines(project / "runs" / "zz_other.jsonl", [headers()[0], *other])
    os.utime(project / "runs" / "zz_other.jsonl", (1e9, 1e9))  # older: not opened first
    recs = write_history(project)
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))
        await pilot.press("f")
        await wait_for(pilot, lambda: bool(options(screen, "model")))
        screen.query_one("#f-model", SelectionList).select("sim-eager")
        await wait_for(pilot, lambda: screen.query_.model == {"sim-eager"})
        screen.open(str(project / "runs" / "zz_other.jsonl"))
        await wait_for(
            pilot,
            lambda: screen.index is not None and screen.index.rows == 5 and not screen.indexing,
        )
        await wait_for(pilot, lambda: screen.result is not None and screen.result.end == 5)
        await wait_for(pilot, lambda: options(screen, "model") == ["sim-other"])
        assert prompts(screen, "model") == ["sim-other  5"]
        assert not screen.query_.active  # the old file's filter went with it
        await pilot.press("escape", "x")
        await pilot.pause()
        assert options(screen, "model") == ["sim-other"]


async def test_a_new_filter_starts_at_the_top(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = list(fixture_records(project))
    many = [dict(r, attempt=n + 1) for n in range(5) for r in recs]  # 120 rows
    write_lines(project / "runs" / "many.jsonl", [headers()[0], *many])
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(many))
        lst = screen.query_one(AttemptList)
        await pilot.press("end")
        await wait_for(pilot, lambda: lst.scroll_offset.y > 0)
        await pilot.press("F")  # failures only
        await wait_for(pilot, lambda: lst.view is not None and screen.query_.verdict == {"fail"})
        await pilot.pause()
        fails = [i for i, r in enumerate(many) if r["judgement"]["verdict"] == "fail"]
        assert lst.view is not None and list(lst.view) == fails
        assert lst.cursor == 0 and lst.current_row == fails[0]
        assert lst.scroll_offset.y == 0


async def test_escapes_in_a_history_are_shown_not_obeyed(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = list(fixture_records(project))
    # a deep copy: the fixture's answers are shared objects
    evil = copy.deepcopy(recs[2]) | {"provider": f"sim{HOSTILE}", "case_id": f"case{HOSTILE}{CSI}"}
    body = evil["response"]["body"]
    body["choices"][0]["message"]["content"] = f"hello{HOSTILE}{CSI}[bold]x[/bold]"
    evil["decision"] = dict(evil["decision"], text=f"hello{HOSTILE}{CSI}")
    evil["user"] = f"user{HOSTILE}"
    write_lines(project / "runs" / "evil.jsonl", [headers()[0], *recs[:2], evil])
    app = app_for(start_mode="history")
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await open_history(pilot, app, 3)
        await pilot.press("f")
        await wait_for(pilot, lambda: bool(options(screen, "case")))
        await pilot.pause()
        text = painted(app)
        assert "\x1b" not in text and CSI not in text and "\x07" not in text
        assert "\\x1b" in text  # the escape spelled where the provider and case are shown
        assert any("\\x1b]0;TITLE" in p for p in prompts(screen, "provider"))
        await pilot.press("escape", "end", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
        detail = app.screen.query_one(AttemptDetail)
        await wait_for(pilot, lambda: detail.rec is not None)
        await pilot.pause()
        raw = app.screen.query_one("#detail-raw", TextArea).text
        decision = app.screen.query_one("#detail-decision", TextArea).text
        for shown in (raw, decision, painted(app)):
            assert "\x1b" not in shown and CSI not in shown and "\x07" not in shown
        assert "\\x9b" in raw and "[bold]x[/bold]" in raw  # markup stays literal
        explained = str(app.screen.query_one("#detail-explain", Static).render())
        assert "user\\x1b]0;TITLE\\x07" in explained


def test_the_list_keeps_verdict_and_errors_down_to_the_narrowest_pane() -> None:
    for width in range(40, 140):
        titles = [t for t, _ in layout(width)]
        assert "verdict" in titles and "errors" in titles and "case" in titles, width
        assert sum(w for _, w in layout(width)) + len(titles) <= width, width


async def test_at_80x24_with_the_panel_open_each_row_is_whole_on_two_lines(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    # walk leftover of issue 30: beside the panel (44 cells) the model, the case and the
    # codes were cut ("sim-c…eful", "cancel…plicit", "unexpecte…"); a row now takes two
    # lines there, the run and the case above, the verdict and the codes below
    recs = write_history(project)
    app = app_for(start_mode="history")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_history(pilot, app, len(recs))
        lst = screen.query_one(AttemptList)
        assert lst.per_row == 1  # the panel closed: one line each
        await pilot.press("f")
        await pilot.pause()
        assert lst.per_row == 2
        width = lst.scrollable_content_region.width

        def text(y: int) -> str:
            return "".join(s.text for s in lst.render_line(y))

        header = [text(0), text(1)]
        assert header[0].split()[:3] == ["model", "(sim)", "case"]
        assert header[1].split()[:4] == ["mode", "#", "verdict", "errors"]  # titles whole
        assert all(len(h.rstrip()) <= width for h in header)
        position = next(
            i
            for i, r in enumerate(recs)
            if r["model"] == "sim-careful" and r["case_id"] == "cancel_implicit"
        )
        eager = next(
            i
            for i, r in enumerate(recs)
            if r["model"] == "sim-eager" and r["case_id"] == "cancel_implicit"
        )
        for i, words in (
            (position, (["sim-careful", "cancel_implicit"], ["auto", "1", "pass"])),
            (eager, (["sim-eager", "cancel_implicit"], ["auto", "1", "FAIL"])),
        ):
            lst.cursor = i
            await pilot.pause()
            y = lst.line_of(lst.cursor)
            assert (text(y).split()[:2], text(y + 1).split()[:3]) == words
        # the first code whole and how many more (unsafe_call): none dropped unsaid
        assert "unexpected_call +1" in text(y + 1)
        # the cursor's row is drawn on both its lines; the one below it is another row
        cursor = lst.get_component_rich_style("attempt-list--cursor", partial=True).bgcolor
        y = lst.line_of(lst.cursor)
        assert all(any(s.style and s.style.bgcolor == cursor for s in lst.render_line(y + k))
                   for k in (0, 1))  # fmt: skip
        assert not any(s.style and s.style.bgcolor == cursor for s in lst.render_line(y + 2))
        # a click on a row's second line picks that row; a page moves by whole rows
        lst.cursor = 0
        await pilot.pause()
        assert lst.line_of(2) == 6  # below the two header lines and two rows
        await pilot.click(AttemptList, offset=(5, lst.line_of(2) + 1))
        assert lst.cursor == 2
        await pilot.press("pagedown")
        assert lst.cursor == 2 + (lst.size.height - 2) // 2 - 1


async def test_escapes_in_a_repair_turn_s_label_are_shown_not_obeyed(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    """A repair turn's feedback and index name the pane titles: spelled, never markup."""
    recs = list(fixture_records(project))
    evil = copy.deepcopy(recs[2])
    style = f"allowed{HOSTILE}{CSI}[bold]x[/bold]"
    evil["feedback"] = style
    evil["repair"] = {"needed": True, "turns": 1, "valid_after": None, "passed_after": None}
    evil["repair_turns"] = [
        {
            "index": f"[b]1[/b]{HOSTILE}",
            "feedback": style,
            "valid": False,
            "judgement": None,
            "tool_results": [],
            "decision": evil["decision"],
            "request": evil["request"],
            "response": evil["response"],
        }
    ]
    write_lines(project / "runs" / "evil.jsonl", [headers()[0], *recs[:2], evil])
    app = app_for(start_mode="history")
    async with app.run_test(size=(140, 30)) as pilot:
        await open_history(pilot, app, 3)
        await pilot.press("end", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
        detail = app.screen.query_one(AttemptDetail)
        await wait_for(pilot, lambda: detail.rec is not None)
        assert detail.toggle_turn()
        await pilot.pause()
        text = painted(app)
        assert "\x1b" not in text and CSI not in text and "\x07" not in text
        assert "repair [b]1[/b]\\x1b]0;TITLE\\x07" in text  # markup stays literal
        explained = str(app.screen.query_one("#detail-explain", Static).render())
        assert "feedback allowed\\x1b]0;TITLE\\x07\\x1b[2J\\x9b[bold]x[/bold]" in explained


async def test_no_feedback_is_named_none_in_the_facet_and_the_status(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    # hfix F7b: "5 match: feedback=?" for the attempts without repair turns
    recs = write_history(project)
    assert not any("feedback" in r for r in recs)
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))
        await pilot.press("f")
        await wait_for(pilot, lambda: bool(options(screen, "feedback")))
        assert options(screen, "feedback") == ["?"]  # the query's value is unchanged
        assert prompts(screen, "feedback") == [f"none  {len(recs)}"]
        screen.query_one("#f-feedback", SelectionList).select("?")
        await wait_for(pilot, lambda: screen.query_.feedback == {"?"})
        await wait_for(
            pilot,
            lambda: (
                "match: feedback=none" in str(screen.query_one("#history-status", Static).render())
            ),
        )
