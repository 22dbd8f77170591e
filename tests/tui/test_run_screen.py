from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import orjson
import pytest
from textual.message import Message
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, OptionList, Select, Static, TextArea

from tests.support.tui import (
    PASTED_CALL,
    SIZE,
    attempts,
    held_sim_replies,
    on_run,
    open_run,
    records,
    screen_rows,
    shown,
    status,
    turn_one,
    type_into,
    wait_for,
    write_config,
)
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.modals import PasteModal
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.case_list import CaseTable
from toolstand.tui.widgets.step_panel import StepPanel

AppFor = Callable[..., ToolstandApp]


def verdict(app: ToolstandApp) -> str:
    return str(app.screen.query_one("#verdict-text", Static).render())


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

    app = on_run(app_for, "recovery_lookup_ok")
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await turn_one(pilot, app, "recovery_lookup_ok")
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
    app = app_for()  # on Cases: its list, built before the run, takes the new verdict
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
        assert (
            str(row[table.get_column_index("last")])
            == {"pass": "pass", "fail": "FAIL"}[rec["judgement"]["verdict"]]
        )


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
    app = on_run(app_for, "direct_lookup")
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "direct_lookup")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "waiting" in status(app))
        await pilot.pause()
        assert "Esc cancels" in status(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "cancelled after" in status(app))
        assert isinstance(app.screen, RunScreen) and not app.screen.busy
    assert [r for r in records(project) if r["type"] == "attempt"] == []


async def open_paste(pilot: Pilot[Any], app: ToolstandApp) -> None:
    """ctrl+o, once the offline judge's dialog is up."""
    await pilot.press("ctrl+o")
    await wait_for(pilot, lambda: isinstance(app.screen, PasteModal))


async def close_paste(pilot: Pilot[Any], app: ToolstandApp) -> None:
    """ctrl+s in the dialog, once the Run screen shows what was judged."""
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
    await pilot.pause()


async def paste(pilot: Pilot[Any], app: ToolstandApp, status_code: str, body: str) -> None:
    await open_paste(pilot, app)
    app.screen.query_one("#paste-status", Input).value = status_code
    app.screen.query_one("#paste-body", TextArea).load_text(body)
    await close_paste(pilot, app)


async def test_a_pasted_body_is_judged_like_a_live_answer(app_for: AppFor, project: Path) -> None:
    app = on_run(app_for, "cancel_implicit")
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
    app = on_run(app_for, "direct_lookup")
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "direct_lookup")
        await open_paste(pilot, app)
        app.screen.query_one("#paste-status", Input).value = "502"
        app.screen.query_one("#paste-file", Input).value = str(page)
        await pilot.press("ctrl+l")
        await wait_for(
            pilot, lambda: "Bad Gateway" in app.screen.query_one("#paste-body", TextArea).text
        )
        await close_paste(pilot, app)
        shown = verdict(app)
        assert shown.startswith("TRANSPORT ERROR") and "server_error" in shown
        raw = app.screen.query_one("#response-body", TextArea)
        assert raw.text.startswith("<html>")  # shown as the text it was, not as JSON


async def test_an_attempt_left_before_turn_two_is_recorded_as_it_stood(
    app_for: AppFor, project: Path
) -> None:
    app = on_run(app_for, "recovery_not_found")
    async with app.run_test(size=SIZE) as pilot:
        await turn_one(pilot, app, "recovery_not_found")
        assert records(project) == []
        await pilot.press("ctrl+g")  # run again instead of sending turn 2
        await wait_for(pilot, lambda: "ctrl+t sends turn 2" in status(app))
        left = [r for r in records(project) if r["type"] == "attempt"]
        assert [(r["attempt"], r["second_turn"]) for r in left] == [(1, None)]
    # quitting with the second attempt half-way records it too
    after = [r for r in records(project) if r["type"] == "attempt"]
    assert [(r["attempt"], r["second_turn"]) for r in after] == [(1, None), (2, None)]
    assert sum(r["type"] == "run" for r in records(project)) == 1


async def pick_in_cases(pilot: Pilot[Any], app: ToolstandApp, project: Path, case_id: str) -> None:
    """On the Cases screen, move the list's cursor onto ``case_id``: set beside it by call,
    then one key onto it, as a user's last step (the tests here are about the case chosen,
    not about walking the list; a key per row cost a second of 27 renders)."""
    table = app.screen.query_one(CaseTable)
    table.focus()
    await pilot.pause()
    target = rec_line(project, case_id)
    row = table.get_row_index(str(target))
    beside = row - 1 if row > 0 else row + 1
    table.move_cursor(row=beside)
    await pilot.pause()
    assert table.current_line != target and app.selected_case_id != case_id
    await pilot.press("down" if beside < row else "up")
    assert table.current_line == target
    await wait_for(pilot, lambda: app.selected_case_id == case_id)


