"""The runner reads and judges a repetition's last turn when its record is made, after
the worker's next request went out (attempt/arms.py ``read_last_later``): nothing is
sent after that turn, so its judgement need not wait in front of the next request. The
records are the same; a judging that raises is a crashed attempt, as before; a
cancelled run still writes every finished repetition, judged."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.runs import assert_exact_matrix, make_inputs, read, sim
from toolstand.attempt import reading as reading_mod
from toolstand.attempt import turns as turns_mod
from toolstand.run import recorder as recorder_mod
from toolstand.run.runner import run
from toolstand.types import REPETITION_HEADER, SIM_CASE_HEADER

PLAIN = {"direct_lookup", "missing_id", "invalid_id", "quote_standard"}  # no followup
FOLLOWUP = "recovery_lookup_ok"  # sim-careful calls the tool: turn 2 runs


class Events:
    """What the runner did, in order: ``send`` (a request handed to the transport),
    ``read`` (an answer read and judged; turn 2's as ``read2``) and ``hand`` (a
    finished repetition given to the recorder), each with (case id, repetition)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.log: list[tuple[str, str, int]] = []
        exchange, read_answer, hand = (
            turns_mod.exchange,
            turns_mod.read_answer,
            recorder_mod.Recorder.hand,
        )

        def key(built: Any) -> tuple[str, int]:
            h = built.http.headers
            return h[SIM_CASE_HEADER], int(h[REPETITION_HEADER])

        async def sending(client: Any, adapter: Any, built: Any, *a: Any, **kw: Any) -> Any:
            self.log.append(("send", *key(built)))
            return await exchange(client, adapter, built, *a, **kw)

        def reading(plan: Any, built: Any, body: Any, **kw: Any) -> Any:
            self.log.append(("read2" if kw.get("results") is not None else "read", *key(built)))
            return read_answer(plan, built, body, **kw)

        def handing(rec: Any, item: Any, states: Any, **kw: Any) -> None:
            self.log.append(("hand", item.case.id, item.attempt))
            hand(rec, item, states, **kw)

        monkeypatch.setattr(turns_mod, "exchange", sending)
        monkeypatch.setattr(turns_mod, "read_answer", reading)
        monkeypatch.setattr(recorder_mod.Recorder, "hand", handing)

    def at(self, what: str, case: str, attempt: int) -> int:
        return self.log.index((what, case, attempt))


def _inputs(**extra: Any) -> Any:
    extra.setdefault("parallelism", 4)
    extra.setdefault("repetitions", 3)
    return make_inputs([sim("sim-careful", "openai-chat")], modes=["auto"], **extra)


def test_a_last_turn_is_judged_after_the_workers_next_request_went_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = Events(monkeypatch)
    inputs = _inputs()
    out = tmp_path / "run.jsonl"
    asyncio.run(run(inputs, out, only=PLAIN, progress_out=None))
    log = events.log
    hands = [i for i, e in enumerate(log) if e[0] == "hand"]
    assert len(hands) == 12
    for i in hands:  # judged once, after the hand-off
        _, case, attempt = log[i]
        assert [e for e in log if e[1:] == (case, attempt)][-1][0] == "read"
        assert events.at("read", case, attempt) > i
    # while repetitions are left, the worker's next request follows its hand-off at once
    for i in hands[:-4]:
        assert log[i + 1][0] == "send", log[i : i + 3]
    _, attempts = read(out)
    assert_exact_matrix(inputs, attempts, PLAIN)
    assert all(a["judgement"]["verdict"] in ("pass", "fail") for a in attempts)
    assert all(a["decision"] is not None for a in attempts)


def test_turn_1_is_judged_before_turn_2_is_sent_and_turn_2_after_the_hand_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = Events(monkeypatch)
    out = tmp_path / "run.jsonl"
    asyncio.run(run(_inputs(), out, only={FOLLOWUP}, progress_out=None))
    for attempt in (1, 2, 3):
        sends = [i for i, e in enumerate(events.log) if e == ("send", FOLLOWUP, attempt)]
        assert len(sends) == 2  # turn 1 and turn 2
        assert sends[0] < events.at("read", FOLLOWUP, attempt) < sends[1]
        assert events.at("read2", FOLLOWUP, attempt) > events.at("hand", FOLLOWUP, attempt)
    _, attempts = read(out)
    assert len(attempts) == 3
    for a in attempts:
        assert a["second_turn"]["judgement"] is not None
        assert a["second_turn"]["decision"] is not None


def test_repair_arms_are_judged_before_the_hand_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each arm branches from turn 1's judgement: none is put off."""
    events = Events(monkeypatch)
    inputs = _inputs(repair={"max_repairs": 2, "feedback": ["path_value", "allowed"]})
    asyncio.run(run(inputs, tmp_path / "run.jsonl", only=PLAIN, progress_out=None))
    for what, case, attempt in events.log:
        if what == "hand":
            assert events.at("read", case, attempt) < events.at("hand", case, attempt)


def test_a_judging_that_raises_later_is_a_crashed_attempt_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = reading_mod.judge

    def judge(case: Any, *a: Any, **kw: Any) -> Any:
        if case.id == "missing_id":
            raise RuntimeError("planted in the judge")
        return real(case, *a, **kw)

    monkeypatch.setattr(reading_mod, "judge", judge)
    out = tmp_path / "run.jsonl"
    summary = asyncio.run(run(_inputs(), out, only=PLAIN, progress_out=None))
    assert (summary.crashed, summary.written) == (3, 9)
    _, attempts = read(out)
    assert sorted({a["case_id"] for a in attempts}) == sorted(PLAIN - {"missing_id"})
    err = capsys.readouterr().err
    assert err.count("missing_id auto #") == 3
    assert "RuntimeError: planted in the judge (not recorded;" in err


def test_a_cancelled_run_writes_every_handed_repetition_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled right as a repetition is handed over, with others not judged yet:
    each is read while the run unwinds, and on disk with its judgement."""
    events = Events(monkeypatch)
    main: list[asyncio.Task[Any]] = []
    real = recorder_mod.Recorder.hand

    def hand(rec: Any, item: Any, states: Any, **kw: Any) -> None:
        real(rec, item, states, **kw)
        if sum(e[0] == "hand" for e in events.log) == 6:
            main[0].cancel()

    monkeypatch.setattr(recorder_mod.Recorder, "hand", hand)
    out = tmp_path / "run.jsonl"

    async def go() -> None:
        main.append(asyncio.current_task())  # type: ignore[arg-type]
        await run(_inputs(repetitions=5), out, only=PLAIN, progress_out=None)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
    handed = [e[1:] for e in events.log if e[0] == "hand"]
    _, attempts = read(out)
    assert {(a["case_id"], a["attempt"]) for a in attempts} >= set(handed[:6])
    assert all(a["judgement"]["verdict"] in ("pass", "fail") for a in attempts)
