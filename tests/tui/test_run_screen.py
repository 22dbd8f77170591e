from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static, TextArea

from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.modals import PasteModal
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.case_list import CaseTable
from toolstand.tui.widgets.step_panel import StepPanel

from .conftest import SIZE, type_into, wait_for, write_config

AppFor = Callable[..., ToolstandApp]


def status(app: ToolstandApp) -> str:
    return str(app.screen.query_one("#run-status", Static).render())


def verdict(app: ToolstandApp) -> str:
    return str(app.screen.query_one("#verdict-text", Static).render())


def records(project: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted((project / "runs").glob("live-*.jsonl")):
        out += [orjson.loads(line) for line in path.read_bytes().splitlines()]
    return out


async def open_run(
    pilot: Pilot[Any], app: ToolstandApp, case_id: str, run: int = 0, mode: str = "auto"
) -> None:
    app.selected_case_id = case_id
    await pilot.press("f2")
    await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
    await pilot.pause()
    app.screen.query_one("#run-target", Select).value = run
    app.screen.query_one("#run-mode", Select).value = mode
    assert app.screen.query_one("#run-case", Select).value == case_id


async def test_live_run_steps_into_turn_two_with_an_edited_result(
    app_for: AppFor, project: Path
) -> None:
    seen: list[str] = []
    kept: list[Message] = []

    def hook(message: Message) -> None:
        # a bubbling message reaches the hook once per node it visits
        if any(m is message for m in kept):
            return
        kept.append(message)
        if isinstance(message, RunScreen.TurnDone):
            seen.append("turn 2 done" if message.state.second else "turn 1 done")
        elif isinstance(message, RunScreen.Recorded):
            seen.append("recorded")

    app = app_for()
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await open_run(pilot, app, "recovery_lookup_ok")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "ctrl+t sends turn 2" in status(app))
        assert "PASS" in verdict(app)
        assert records(project) == []  # the attempt is not over yet

        panel = app.screen.query_one(StepPanel)
        assert [c.name for c in panel.calls] == ["get_order"]
        area = panel.query_one("#result-0", TextArea)
        assert orjson.loads(area.text)["ok"] is True  # the executor's default
        edited = {"ok": False, "error": {"code": "ORDER_LOCKED", "retryable": False}}
        await type_into(
            pilot, area, '{"ok":false,"error":{"code":"ORDER_LOCKED","retryable":false}}'
        )
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "recorded in" in status(app))
        assert "turn 2" in status(app)
        assert app.screen.query_one("#turns").query_one("#turn-1").display
        assert "ORDER_LOCKED" in verdict(app)  # the results sent, shown with turn 2

        await pilot.press("left_square_bracket")  # back to turn 1 on the timeline
        assert "verdict · pass · turn 1" in str(app.screen.query_one("#pane-verdict").border_title)

    assert seen == ["turn 1 done", "turn 2 done"]
    lines = records(project)
    assert [r["type"] for r in lines] == ["run", "attempt"]
    header, rec = lines
    assert rec["run_id"] == header["run_id"]
    assert (rec["case_id"], rec["model"], rec["mode"], rec["attempt"]) == (
        "recovery_lookup_ok",
        "sim-careful",
        "auto",
        1,
    )
    second = rec["second_turn"]
    assert second["tool_results"][0]["name"] == "get_order"
    assert second["tool_results"][0]["result"] == edited
    sent = orjson.dumps(second["request"]["body"]).decode()
    assert "ORDER_LOCKED" in sent  # what the model saw is what was edited
    assert second["judgement"]["verdict"] in ("pass", "fail")
    assert "authorization" not in {k.lower() for k in rec["request"]["headers"]}


async def test_a_case_without_followup_is_recorded_at_once(app_for: AppFor, project: Path) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "missing_id", run=1)  # sim-eager over the anthropic API
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "recorded in" in status(app))
        assert not app.screen.query_one(StepPanel).is_open
        rec = records(project)[-1]
        assert (rec["case_id"], rec["api"], rec["second_turn"]) == ("missing_id", "anthropic", None)
        await pilot.press("f1")  # the case list now shows this attempt's verdict
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        await pilot.pause()
        table = app.screen.query_one(CaseTable)
        row = table.get_row(str(rec_line(project, "missing_id")))
        assert str(row[3]) == {"pass": "pass", "fail": "FAIL"}[rec["judgement"]["verdict"]]


