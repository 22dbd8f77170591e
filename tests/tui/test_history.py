"""History workflows with Pilot, over a fixture history written with fixed dates: two
models over two days, judged by the real adapter and judge (so re-judging agrees)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, SelectionList, Static, TextArea

from tests.support.tui import SIZE, open_history, screen_after, screen_of, wait_for
from tests.support.tui_history import DAYS, fixture_records, write_history, write_records
from toolstand.spec.cases import load_cases
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens import history as history_screen
from toolstand.tui.screens.attempt import AttemptScreen, DiffScreen
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.history_actions import promoted_case
from toolstand.tui.widgets.attempt_detail import AttemptDetail
from toolstand.tui.widgets.attempt_diff import AttemptDiff
from toolstand.tui.widgets.attempt_list import AttemptList
from toolstand.tui.widgets.case_form import CaseForm

AppFor = Callable[..., ToolstandApp]


def listed(screen: HistoryScreen) -> list[int]:
    lst = screen.query_one(AttemptList)
    assert screen.index is not None
    return list(range(screen.index.rows)) if lst.view is None else list(lst.view)


async def test_triage_yesterdays_failures_diff_and_promote(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    cases_path = project / "cases" / "delivery.jsonl"
    before = cases_path.read_bytes()
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))
        assert screen.path is not None and screen.path.endswith("fixture.jsonl")
        # yesterday's failures of one model, chosen with the keyboard
        await pilot.press("f")  # the filter panel; the verdict list has focus
        await pilot.pause()
        bar = screen.query_one("#history-filters")
        verdicts = bar.query_one("#f-verdict", SelectionList)
        assert verdicts.has_focus
        await pilot.press("down", "space")  # pass, [fail], error
        bar.query_one("#f-model", SelectionList).select("sim-eager")
        await pilot.press("T", "T")  # time: any -> today -> yesterday
        want = [
            i for i, r in enumerate(recs)
            if r["model"] == "sim-eager" and r["started_at"].startswith(DAYS[0])
            and r["judgement"]["verdict"] == "fail"
        ]  # fmt: skip
        assert len(want) == 4  # missing_id and cancel_implicit, twice each
        await wait_for(
            pilot, lambda: screen.result is not None and list(screen.result.rows) == want
        )
        await wait_for(pilot, lambda: listed(screen) == want)
        assert screen.query_.verdict == {"fail"} and screen.query_.days == (date(2026, 11, 27),) * 2
        # the counts beside each value: the sim-eager rows of yesterday, by verdict
        assert screen.result is not None
        assert screen.result.counts["verdict"] == {"pass": 2, "fail": 4}
        # open the last one: cancel_implicit, an unsafe call
        await pilot.press("escape", "end", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
        detail = app.screen.query_one(AttemptDetail)
        await wait_for(pilot, lambda: detail.rec is not None)
        assert detail.rec is not None and detail.rec["case_id"] == "cancel_implicit"
        decision = app.screen.query_one("#detail-decision", TextArea)
        assert '"name": "cancel_order"' in decision.text
        raw = app.screen.query_one("#detail-raw", TextArea)
        assert '"finish_reason": "tool_calls"' in raw.text
        explained = str(app.screen.query_one("#detail-explain").render())
        assert "unsafe_call" in explained and "expected" in explained
        await pilot.press("r")  # the request instead of the raw response
        assert '"url": "http://sim/v1/chat/completions"' in raw.text
        await pilot.press("m", "escape")  # mark it, back to the list
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        failing = want[-1]
        assert screen.marked == failing
        # the other model's attempt of the same case, yesterday
        bar.query_one("#f-model", SelectionList).deselect_all()
        bar.query_one("#f-model", SelectionList).select("sim-careful")
        verdicts.deselect_all()
        bar.query_one("#f-text", Input).value = "cancel_implicit"
        other = next(
            i for i, r in enumerate(recs)
            if r["model"] == "sim-careful" and r["case_id"] == "cancel_implicit"
            and r["started_at"].startswith(DAYS[0])
        )  # fmt: skip
        await wait_for(pilot, lambda: listed(screen)[:1] == [other])
        diff = await screen_after(pilot, DiffScreen, "escape", "home", "d")
        await wait_for(pilot, lambda: bool(diff.rows))
        fields = {r.field: r for r in diff.rows}
        assert fields["model"].a == "sim-eager" and fields["model"].b == "sim-careful"
        assert not fields["kind"].same and fields["kind"].a == "tool_call"
        assert fields["call 0 name"].a == "cancel_order" and fields["call 0 name"].b == "—"
        assert fields["case_id"].same
        # each side is wide enough to read its values (cut only past half the screen)
        table = diff.query_one(AttemptDiff)
        width = {str(k.value): c.get_render_width(table) for k, c in table.columns.items()}
        assert width["field"] >= len("call 0 name") + 2
        assert width["a"] >= len("cancel_order") + 2 and width["b"] >= len("sim-careful") + 2
        assert width["a"] + width["b"] + width["field"] <= SIZE[0]
        # back, to the marked failure, and promote it to a new case
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await pilot.press("x")  # clear the filters: every row again
        await wait_for(pilot, lambda: listed(screen) == list(range(len(recs))))
        screen.query_one(AttemptList).cursor = failing
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        form = app.screen.query_one(CaseForm)
        await wait_for(pilot, lambda: form.query_one("#f-id", Input).value.startswith("cancel_"))
        assert form.query_one("#f-id", Input).value == "cancel_implicit_regression"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: cases_path.read_bytes() != before)
    after = cases_path.read_bytes()
    assert after.startswith(before)
    new_lines = after[len(before) :].splitlines()
    assert len(new_lines) == 1
    case = orjson.loads(new_lines[0])
    original = next(orjson.loads(x) for x in before.splitlines() if b'"cancel_implicit"' in x)
    assert case["id"] == "cancel_implicit_regression"
    assert case["expect"] == original["expect"] and case["user"] == original["user"]
    assert "sim-eager" in case["note"] and "unsafe_call" in case["note"]


async def test_rejudge_copy_and_rerun_from_the_list(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))
        row = next(
            i
            for i, r in enumerate(recs)
            if r["model"] == "sim-eager" and r["case_id"] == "missing_id"
        )
        screen.query_one(AttemptList).cursor = row
        await pilot.press("J")  # re-judge with the current code: the same verdict
        await wait_for(pilot, lambda: any("Re-judged" in n.message for n in app._notifications))
        note = next(n.message for n in app._notifications if "Re-judged" in n.message)
        assert "unchanged" in note and "fail" in note
        await pilot.press("y")
        await wait_for(pilot, lambda: bool(app.clipboard))
        copied = orjson.loads(app.clipboard)
        assert copied == recs[row]
        assert (
            "api_key" not in app.clipboard.lower() and "authorization" not in app.clipboard.lower()
        )
        await pilot.press("ctrl+g")  # rerun live: the Run screen on that case, model and mode
        await wait_for(pilot, lambda: app.current_mode == "run")
        await pilot.pause()
        assert app.screen.query_one("#run-case").value == "missing_id"  # type: ignore[attr-defined]
        assert app.screen.query_one("#run-target").value == 1  # type: ignore[attr-defined]
        assert app.screen.query_one("#run-mode").value == "auto"  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: not app.screen.busy)  # type: ignore[attr-defined]


async def test_a_live_file_is_followed(app_for: AppFor, project: Path, fixed_clock: None) -> None:
    recs = write_history(project)
    path = project / "runs" / "fixture.jsonl"
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))
        lst = screen.query_one(AttemptList)
        await pilot.press("end")
        extra = dict(recs[0], attempt=3, started_at="2026-11-28T10:00:00.000+00:00")
        with open(path, "ab") as fh:
            fh.write(orjson.dumps(extra) + b"\n")
        screen._poll()  # what the screen's interval does each second
        await wait_for(
            pilot, lambda: screen.index is not None and screen.index.rows == len(recs) + 1
        )
        await wait_for(pilot, lambda: lst.current_row == len(recs))  # the tail is followed
        with open(path, "ab") as fh:
            fh.write(orjson.dumps(extra)[:50])  # half a line: a writer mid-way
        screen._poll()
        await wait_for(pilot, lambda: screen.index is not None and screen.index.tail is not None)
        assert screen.index is not None and screen.index.rows == len(recs) + 1


async def test_a_cold_index_is_saved_as_it_goes_and_loaded_next_time(
    app_for: AppFor, project: Path, fixed_clock: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolstand.history import sidecar as history_sidecar

    recs = write_history(project)
    path = project / "runs" / "fixture.jsonl"
    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1)  # the real floor is 20,000 rows
    monkeypatch.setattr(history_screen, "FIRST_BYTES", 4096)  # batches of a few rows...
    monkeypatch.setattr(history_screen, "BATCH_BYTES", 4096)
    monkeypatch.setattr(history_screen, "SAVE_ROWS", 5)  # ...and a save every 5 or more
    saved_at: list[int] = []
    save = history_sidecar.save

    def counted_save(ix: Any) -> Any:
        saved_at.append(ix.rows)
        return save(ix)

    monkeypatch.setattr(history_sidecar, "save", counted_save)
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        await open_history(pilot, app, len(recs))
    assert len(saved_at) >= 3 and saved_at[0] < len(recs) and saved_at[-1] == len(recs)
    assert history_sidecar.sidecar_path(path).exists()

    saved_at.clear()
    loaded: list[int] = []
    load = history_sidecar.load

    def counted_load(ix: Any) -> Any:
        ok = load(ix)
        loaded.append(ix.rows)
        return ok

    monkeypatch.setattr(history_sidecar, "load", counted_load)
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app, len(recs))
        assert screen.index is not None and screen.index.persisted == len(recs)
        assert len(listed(screen)) == len(recs)
    assert loaded == [len(recs)] and saved_at == []  # nothing new: nothing rewritten


async def test_the_picker_lists_run_files_and_opens_one(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    write_history(project, "other.jsonl")
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        await open_history(pilot, app, len(recs))
        await pilot.press("o")
        await wait_for(
            pilot,
            lambda: (
                bool(app.screen.query("#picker-list"))
                and app.screen.query_one("#picker-list", OptionList).option_count == 2
            ),
        )
        options = app.screen.query_one("#picker-list", OptionList)
        texts = [str(options.get_option_at_index(i).prompt) for i in range(2)]
        assert all("24 attempts" in t and "sim-careful, sim-eager (simulated)" in t for t in texts)
        target = next(i for i, t in enumerate(texts) if t.startswith("other.jsonl"))
        options.highlighted = target
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        assert screen_of(app).path is not None and screen_of(app).path.endswith("other.jsonl")  # type: ignore[union-attr]


def test_history_screen_snapshot(
    snap_compare: Any, app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)

    async def failures_with_counts(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, ToolstandApp)
        screen = await open_history(pilot, app, len(recs))
        await pilot.press("f", "down", "space")  # the panel open, failures only
        await wait_for(
            pilot,
            lambda: (
                screen.query_.verdict == {"fail"}
                and screen.result is not None
                and screen.result.end == len(recs)
            ),
        )
        await pilot.press("escape")
        await pilot.pause()

    assert snap_compare(
        app_for(start_mode="history"), terminal_size=SIZE, run_before=failures_with_counts
    )


def test_a_promoted_case_keeps_the_expectation_under_a_new_id(project: Path) -> None:
    recs = list(fixture_records(project))
    casefile = load_cases(project / "cases" / "delivery.jsonl")
    rec = next(r for r in recs if r["model"] == "sim-eager" and r["case_id"] == "missing_id")
    data, said = promoted_case(rec, casefile)
    assert data["id"] == "missing_id_regression" and "expectation copied" in said
    assert data["expect"] == casefile.by_id()["missing_id"].expect.model_dump(
        exclude_none=True, exclude_defaults=True
    ) | {"kind": "text"}
    # a case since deleted from the file: its message, an expectation left to fill in
    gone = dict(rec, case_id="deleted_case", user="Что с заказом?")
    data, said = promoted_case(gone, casefile)
    assert data["id"] == "deleted_case_regression" and data["user"] == "Что с заказом?"
    assert data["expect"] == {"kind": "text"} and "not in" in said


def test_a_promoted_second_turn_failure_pins_its_mode_and_the_result_sent(project: Path) -> None:
    casefile = load_cases(project / "cases" / "delivery.jsonl")
    sent = {"ok": False, "error": {"code": "already_shipped", "retryable": False}}
    rec: dict[str, Any] = {
        "case_id": "recovery_already_shipped", "provider": "sim", "model": "sim-eager",
        "mode": "forced", "attempt": 2, "run_id": "r1",
        "judgement": {"verdict": "fail", "errors": [{"code": "false_success", "turn": 2}]},
        "second_turn": {"tool_results": [{"call_id": "c1", "name": "cancel_order", "result": sent}],
                        "judgement": {"passed": False}},
    }  # fmt: skip
    data, said = promoted_case(rec, casefile)
    assert "in mode forced" in data["note"] and "false_success" in data["note"]
    assert data["followup"]["tool_results"] == {"cancel_order": sent}
    original = casefile.by_id()["recovery_already_shipped"].followup
    assert original is not None and data["followup"]["must_not_call"] == original.must_not_call
    assert "pinned (cancel_order)" in said
    # a first-turn failure pins nothing: the executor's defaults were never sent
    passed_second = dict(rec, judgement={"verdict": "fail", "errors": [{"code": "wrong_tool"}]})
    passed_second["second_turn"] = dict(rec["second_turn"], judgement={"passed": True})
    data, _ = promoted_case(passed_second, casefile)
    assert "tool_results" not in (data.get("followup") or {})


def test_the_diff_rounds_latency_and_marks_cut_values() -> None:
    from toolstand.tui.widgets.attempt_diff import _cut, diff_records

    a = {"elapsed_ms": 123.456789, "decision": {"kind": "text", "text": "x" * 300}}
    b = {"elapsed_ms": 98.7, "decision": {"kind": "text", "text": "y"}}
    rows = {r.field: r for r in diff_records(a, b)}
    assert (rows["elapsed_ms"].a, rows["elapsed_ms"].b) == ("123 ms", "99 ms")
    assert rows["elapsed_ms"].b != "—" and diff_records({}, {})[-4].a == "—"
    assert _cut("x" * 300, 20) == "x" * 19 + "…" and _cut("short", 20) == "short"


def test_a_huge_body_is_shown_cut_with_how_much_is_left() -> None:
    from toolstand.tui.widgets.attempt_detail import SHOWN_BYTES, pretty, shown

    text = pretty({"content": "é" * (1 << 20)})  # 2 MB of UTF-8
    out = shown(text)
    assert len(out.encode()) < SHOWN_BYTES + 100
    rest = len(text.encode()) - len(out.split("\n… ")[0].encode())
    assert out.endswith(f"… {rest:,} more bytes, y copies all")
    assert shown('{"a": "\x9b"}') == '{"a": "\\x9b"}'


def with_repair(rec: dict[str, Any], passed_after: int | None) -> dict[str, Any]:
    """``rec`` as a repair arm writes it: its feedback and repair summary in the head
    (before ``second_turn``, where the runner puts them)."""
    out: dict[str, Any] = {}
    for key, value in rec.items():
        if key == "second_turn":
            out["feedback"] = "allowed"
            out["repair"] = {"needed": True, "turns": 1, "valid_after": passed_after,
                             "passed_after": passed_after, "transport_error": None,
                             "input_tokens": 10, "output_tokens": 2}  # fmt: skip
        out[key] = value
    return out


async def test_a_repaired_failure_says_so_in_the_list_and_its_values_read_whole_maximized(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    # walk leftovers of issue 30: the list showed turn 1's FAIL alone for an attempt
    # whose repair turn passed; F11 on the judgement still cut expected/actual at 60
    recs = list(fixture_records(project))
    fails = [i for i, r in enumerate(recs) if r["judgement"]["verdict"] == "fail"]
    repaired, unrepaired = fails[0], fails[1]
    long = {"order_id": "ORD-123456", "reason": "a reason far longer than sixty characters"}
    recs[repaired] = with_repair(recs[repaired], 1)
    recs[repaired]["judgement"]["errors"].append(
        {"code": "argument_mismatch", "turn": 1, "call_index": 0,
         "expected": long, "actual": {**long, "extra": "and the end of it"}}
    )  # fmt: skip
    recs[unrepaired] = with_repair(recs[unrepaired], None)
    write_records(project, recs)
    app = app_for(start_mode="history")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_history(pilot, app, len(recs))
        await pilot.press("F")  # failures: turn 1's verdict, the repaired one still listed
        await wait_for(pilot, lambda: listed(screen) == fails)
        lst = screen.query_one(AttemptList)
        await pilot.pause()  # painted: the fixture's rows (not in the runner's key order)
        await app.workers.wait_for_complete()  # have their records read for the outcome
        await pilot.pause()
        lines = ["".join(s.text for s in lst.render_line(y)) for y in range(1, len(fails) + 1)]
        assert "FAIL→pass" in lines[0].split() and "FAIL→fail" in lines[1].split()
        # and which arm: the arms' rows of one attempt are told apart
        assert "allowed" in lines[0].split() and "none" in lines[2].split()
        assert all("FAIL" in line.split() and "→" not in line for line in lines[2:]), lines
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
        detail = app.screen.query_one(AttemptDetail)
        await wait_for(pilot, lambda: detail.rec is not None)
        explained = app.screen.query_one("#detail-explain", Static)
        whole = orjson.dumps({**long, "extra": "and the end of it"}).decode()
        assert whole not in str(explained.render()).replace("\n", "")
        assert "F11 on this pane shows each whole" in str(explained.render())
        app.screen.query_one("#detail-judgement").focus()
        await pilot.press("f11")
        await pilot.pause()
        text = str(explained.render())
        assert whole in text and orjson.dumps(long).decode() in text
        assert "F11 on this pane" not in text
        await pilot.press("f11")  # back beside the others: cut again
        await pilot.pause()
        assert whole not in str(explained.render())


def test_the_repair_outcome_comes_from_the_index_or_else_from_the_record(
    project: Path, tmp_path: Path
) -> None:
    from toolstand.history import HistoryIndex
    from toolstand.tui.model.verdicts import UNKNOWN, has_repairs, repair_of, repair_outcome

    recs = list(fixture_records(project))[:4]
    summaries = [(1, None), (None, None), (None, "timeout")]
    written = []
    for rec, (passed, te) in zip(recs, summaries, strict=False):
        rec = with_repair(rec, passed)
        rec["repair"]["transport_error"] = te
        # the runner's key order: the judgement right after second_turn, its metrics
        # before its errors
        j = rec["judgement"]
        j = {"verdict": j["verdict"], "metrics": j["metrics"]} | j
        rec = {k: v for k, v in rec.items() if k not in ("second_turn", "judgement")}
        rec |= {"second_turn": None, "judgement": j}
        written.append(rec)
    written.append(recs[3])  # no repair arm
    odd = dict(written[0], stream=True)  # a streamed row: its line is read apart
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [*written, odd]))
    ix = HistoryIndex(path)
    ix.update()
    assert [repair_outcome(ix, r) for r in range(ix.rows)] == [
        "pass", "fail", "err", None, UNKNOWN
    ]  # fmt: skip
    assert [repair_of(r) for r in [*written, odd]] == ["pass", "fail", "err", None, "pass"]
    assert has_repairs(ix)