async def test_turn_two_is_sent_only_for_the_case_it_continues(
    app_for: AppFor, project: Path
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        await pick_in_cases(pilot, app, project, "recovery_lookup_ok")
        await pilot.press("ctrl+g")  # Cases: run it
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        await wait_for(pilot, lambda: "ctrl+t sends turn 2" in status(app))

        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        await pilot.press("escape")
        await pick_in_cases(pilot, app, project, "direct_lookup")
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        await wait_for(pilot, lambda: not app.screen.query_one(StepPanel).is_open)
        assert app.screen.query_one("#run-case", Select).value == "direct_lookup"
        assert "Run a case" in verdict(app)  # the old exchange is gone, not relabelled
        assert app.screen.query_one("#request-body", TextArea).text == ""
        assert "direct_lookup chosen" in status(app)
        await wait_for(pilot, lambda: len(attempts(project)) == 1)
        await pilot.press("ctrl+t")  # nothing to continue: no turn 2 for direct_lookup
        await pilot.pause()
        assert "turn 2" not in status(app)
    recs = attempts(project)
    # the left attempt was recorded as it stood, under its own case, and only once
    assert [(r["case_id"], r["second_turn"]) for r in recs] == [("recovery_lookup_ok", None)]


async def test_a_turn_that_comes_back_after_the_case_changed_is_not_shown(
    app_for: AppFor, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = on_run(app_for, "recovery_not_found")
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "recovery_not_found")
        with held_sim_replies(monkeypatch) as release:
            await pilot.press("ctrl+g")
            await shown(pilot, lambda: "waiting" in status(app))
            app.screen.query_one("#run-case", Select).value = "direct_lookup"  # while it runs
            await pilot.pause()
            assert "turn 1 · recovery_not_found" in status(app)  # the running turn, labelled
            release.set()
        await wait_for(pilot, lambda: "came back" in status(app))
        assert "recovery_not_found came back" in status(app)
        assert not app.screen.query_one(StepPanel).is_open
        assert "Run a case" in verdict(app)
        await wait_for(pilot, lambda: len(attempts(project)) == 1)
    assert [(r["case_id"], r["second_turn"]) for r in attempts(project)] == [
        ("recovery_not_found", None)
    ]


async def test_latency_is_network_time_not_editing_time(
    app_for: AppFor, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from toolstand.reporting.metrics import compute_files

    app = on_run(app_for, "recovery_lookup_ok")
    async with app.run_test(size=SIZE) as pilot:
        await turn_one(pilot, app, "recovery_lookup_ok")
        real = time.perf_counter
        monkeypatch.setattr(time, "perf_counter", lambda: real() + 600.0)  # 10 min editing
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "recorded in" in status(app))
    (rec,) = attempts(project)
    second = rec["second_turn"]["elapsed_ms"]
    assert rec["elapsed_ms"] < 60_000
    assert rec["elapsed_ms"] == pytest.approx(rec["tries"][0]["elapsed_ms"] + second, abs=1.0)
    # the report's latency is taken over the same network time
    (path,) = (project / "runs").glob("live-*.jsonl")
    latency = compute_files([path]).groups[0].latency()
    assert latency["max"] == pytest.approx(rec["elapsed_ms"])


async def test_the_status_describes_the_turn_shown(app_for: AppFor, project: Path) -> None:
    app = on_run(app_for, "recovery_lookup_ok")
    async with app.run_test(size=SIZE) as pilot:
        await turn_one(pilot, app, "recovery_lookup_ok")
        area = app.screen.query_one(StepPanel).query_one("#result-0", TextArea)
        await type_into(pilot, area, '{"ok":false,"error":{"code":"ROUTE_UNAVAILABLE"}}')
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "recorded in" in status(app))
        assert status(app).startswith("turn 2 of recovery_lookup_ok · verdict fail")
        app.screen.query_one("#request-body", TextArea).focus()
        await pilot.press("left_square_bracket")
        assert status(app).startswith("turn 1 of recovery_lookup_ok · verdict pass")
        assert "recorded in" in status(app)
        await pilot.press("right_square_bracket")
        assert status(app).startswith("turn 2 of recovery_lookup_ok · verdict fail")

        app.screen.query_one("#run-case", Select).value = "irrelevant_weather"
        app.screen.query_one("#run-mode", Select).value = "forced"
        await pilot.pause()
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert "mode forced runs only cases that expect a call" in status(app)
        assert "Run a case" in verdict(app)  # no old panels reading "verdict · pass"
        assert str(app.screen.query_one("#pane-verdict").border_title) == "verdict"
    # the edited failure reached the simulator: its answer did not claim the order's city
    (rec,) = attempts(project)
    text = rec["second_turn"]["decision"]["text"]
    assert "ROUTE_UNAVAILABLE" in text and "Самар" not in text
    assert [e["code"] for e in rec["second_turn"]["judgement"]["errors"]] == ["recovery_mismatch"]


