"""What a debugger came for, on the Run screen and in History: the network time of the
turn and of the attempt, named apart; each try's status, wait and why; the request's
full URL and headers and the response's headers (issue 30)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import orjson
from textual.widgets import ContentSwitcher, Static, TextArea

from tests.support.tui import SIZE, open_history, open_run, records, status, turn_one, wait_for
from tests.support.tui_history import fixture_records, headers
from toolstand.tui.app import ToolstandApp
from toolstand.tui.model.live import TurnView
from toolstand.tui.model.timing import timing_line, tries_lines, turn_ms
from toolstand.tui.screens.attempt import AttemptScreen
from toolstand.tui.widgets.attempt_detail import AttemptDetail
from toolstand.tui.widgets.exchange_view import ExchangeView
from toolstand.types import Judgement

AppFor = Callable[..., ToolstandApp]

TRIES: list[dict[str, Any]] = [
    {"status": 429, "error_code": "rate_limited", "elapsed_ms": 12.0, "retry_after_s": 1.5,
     "waited_s": 1.5, "message": "slow down"},
    {"status": 200, "error_code": None, "elapsed_ms": 30.0, "retry_after_s": None,
     "waited_s": None, "message": None},
]  # fmt: skip


def test_the_tries_and_times_are_worded_from_the_record() -> None:
    assert turn_ms(TRIES) == 12.0 + 1500.0 + 30.0  # the wait is network time, not editing
    assert turn_ms([]) is None
    first, second = tries_lines(TRIES)
    assert first == (
        "try 1: HTTP 429 rate_limited 12 ms, then waited 1.50 s (Retry-After 1.5 s): slow down"
    )
    assert second == "try 2: HTTP 200 ok 30 ms"
    assert tries_lines([{"status": None, "error_code": "timeout", "elapsed_ms": 5}]) == [
        "try 1: no response timeout 5 ms, not retried (final)"
    ]
    assert timing_line(99.4, 240.0, 2) == "network 99 ms this turn, 240 ms all 2 turns"
    assert timing_line(99.4, 99.4, 1) == "network 99 ms, the only turn"


async def test_run_names_turn_and_total_time_and_shows_headers_and_url(
    app_for: AppFor, project: Path
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await turn_one(pilot, app, "recovery_lookup_ok")
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: "recorded in" in status(app))
        rec = [r for r in records(project) if r["type"] == "attempt"][-1]
        second = turn_ms(rec["second_turn"]["tries"])
        first = turn_ms(rec["tries"])
        assert first is not None and second is not None
        # the status and the verdict pane say the turn's time and the attempt's, by name
        said = f"network {second:.0f} ms this turn, {first + second:.0f} ms all 2 turns"
        assert said in status(app)
        assert said in str(app.screen.query_one("#verdict-text", Static).render())
        # headers beside the body, the full URL first (the pane title cuts it)
        await pilot.press("f6")
        await pilot.pause()
        switch = app.screen.query_one("#request-switch", ContentSwitcher)
        assert switch.current == "request-head"
        head = app.screen.query_one("#request-head", TextArea).text
        request = rec["second_turn"]["request"]
        assert head.splitlines()[0] == f"POST {request['url']}"
        for k, v in request["headers"].items():
            assert f"{k}: {v}" in head
        assert "authorization" not in head.lower()
        response = app.screen.query_one("#response-head", TextArea).text
        assert response.startswith(f"HTTP {rec['second_turn']['response']['status']}")
        for k, v in rec["second_turn"]["response"]["headers"].items():
            assert f"{k}: {v}" in response
        assert "tries:\n  try 1: HTTP 200 ok" in response
        assert str(app.screen.query_one("#pane-request").border_title).startswith("headers: ")
        await pilot.press("f6")
        await pilot.pause()
        assert switch.current == "request-body"


async def test_run_lists_each_try_with_its_wait_and_why(app_for: AppFor, project: Path) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await open_run(pilot, app, "direct_lookup")
        view = TurnView(
            "turn 1",
            {"method": "POST", "url": "http://sim.invalid/v1/chat/completions", "headers": {}},
            {"status": 200, "headers": {"x-request-id": "req_1"}, "body": {}, "body_is_json": True},
            None,
            cast("Judgement", {"verdict": "pass", "errors": [], "calls": []}),
            tries=TRIES,
        )
        exchange = app.screen.query_one(ExchangeView)
        exchange.total_ms, exchange.turns = turn_ms(TRIES), 1
        exchange.show(view)
        await pilot.pause()
        text = str(app.screen.query_one("#verdict-text", Static).render())
        assert "retries made: 1" in text
        for line in tries_lines(TRIES):
            assert line in text
        assert "network 1542 ms, the only turn" in text
        head = app.screen.query_one("#response-head", TextArea).text
        assert "x-request-id: req_1" in head and tries_lines(TRIES)[0] in head


async def test_history_shows_times_tries_and_headers_of_the_turn(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = list(fixture_records(project))[:3]
    recs[0] = dict(
        recs[0],
        elapsed_ms=2000.0,
        tries=TRIES,
        retries=1,
        request=dict(recs[0]["request"], headers={"content-type": "application/json"}),
        response=dict(recs[0]["response"], headers={"x-request-id": "req_9"}),
    )
    lines = [orjson.dumps(r) for r in [headers()[0], *recs]]
    (project / "runs" / "t.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        await open_history(pilot, app, len(recs))
        await pilot.press("home", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
        detail = app.screen.query_one(AttemptDetail)
        await wait_for(pilot, lambda: detail.rec is not None)
        explain = str(app.screen.query_one("#detail-explain", Static).render())
        head = str(app.screen.query_one("#detail-head", Static).render())
        said = "network 1542 ms, the only turn"
        assert said in head and said in explain
        for line in tries_lines(TRIES):
            assert line in explain
        await pilot.press("h")
        await pilot.pause()
        raw = app.screen.query_one("#detail-raw", TextArea).text
        assert raw.startswith("HTTP 200") and "x-request-id: req_9" in raw
        assert tries_lines(TRIES)[0] in raw
        await pilot.press("r")
        await pilot.pause()
        raw = app.screen.query_one("#detail-raw", TextArea).text
        assert raw.splitlines()[0] == "POST http://sim/v1/chat/completions"
        assert "content-type: application/json" in raw
