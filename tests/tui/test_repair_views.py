"""Repair turns in the TUI: History steps through them as turns 2…n with the feedback
sent; the Report shows each feedback arm apart with its repair rates."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from textual.widgets import DataTable, Static, TextArea

from tests.support.tui import SIZE, cells, open_history, open_report, screen_rows, wait_for
from toolstand.run.runner import load_inputs, run
from toolstand.spec.config import parse_config
from toolstand.tui.app import ToolstandApp
from toolstand.tui.model.turns import attempt_turns, feedback_text, repair_lines
from toolstand.tui.screens.attempt import AttemptScreen
from toolstand.tui.widgets.attempt_detail import AttemptDetail

AppFor = Callable[..., ToolstandApp]
CASES = {"quote_complete", "quote_standard", "boundary_decimal_comma"}


async def write_repair_history(project: Path) -> list[dict[str, Any]]:
    """sim-sloppy on three quote cases, arms traceback and allowed, up to 3 repairs."""
    data = {
        "runs": [{"provider": "sim", "model": "sim-sloppy", "api": "openai-chat", "base_url": "sim"}],
        "system_prompt": "prompts/delivery-router-v1.txt",
        "tools": "contracts/delivery_tools.json",
        "cases": "cases/delivery.jsonl",
        "repetitions": 4,
        "parallelism": 1,
        "repair": {"max_repairs": 3, "feedback": ["traceback", "allowed"]},
        "sim": {"seed": 5},
    }  # fmt: skip
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", project), "cfg")
    out = project / "runs" / "fixture.jsonl"
    await run(inputs, out, only=CASES, progress_out=None)
    recs = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    return [r for r in recs if r["type"] == "attempt"]


def test_turns_in_conversation_order(project: Path) -> None:
    recs = asyncio.run(write_repair_history(project))
    rec = next(r for r in recs if len(r["repair_turns"]) >= 2)
    turns = attempt_turns(rec)
    n = len(rec["repair_turns"])
    assert [t.number for t in turns] == list(range(1, len(turns) + 1))
    assert turns[1].label == f"turn 2 · repair 1 · feedback {rec['feedback']}"
    assert [t.repair for t in turns[1 : n + 1]] == list(range(1, n + 1))
    lines = repair_lines(rec, turns[1])
    assert lines[0].startswith(f"repair ({rec['feedback']}): ")
    assert f"feedback sent before {turns[1].label}:" in lines
    sent = rec["repair_turns"][0]["tool_results"][0]["result"]
    assert all(f"    {line}" in lines for line in feedback_text(sent))
    plain = next(r for r in recs if not r["repair"]["needed"])
    assert len(attempt_turns(plain)) == 1 + (plain["second_turn"] is not None)


async def test_history_steps_through_repair_turns(app_for: AppFor, project: Path) -> None:
    recs = await write_repair_history(project)
    row = next(i for i, r in enumerate(recs) if r["repair_turns"] and r["feedback"] == "allowed")
    want = recs[row]
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        await open_history(pilot, app, len(recs))
        await pilot.press("home", *(["down"] * row), "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
        detail = app.screen.query_one(AttemptDetail)
        await wait_for(pilot, lambda: detail.rec is not None)
        assert detail.rec is not None
        assert (detail.rec["case_id"], detail.rec["attempt"], detail.rec["feedback"]) == (
            want["case_id"],
            want["attempt"],
            "allowed",
        )
        explained = str(app.screen.query_one("#detail-explain", Static).render())
        assert "repair (allowed): " in explained
        await pilot.press("t")  # turn 2: the first repair turn
        title = app.screen.query_one("#pane-raw").border_title
        # the feedback style is in the header: the title keeps what fits whole
        assert title == "raw response · turn 2 · repair 1"
        decision = app.screen.query_one("#detail-decision", TextArea).text
        assert orjson.loads(decision) == want["repair_turns"][0]["decision"]
        explained = str(app.screen.query_one("#detail-explain", Static).render())
        assert "feedback sent before turn 2" in explained and "422 INVALID_ARGUMENTS" in explained
        assert "allowed {" in explained
        for _ in range(len(attempt_turns(want)) - 1):
            await pilot.press("t")
        assert app.screen.query_one("#pane-raw").border_title == "raw response · turn 1"


async def test_a_repair_turn_s_panes_are_titled_whole_at_80x24(
    app_for: AppFor, project: Path
) -> None:
    # the titles read "raw response · turn 2 · repair 1 …" and "normalized decision ·
    # turn 2 · re…": cut by the border, their ends lost
    recs = await write_repair_history(project)
    row = next(i for i, r in enumerate(recs) if r["repair_turns"])
    app = app_for(start_mode="history")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_history(pilot, app, len(recs))
        await pilot.press("home", *(["down"] * row), "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
        detail = app.screen.query_one(AttemptDetail)
        await wait_for(pilot, lambda: detail.rec is not None)
        await pilot.press("t")  # the first repair turn
        await pilot.pause()
        rows = screen_rows(app)
        top = next(r for r in rows if "turn 2" in r and "╭" in r)
        assert "raw response · turn 2 · repair 1 ─" in top, top
        assert "decision · turn 2 · repair 1 ─" in top, top


async def test_report_shows_each_arm_with_its_repair_rates(app_for: AppFor, project: Path) -> None:
    await write_repair_history(project)
    app = app_for(start_mode="report")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_report(pilot, app)
        metrics = cells(screen.query_one("#metric-table", DataTable))
        assert [r[1] for r in metrics] == ["auto · traceback", "auto · allowed"]
        detail = str(screen.query_one("#metric-detail", Static).render())
        assert "repair turns · feedback traceback" in detail
        for label in ("1st valid", "repaired", "≤1 repair", "≤2 repairs", "≤3 repairs", "fallback"):
            assert f"\n{label} " in detail
        assert report_numbers(detail, "repaired") == report_numbers(detail, "≤3 repairs")
        await pilot.press("down")
        await wait_for(
            pilot,
            lambda: "feedback allowed" in str(screen.query_one("#metric-detail", Static).render()),
        )


def report_numbers(detail: str, label: str) -> str:
    line = next(x for x in detail.splitlines() if x.startswith(label + " "))
    return line.split()[-2]  # n/d


async def test_hostile_feedback_in_a_repair_turn_is_spelled_in_the_detail() -> None:
    from textual.app import App, ComposeResult

    evil = "x\x1b]0;pwned\x07\x9b2J\x7f"
    problem = {"status": 422, "code": "INVALID_ARGUMENTS", "detail": evil, "errors": [
        {"pointer": "/q", "received": evil, "message": evil, "allowed": [evil]},
    ]}  # fmt: skip
    turn = {
        "index": 1, "feedback": "allowed", "valid": False, "request": {"body": evil},
        "response": {"body": evil}, "decision": {"kind": evil},
        "tool_results": [{"name": evil, "call_id": evil, "result": {"error": problem}}],
        "judgement": {"verdict": "fail", "errors": [{"code": "schema", "path": evil}]},
    }  # fmt: skip
    rec = {
        "case_id": evil, "provider": "sim", "model": evil, "feedback": "allowed",
        "judgement": {"verdict": "fail", "errors": []}, "repair_turns": [turn],
        "repair": {"needed": True, "passed_after": None, "turns": 1},
    }  # fmt: skip

    class DetailApp(App[None]):
        def compose(self) -> ComposeResult:
            yield AttemptDetail()

    app = DetailApp()
    async with app.run_test(size=SIZE) as pilot:
        detail = app.query_one(AttemptDetail)
        detail.show(rec)
        detail.toggle_turn()  # the repair turn, with the feedback sent before it
        await pilot.pause()
        explained = str(detail.query_one("#detail-explain", Static).render())
        assert "feedback sent before turn 2" in explained
        shown = [
            explained,
            str(detail.query_one("#detail-head", Static).render()),
            detail.query_one("#detail-raw", TextArea).text,
            detail.query_one("#detail-decision", TextArea).text,
        ]
        for text in shown:
            assert not any((ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F for c in text)
        assert "x\\x1b]0;pwned\\x07\\x9b2J\\x7f" in explained