async def test_the_request_opens_at_the_users_turn(app_for: AppFor, project: Path) -> None:
    app = on_run(app_for, "recovery_lookup_ok")
    async with app.run_test(size=(80, 24)) as pilot:
        await turn_one(pilot, app, "recovery_lookup_ok")
        await pilot.pause()
        area = app.screen.query_one("#request-body", TextArea)
        top = area.scroll_offset.y
        assert top > 0  # not the system prompt at the top
        line = area.cursor_location[0]
        assert '"role": "user"' in area.document.get_line(line + 1)
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "recorded in" in status(app))
        await pilot.pause()
        # turn 2 opens at the same user turn, the call and the tool result below it
        after = area.text.split("\n")[area.cursor_location[0] :]
        assert '"role": "user"' in after[1] and any('"role": "tool"' in a for a in after)
        assert area.scroll_offset.y > 0


def on_screen(app: ToolstandApp, widget: Widget) -> bool:
    """The widget is drawn where it is: not scrolled away or covered."""
    region = widget.region
    if not region.height:
        return False
    hit, _ = app.screen.get_widget_at(region.x, region.y)
    return hit is widget or widget in hit.ancestors


async def test_keys_reach_the_results_editor_and_canned_list_at_80x24(
    app_for: AppFor, project: Path
) -> None:
    app = on_run(app_for, "recovery_retryable_problem")
    async with app.run_test(size=(80, 24)) as pilot:
        await turn_one(pilot, app, "recovery_retryable_problem")  # a long problem object
        await pilot.pause()
        panel = app.screen.query_one(StepPanel)
        canned = panel.query_one("#canned-0", Select)
        editor = panel.query_one("#result-0", TextArea)
        assert on_screen(app, canned) and on_screen(app, editor)
        app.screen.query_one("#request-body", TextArea).focus()
        await pilot.press("ctrl+r")
        assert app.focused is editor
        # the editor keeps its own f6 (select the line): the headers are a body pane's
        await pilot.press("f6")
        assert not editor.selection.is_empty
        assert not str(app.screen.query_one("#pane-request").border_title).startswith("headers")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert canned.expanded and canned in (app.focused, *app.focused.ancestors)
        overlay = cast(OptionList, app.focused)
        # each canned result whole on its line, above its picker (in the picker's 29
        # cells they took 2-3 lines each, in a list that sank over the footer)
        names = [str(overlay.get_option_at_index(i).prompt) for i in range(overlay.option_count)]
        rows = screen_rows(app)
        assert len(names) == 7 and all(any(n in row for row in rows) for n in names), rows
        assert overlay.region.bottom <= canned.region.y
        while overlay.highlighted != 1:  # the first canned result, under the prompt
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert orjson.loads(editor.text) == {"ok": True, "status": "in_transit", "city": "Самара"}
        await pilot.pause()
        assert on_screen(app, canned)  # still in view


def chat_call(name: str, arguments: str) -> str:
    body = orjson.loads(orjson.dumps(PASTED_CALL))
    body["choices"][0]["message"]["tool_calls"][0]["function"] = {
        "name": name,
        "arguments": arguments,
    }
    return orjson.dumps(body).decode()


async def test_the_offline_judge_names_and_lets_the_user_pick_api_and_case(
    app_for: AppFor, project: Path
) -> None:
    app = on_run(app_for, "cancel_implicit")
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "cancel_implicit")
        await open_paste(pilot, app)
        modal = app.screen
        target, case = (
            modal.query_one("#paste-target", Select),
            modal.query_one("#paste-case", Select),
        )
        assert (target.value, case.value) == (0, "cancel_implicit")  # the bar's choice
        shown = target.query_one("SelectCurrent Static#label", Static)
        assert "openai-chat" in str(shown.render())  # the API it judges against
        case.value = "direct_lookup"
        modal.query_one("#paste-body", TextArea).load_text(
            chat_call("get_order", '{"order_id":"ORD-123456"}')
        )
        await close_paste(pilot, app)
        assert verdict(app).startswith("PASS")  # judged against the case picked
        assert app.screen.query_one("#run-case", Select).value == "direct_lookup"
        assert status(app).startswith("pasted of direct_lookup · verdict pass")
        assert "judged as openai-chat · not recorded" in status(app)


