"""The Report screen for configs with categories and at 80 columns (issue 30): a
Categories tab with the highlighted group per category, the Errors count in sight at
80×24, and the stream arms of a group told apart."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable, Static, TabbedContent

from tests.support.records import attempt, err, header, judgement, transport, write_jsonl
from tests.support.tui import SIZE, cells, open_report, settle
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.report import ReportScreen

AppFor = Callable[..., ToolstandApp]
CASES = (("s1", "simple"), ("s2", "simple"), ("m1", "multiple"), ("x", None))
MODELS = {"sim-careful": (True, True, True, True), "sim-eager": (True, False, False, True)}


def screen_text(app: ToolstandApp) -> list[str]:
    """The screen as drawn, one string a row."""
    return ["".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips()]


def arm(rec: dict[str, Any], stream: bool) -> dict[str, Any]:
    """The attempt with its stream arm just before second_turn, where the runner puts it."""
    out: dict[str, Any] = {}
    for key, value in rec.items():
        if key == "second_turn":
            out["stream"] = stream
        out[key] = value
    return out


async def show_tab(pilot: Pilot[Any], screen: ReportScreen, tab: str) -> None:
    screen.query_one("#report-tabs", TabbedContent).active = tab
    await settle(pilot)


async def test_the_categories_tab_pools_the_highlighted_group_per_category(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    fail = judgement(errors=[err("argument_mismatch")], exact_correct=0)
    runs = [{"provider": "sim", "model": m, "api": "openai-chat"} for m in MODELS]
    recs = [header(runs=runs)]
    for model, verdicts in MODELS.items():
        for (cid, category), passed in zip(CASES, verdicts, strict=True):
            rec = attempt(cid, model=model, j=None if passed else fail)
            recs.append({**rec, "category": category})
    write_jsonl(project / "runs" / "bfcl.jsonl", recs)
    app = app_for(start_mode="report")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_report(pilot, app)
        await show_tab(pilot, screen, "tab-categories")
        for model, want in (
            ("sim-careful", [["multiple", "1", "100.0%"], ["simple", "2", "100.0%"],
                             ["(none)", "1", "100.0%"]]),
            ("sim-eager", [["multiple", "1", "0.0%"], ["simple", "2", "50.0%"],
                           ["(none)", "1", "100.0%"]]),
        ):  # fmt: skip
            title = str(screen.query_one("#categories-title", Static).render())
            assert f"sim/{model} (simulated) · auto: 3 categories" in title
            table = cells(screen.query_one("#category-table", DataTable))
            assert [[r[0], r[1].strip(), r[2].split()[-1]] for r in table] == want
            await show_tab(pilot, screen, "tab-metrics")
            screen.query_one("#metric-table", DataTable).focus()
            await pilot.press("down")
            await show_tab(pilot, screen, "tab-categories")


async def test_a_history_without_categories_says_so(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = [header(), *({**attempt(c), "category": None} for c in ("a", "b"))]
    write_jsonl(project / "runs" / "plain.jsonl", recs)
    app = app_for(start_mode="report")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_report(pilot, app)
        await show_tab(pilot, screen, "tab-categories")
        title = str(screen.query_one("#categories-title", Static).render())
        assert title.endswith("its cases name no category")
        assert screen.query_one("#category-table", DataTable).row_count == 0


async def test_the_errors_count_shows_at_80_columns_and_the_stream_arms_apart(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    long: dict[str, Any] = {
        "provider": "sim-anthropic-eu-west",
        "model": "sim-streambug-2026-12-01",
    }
    bad = judgement(errors=[err("invalid_arguments", "additional_property")], calls_schema_valid=0)
    recs = [
        header(runs=[{**long, "api": "anthropic", "simulated": True}]),
        arm(attempt("a", j=bad, **long), False),
        arm(attempt("a", j=bad, **long), True),
        arm(attempt("b", j=bad, **long), True),
        arm(attempt("c", transport_error=transport("stream_interrupted"), **long), True),
    ]
    write_jsonl(project / "runs" / "long.jsonl", recs)
    app = app_for(start_mode="report")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_report(pilot, app)
        metrics = cells(screen.query_one("#metric-table", DataTable))
        assert [r[1] for r in metrics] == ["auto", "auto · streamed"]
        await show_tab(pilot, screen, "tab-errors")
        rows = cells(screen.query_one("#error-table", DataTable))
        name = "sim-anthropic-eu-west/sim-streambug-2026-12-01 (simulated)"
        assert rows == [
            ["2", "invalid_arguments.additional_property", "auto · streamed", name],
            ["1", "invalid_arguments.additional_property", "auto", name],
            ["1", "transport.stream_interrupted", "auto · streamed", name],
        ]
        drawn = [line.split() for line in screen_text(app)]
        for count, code, _, _ in rows:  # the count drawn beside its code
            assert any(t[t.index(code) - 1] == count for t in drawn if code in t), code