def rec_line(project: Path, case_id: str) -> int:
    for n, line in enumerate((project / "cases" / "delivery.jsonl").read_text().split("\n"), 1):
        if f'"id":"{case_id}"' in line:
            return n
    raise AssertionError(case_id)


async def test_escape_cancels_a_slow_request(app_for: AppFor, project: Path) -> None:
    write_config(
        project,
        sim={"seed": 7, "latency_s": 30, "retry_after_s": 0},
        timeouts={"connect_s": 5, "read_s": 60},
    )
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "direct_lookup")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "waiting" in status(app))
        await pilot.pause(0.3)
        assert "Esc cancels" in status(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "cancelled after" in status(app))
        assert isinstance(app.screen, RunScreen) and not app.screen.busy
    assert [r for r in records(project) if r["type"] == "attempt"] == []


PASTED_CALL = {
    "id": "chatcmpl-pasted",
    "object": "chat.completion",
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "cancel_order",
                            "arguments": '{"order_id":"ORD-654321","reason":"changed_mind"}',
                        },
                    }
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5},
}


async def paste(pilot: Pilot[Any], app: ToolstandApp, status_code: str, body: str) -> None:
    await pilot.press("ctrl+o")
    await wait_for(pilot, lambda: isinstance(app.screen, PasteModal))
    app.screen.query_one("#paste-status", Input).value = status_code
    app.screen.query_one("#paste-body", TextArea).load_text(body)
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
    await pilot.pause()


async def test_a_pasted_body_is_judged_like_a_live_answer(app_for: AppFor, project: Path) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "cancel_implicit")
        await paste(pilot, app, "200", orjson.dumps(PASTED_CALL).decode())
        shown = verdict(app)
        assert shown.startswith("FAIL")
        assert "unexpected_call" in shown and "unsafe_call" in shown
        assert "not recorded" in status(app)
        decision = app.screen.query_one("#decision-body", TextArea).text
        assert orjson.loads(decision)["calls"][0]["name"] == "cancel_order"

        await paste(
            pilot, app, "429", '{"error": {"message": "Rate limit reached", "type": "requests"}}'
        )
        shown = verdict(app)
        assert shown.startswith("TRANSPORT ERROR") and "rate_limited" in shown
    assert records(project) == []  # pasted bodies are not live attempts


async def test_a_body_loaded_from_a_file_keeps_its_text(app_for: AppFor, project: Path) -> None:
    page = project / "bad_gateway.html"
    page.write_text("<html><body><h1>502 Bad Gateway</h1></body></html>")
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "direct_lookup")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, PasteModal))
        app.screen.query_one("#paste-status", Input).value = "502"
        app.screen.query_one("#paste-file", Input).value = str(page)
        await pilot.press("ctrl+l")
        await wait_for(
            pilot, lambda: "Bad Gateway" in app.screen.query_one("#paste-body", TextArea).text
        )
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        await pilot.pause()
        shown = verdict(app)
        assert shown.startswith("TRANSPORT ERROR") and "server_error" in shown
        raw = app.screen.query_one("#response-body", TextArea)
        assert raw.text.startswith("<html>")  # shown as the text it was, not as JSON


async def test_an_attempt_left_before_turn_two_is_recorded_as_it_stood(
    app_for: AppFor, project: Path
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "recovery_not_found")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "ctrl+t sends turn 2" in status(app))
        assert records(project) == []
        await pilot.press("ctrl+g")  # run again instead of sending turn 2
        await wait_for(pilot, lambda: "ctrl+t sends turn 2" in status(app))
        left = [r for r in records(project) if r["type"] == "attempt"]
        assert [(r["attempt"], r["second_turn"]) for r in left] == [(1, None)]
    # quitting with the second attempt half-way records it too
    after = [r for r in records(project) if r["type"] == "attempt"]
    assert [(r["attempt"], r["second_turn"]) for r in after] == [(1, None), (2, None)]
    assert sum(r["type"] == "run" for r in records(project)) == 1
