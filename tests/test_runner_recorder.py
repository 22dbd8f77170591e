"""The runner's recorder (run/recorder.py): records are made after the requests that
are ready to go out, in the order their repetitions ended, and nothing finished is
lost when a run ends, fails or is cancelled."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.runs import make_inputs, read, sim
from toolstand.attempt.plan import AttemptState
from toolstand.run import recorder as recorder_mod
from toolstand.run.matrix import Repetition
from toolstand.run.recorder import Recorder
from toolstand.run.runner import run
from toolstand.types import AttemptRecord

ARMS = ["path_value", "allowed"]


def _queue(written: list[Any], fail_on: object = None) -> Recorder:
    def write(item: Any, states: list[Any]) -> None:
        if item == fail_on:
            raise RuntimeError(f"planted: {item}")
        written.append(item)

    return Recorder(write, at_once=False)


def test_nothing_is_recorded_while_workers_hand_over_and_drain_keeps_the_order() -> None:
    written: list[Any] = []

    async def go() -> list[list[Any]]:
        rec = _queue(written)
        task = asyncio.create_task(rec.run(most=100, quiet_s=3600.0))
        seen = []
        for i in range(5):  # a wave: hand-offs, and turns of the loop between them
            rec.hand(i, [])  # type: ignore[arg-type]
            for _ in range(3):
                await asyncio.sleep(0)
            seen.append(list(written))
        rec.drain()  # the workers are done
        seen.append(list(written))
        task.cancel()
        return seen

    seen = asyncio.run(go())
    assert seen[:5] == [[]] * 5
    assert seen[5] == [0, 1, 2, 3, 4]


def test_a_backlog_of_most_goes_out_in_order_even_while_hand_offs_go_on() -> None:
    written: list[Any] = []

    async def go() -> None:
        rec = _queue(written)
        task = asyncio.create_task(rec.run(most=3, quiet_s=3600.0))
        for i in range(8):
            rec.hand(i, [])  # type: ignore[arg-type]
            await asyncio.sleep(0)
            assert rec.backlog <= 3
        task.cancel()

    asyncio.run(go())
    assert written == list(range(len(written))) and len(written) >= 5


def test_what_recording_raised_is_handed_back_to_the_workers_and_to_drain() -> None:
    written: list[Any] = []

    async def go() -> None:
        rec = _queue(written, fail_on=1)
        task = asyncio.create_task(rec.run(most=100, quiet_s=0.0))
        rec.hand(0, [])  # type: ignore[arg-type]
        rec.hand(1, [])  # type: ignore[arg-type]
        rec.hand(2, [])  # type: ignore[arg-type]
        await task  # ends on the failure
        with pytest.raises(RuntimeError, match="planted: 1"):
            rec.hand(3, [])  # type: ignore[arg-type]
        with pytest.raises(RuntimeError, match="planted: 1"):
            rec.drain()

    asyncio.run(go())
    assert written == [0]


def test_a_last_hand_off_records_the_waiting_ones_first_and_stops_at_a_failure() -> None:
    written: list[Any] = []

    async def go() -> None:
        rec = _queue(written)
        task = asyncio.create_task(rec.run(most=100, quiet_s=3600.0))
        rec.hand(0, [])  # type: ignore[arg-type]
        rec.hand(1, [])  # type: ignore[arg-type]
        assert written == []
        rec.hand(2, [], last=True)  # type: ignore[arg-type]
        assert written == [0, 1, 2]
        task.cancel()

    asyncio.run(go())
    failing: list[Any] = []

    async def fails() -> None:
        rec = _queue(failing, fail_on=1)
        rec.hand(0, [])  # type: ignore[arg-type]
        rec.hand(1, [])  # type: ignore[arg-type]
        with pytest.raises(RuntimeError, match="planted: 1"):
            rec.hand(2, [], last=True)  # type: ignore[arg-type]
        for again in (lambda: rec.hand(3, [], last=True), rec.drain):  # type: ignore[arg-type]
            with pytest.raises(RuntimeError, match="planted: 1"):
                again()

    asyncio.run(fails())
    assert failing == [0]


def test_a_last_hand_off_that_records_what_woke_the_task_leaves_it_nothing_to_do() -> None:
    """The task woken by a first hand-off finds the queue emptied by a last one."""
    written: list[Any] = []

    async def go() -> Recorder:
        rec = _queue(written)
        task = asyncio.create_task(rec.run(most=100, quiet_s=0.0))
        await asyncio.sleep(0)  # the task waits for a hand-off
        rec.hand(0, [])  # type: ignore[arg-type]
        rec.hand(1, [], last=True)  # type: ignore[arg-type]
        for _ in range(5):
            await asyncio.sleep(0)
        assert not task.done()
        task.cancel()
        return rec

    assert asyncio.run(go()).failed is None
    assert written == [0, 1]


def _inputs(**extra: Any) -> Any:
    return make_inputs(
        [sim("sim-sloppy", "openai-chat")],
        parallelism=8,
        repetitions=3,
        repair={"max_repairs": 2, "feedback": ARMS},
        **extra,
    )


def test_the_lines_are_the_header_then_repetitions_as_they_ended_arms_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """design.md, History: records are written as attempts end; the arms of one
    repetition share its turn 1 and are written together, in the config's order."""
    ended: list[tuple[str, str, int]] = []
    real = Recorder.hand

    def hand(self: Recorder, item: Repetition, states: list[AttemptState], **kw: Any) -> None:
        ended.append((item.case.id, item.mode, item.attempt))
        real(self, item, states, **kw)

    monkeypatch.setattr(recorder_mod.Recorder, "hand", hand)
    out = tmp_path / "run.jsonl"
    asyncio.run(run(_inputs(), out, progress_out=None))
    data = out.read_bytes()
    assert data.startswith(b'{"type":"run"')
    _, attempts = read(out)
    keys = [(a["case_id"], a["mode"], a["attempt"]) for a in attempts]
    assert keys == [k for k in ended for _ in ARMS]
    assert [a["feedback"] for a in attempts] == ARMS * len(ended)
    assert len(set(ended)) == len(ended) > 8  # more repetitions than workers


