"""The Run screen streams live: events listed as they arrive, the decision filling, the
first token and first call in the turn's header, and the stream arm of a "both" run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
from textual.message import Message
from textual.widgets import Static, TextArea

from tests.support.tui import (
    attempts,
    on_run,
    open_history,
    open_run,
    status,
    wait_for,
    write_config,
)
from toolstand.attempt.record import record
from toolstand.tui.app import ToolstandApp
from toolstand.tui.model.events import stream_titles
from toolstand.tui.screens.attempt import AttemptScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.screens.run_view import StreamEvent
from toolstand.tui.widgets.attempt_detail import AttemptDetail
from toolstand.tui.widgets.nav import NavBar

AppFor = Callable[..., ToolstandApp]

STREAMBUG = {"provider": "sim", "model": "sim-streambug", "api": "openai-chat", "base_url": "sim"}


async def test_a_streamed_turn_lists_its_events_as_they_arrive(
    app_for: AppFor, project: Path
) -> None:
    # framing only (a call in one delta): turn 1 reads right whatever the seed draws
    sim = {**orjson.loads((project / "config.example.json").read_bytes()).get("sim", {})}
    write_config(
        project, runs=[STREAMBUG], stream=True, sim={**sim, "stream_faults": {"args_whole": 1.0}}
    )
    live: list[StreamEvent] = []

    def hook(message: Message) -> None:
        if isinstance(message, StreamEvent) and not any(m is message for m in live):
            live.append(message)

    app = on_run(app_for, "recovery_lookup_ok")
    async with app.run_test(size=(80, 24), message_hook=hook) as pilot:
        await open_run(pilot, app, "recovery_lookup_ok")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "ctrl+t sends turn 2" in status(app))
        screen = app.screen
        assert isinstance(screen, RunScreen)
        title = str(screen.query_one("#pane-response").border_title)
        assert screen.state is not None
        wordings = stream_titles(record(screen.state)["response"]["stream"], len(live))
        # at 80 columns the status gives way in the title (F6 shows it, with the tries),
        # and on a slow machine the first token's time: the first call stays, uncut
        assert title in wordings[:2] and " · call " in title
        assert len(title) <= screen.query_one("#pane-response").size.width
        assert screen.query_one("#response-head", TextArea).text.startswith("HTTP 200")
        said = str(screen.query_one("#verdict-text").render())
        assert screen.state is not None
        stream = record(screen.state)["response"]["stream"]
        assert f"streamed: first token {stream['first_token_ms']:.0f} ms, first call " in said
        events = screen.query_one("#response-events", TextArea)
        assert events.display and events.text.count("\n") + 1 == len(live)
        # the worker's messages came one per event, in arrival order, with their deltas
        times = [m.row.ms or 0.0 for m in live]
        assert all(m.row.ms is not None for m in live)
        assert len(live) > 3 and times == sorted(times)
        assert live[-1].row.type == "[DONE]"
        arguments = "".join(m.row.delta for m in live)
        assert "get_order" in arguments and '"order_id"' in arguments
        assert screen.state is not None and screen.state.plan.stream
        decision = screen.query_one("#decision-body", TextArea).text
        assert orjson.loads(decision)["kind"] == "tool_call"

        first_turn = len(live)
        await pilot.press("ctrl+t")  # turn 2 streams too and the attempt is recorded
        await wait_for(pilot, lambda: "recorded in" in status(app))
        (rec,) = attempts(project)
        assert rec["stream"] is True
        assert rec["response"]["stream"]["events"] == first_turn
        second = rec["second_turn"]["response"]["stream"]["events"]
        assert second > 0 and len(live) == first_turn + second


async def test_a_run_with_both_arms_toggles_the_stream_arm(app_for: AppFor, project: Path) -> None:
    write_config(project, runs=[STREAMBUG], stream="both")
    app = on_run(app_for, "irrelevant_joke")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, "irrelevant_joke")
        await pilot.press("ctrl+g")  # the first arm: not streamed
        await wait_for(pilot, lambda: "recorded in" in status(app))
        assert "raw response" in str(app.screen.query_one("#pane-response").border_title)
        bar = app.screen.query_one(NavBar)
        assert bar.detail == "stream arm: not streamed"  # hfix F5: the arm in sight
        await pilot.press("f7")
        assert "stream arm: streamed" in status(app)
        await pilot.press("ctrl+g")
        await wait_for(
            pilot, lambda: status(app).count("recorded in") == 1 and len(attempts(project)) == 2
        )
        assert str(app.screen.query_one("#pane-response").border_title).startswith("events · ")
        assert [r["stream"] for r in attempts(project)] == [False, True]
        # the status line moved on; the bar still says which arm the next run takes
        assert "stream arm" not in status(app) and bar.detail == "stream arm: streamed"
        # and f7 toggles it from a body pane too (the text area took it to select all)
        app.screen.query_one("#request-body").focus()
        await pilot.press("f7")
        assert bar.detail == "stream arm: not streamed"


async def test_the_stream_arm_key_is_off_for_a_run_with_one_arm(
    app_for: AppFor, project: Path
) -> None:
    write_config(project, runs=[STREAMBUG], stream=True)
    app = on_run(app_for, "irrelevant_joke")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, "irrelevant_joke")
        assert app.screen.check_action("stream_arm", ()) is False
        await pilot.press("f7")
        assert "stream arm" not in status(app)


async def test_history_shows_the_events_of_a_streamed_attempt(
    app_for: AppFor, project: Path
) -> None:
    write_config(project, runs=[STREAMBUG], stream=True)
    app = on_run(app_for, "irrelevant_joke")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, "irrelevant_joke")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "recorded in" in status(app))
        (rec,) = attempts(project)
        stream = rec["response"]["stream"]
        await open_history(pilot, app, 1)
        await pilot.press("home", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptScreen))
        detail = app.screen.query_one(AttemptDetail)
        await wait_for(pilot, lambda: detail.rec is not None)
        head = str(app.screen.query_one("#detail-head", Static).render())
        assert " · auto · streamed · " in head  # hfix F5: the arm in the attempt header
        title = str(app.screen.query_one("#pane-raw").border_title)
        assert title.startswith(f"events · {stream['events']} · token ")
        lines = app.screen.query_one("#detail-raw", TextArea).text.splitlines()
        assert len(lines) == stream["events"] == len(stream["event_ms"])
        # each line: the recorded arrival, the type, the delta; the text is the answer's
        assert [float(line.split()[0]) for line in lines] == stream["event_ms"]
        assert lines[-1].split()[1] == "[DONE]"
        kind = "chat.completion.chunk  "
        said = "".join(line.split(kind, 1)[1] for line in lines if kind in line)
        decision = orjson.loads(app.screen.query_one("#detail-decision", TextArea).text)
        assert decision["text"] and said == decision["text"]
        await pilot.press("r")  # the request, then the response's events again
        await pilot.pause()
        assert app.screen.query_one("#detail-raw", TextArea).text.startswith("{")