async def test_the_offline_judge_takes_the_status_from_an_error_body(
    app_for: AppFor, project: Path
) -> None:
    app = on_run(app_for, "direct_lookup")
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "direct_lookup")
        await open_paste(pilot, app)
        app.screen.query_one("#paste-body", TextArea).load_text(
            '{"error": {"message": "Rate limit reached", "type": "requests"}}'
        )
        await pilot.pause()
        assert app.screen.query_one("#paste-status", Input).value == "429"
        await close_paste(pilot, app)
        assert verdict(app).startswith("TRANSPORT ERROR") and "rate_limited" in verdict(app)


async def test_the_offline_judge_keeps_its_fields_between_openings(
    app_for: AppFor, project: Path
) -> None:
    app = on_run(app_for, "direct_lookup")
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "direct_lookup")
        await open_paste(pilot, app)
        app.screen.query_one("#paste-status", Input).value = "503"
        app.screen.query_one("#paste-file", Input).value = "bodies/x.json"
        app.screen.query_one("#paste-case", Select).value = "missing_id"
        app.screen.query_one("#paste-target", Select).value = 1
        app.screen.query_one("#paste-body", TextArea).load_text('{"not": "yet"}')
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        await open_paste(pilot, app)
        await pilot.pause()
        q = app.screen.query_one
        assert q("#paste-status", Input).value == "503"  # typed: the body does not change it
        assert q("#paste-file", Input).value == "bodies/x.json"
        assert q("#paste-body", TextArea).text == '{"not": "yet"}'
        assert (q("#paste-case", Select).value, q("#paste-target", Select).value) == (
            "missing_id",
            1,
        )
        q("#paste-body", TextArea).load_text('{"error": {"type": "rate_limit_error"}}')
        await pilot.pause()
        assert q("#paste-status", Input).value == "503"  # still the user's, after reopening


async def test_a_call_to_a_tool_in_no_contract_is_an_unknown_tool(
    app_for: AppFor, project: Path
) -> None:
    app = on_run(app_for, "irrelevant_weather")
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "irrelevant_weather")
        await paste(pilot, app, "200", chat_call("list_files", "{}"))
        assert "call 0: list_files" in verdict(app)
        assert "unknown tool (not in the contract)" in verdict(app)


async def test_outside_strings_on_the_run_screen_have_control_characters_spelled(
    app_for: AppFor, project: Path
) -> None:
    app = on_run(app_for, "irrelevant_weather")
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "irrelevant_weather")
        await paste(pilot, app, "200", chat_call("evil\x1b]0;pwned\x07", "{}"))
        shown = verdict(app)
        assert "\x1b" not in shown and "\x07" not in shown
        assert "evil\\x1b]0;pwned\\x07" in shown
        await paste(pilot, app, "502", "<h1>502 [bold]Bad[/bold] Gateway\x1b[2J</h1>")
        raw = app.screen.query_one("#response-body", TextArea).text
        assert raw == "<h1>502 [bold]Bad[/bold] Gateway\\x1b[2J</h1>"  # markup kept literal


async def test_del_and_c1_in_a_json_body_are_spelled_in_the_run_panes(
    app_for: AppFor, project: Path
) -> None:
    # orjson escapes C0 in strings but leaves DEL and C1 (\x9b is a one-byte CSI) as they are
    app = on_run(app_for, "irrelevant_weather")
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "irrelevant_weather")
        await paste(pilot, app, "200", chat_call("evil\x9b2J\x7f", '{"q": "\x9b0m"}'))
        for pane in ("#response-body", "#decision-body"):
            text = app.screen.query_one(pane, TextArea).text
            assert "\x9b" not in text and "\x7f" not in text
            assert "evil\\x9b2J\\x7f" in text


async def test_a_turn_shown_again_opens_at_the_users_turn_in_the_same_frame(
    app_for: AppFor, project: Path
) -> None:
    # the request pane scrolled to the user's turn only after a refresh: the screen was
    # drawn once at the system prompt and once more at the user's turn
    app = on_run(app_for, "recovery_lookup_ok")
    async with app.run_test(size=(80, 24)) as pilot:
        await turn_one(pilot, app, "recovery_lookup_ok")
        await pilot.pause()
        area = app.screen.query_one("#request-body", TextArea)
        line, top = area.cursor_location[0], area.scroll_offset.y
        assert line > 0 and top > 0
        area.move_cursor((0, 0))
        area.scroll_home(animate=False)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        screen.action_step_turn(0)  # the turn shown again, as the turn tabs do
        assert (area.cursor_location[0], area.scroll_offset.y) == (line, top)


async def test_an_app_started_on_run_shows_the_case_chosen_before_it(app_for: AppFor) -> None:
    # what the Run tests start from (on_run): the case read when the screen is first
    # shown, not the file's first; no Cases screen built on the way
    app = on_run(app_for, "recovery_not_found")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        await pilot.pause()
        assert app.screen.query_one("#run-case", Select).value == "recovery_not_found"
        assert app.built_modes == {"run"}