def test_a_cancelled_run_loses_no_finished_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+C (or any cancel of the task) right as a repetition is handed over: it is
    on disk when the run has unwound, with every one handed over before it."""
    ended: list[tuple[str, str, int]] = []
    real = Recorder.hand
    main: list[asyncio.Task[Any]] = []

    def hand(self: Recorder, item: Repetition, states: list[AttemptState], **kw: Any) -> None:
        ended.append((item.case.id, item.mode, item.attempt))
        real(self, item, states, **kw)
        if len(ended) == 12:
            main[0].cancel()

    monkeypatch.setattr(recorder_mod.Recorder, "hand", hand)
    out = tmp_path / "run.jsonl"

    async def go() -> None:
        main.append(asyncio.current_task())  # type: ignore[arg-type]
        await run(_inputs(), out, progress_out=None)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
    _, attempts = read(out)  # whole lines only
    on_disk = {(a["case_id"], a["mode"], a["attempt"]) for a in attempts}
    assert set(ended[:12]) <= on_disk
    assert len(attempts) == len(ARMS) * len(on_disk)


def test_records_are_written_while_the_run_goes_on(tmp_path: Path) -> None:
    """Not all at the end: by the time the last repetition ends, most are on disk."""
    out = tmp_path / "run.jsonl"
    on_disk_at_hand: list[int] = []
    real = Recorder.hand

    def hand(self: Recorder, item: Repetition, states: list[AttemptState], **kw: Any) -> None:
        on_disk_at_hand.append(out.read_bytes().count(b"\n") - 1)  # minus the header
        real(self, item, states, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(recorder_mod.Recorder, "hand", hand)
        asyncio.run(run(_inputs(), out, progress_out=None))
    handed = len(on_disk_at_hand)
    # about a wave's worth (parallelism 8) waits to be recorded: a turn of the loop
    # records one repetition, and several workers may hand one over in that turn
    assert on_disk_at_hand[-1] >= len(ARMS) * (handed - 1 - 2 * 8) > 0


def test_a_failing_on_record_still_fails_the_run(tmp_path: Path) -> None:
    calls: list[str] = []

    def on_record(rec: AttemptRecord) -> None:
        calls.append(rec["case_id"])
        if len(calls) == 3:
            raise RuntimeError("planted in on_record")

    with pytest.raises(RuntimeError, match="planted in on_record"):
        asyncio.run(run(_inputs(), tmp_path / "run.jsonl", progress_out=None, on_record=on_record))
    assert len(calls) == 3


def test_once_no_repetition_is_left_to_start_each_record_is_made_at_its_hand_off(
    tmp_path: Path,
) -> None:
    """The last wave's records are not all made after its last answer: from the
    hand-off after which no repetition is left in the queue, each hand-off finds its
    record (and every one before it) on disk."""
    out = tmp_path / "run.jsonl"
    after_hand: list[int] = []
    real = Recorder.hand

    def hand(self: Recorder, item: Repetition, states: list[AttemptState], **kw: Any) -> None:
        real(self, item, states, **kw)
        after_hand.append(out.read_bytes().count(b"\n") - 1)  # minus the header

    inputs = _inputs()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(recorder_mod.Recorder, "hand", hand)
        asyncio.run(run(inputs, out, progress_out=None))
    n, workers = len(after_hand), inputs.config.parallelism
    assert n > workers
    # hand-off k (from 1) took the queue's last repetition when parallelism + k - 1 >= n
    for k in range(n - workers + 1, n + 1):
        assert after_hand[k - 1] == len(ARMS) * k, (k, after_hand)
