"""The runner plans each (run, case, mode, arm, stream arm) and builds its turn 1
request once (attempt/arms.py ``prepared``); every repetition sends a copy with its
own headers, and the records are those of requests built one by one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.runs import make_inputs, read, sim
from toolstand.attempt import arms as arms_mod
from toolstand.attempt import turns as turns_mod
from toolstand.run.runner import run

ONLY = {"direct_lookup", "missing_id", "recovery_lookup_ok"}


def _built(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    made: list[tuple[str, str]] = []
    real_plan, real_request = arms_mod.plan_attempt, turns_mod.first_request

    def plan_attempt(target: Any, case: Any, mode: Any, *a: Any, **kw: Any) -> Any:
        made.append(("plan", case.id))
        return real_plan(target, case, mode, *a, **kw)

    def first_request(plan: Any, *a: Any) -> Any:
        made.append(("request", plan.case.id))
        return real_request(plan, *a)

    monkeypatch.setattr(arms_mod, "plan_attempt", plan_attempt)
    monkeypatch.setattr(turns_mod, "first_request", first_request)
    return made


@pytest.mark.parametrize("stream", [False, True])
def test_each_case_and_mode_is_planned_and_built_once_and_sent_with_its_own_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    made = _built(monkeypatch)
    inputs = make_inputs(
        [sim("sim-careful", "openai-chat")],
        modes=["auto", "no_tools"],
        repetitions=3,
        parallelism=4,
        stream=stream,
    )
    out = tmp_path / "run.jsonl"
    asyncio.run(run(inputs, out, only=ONLY, progress_out=None))
    assert sorted(made) == sorted((what, c) for c in ONLY for what in ("plan", "request") * 2)
    _, attempts = read(out)
    assert len(attempts) == 3 * 2 * len(ONLY)
    bodies: dict[tuple[str, str], list[Any]] = {}
    for a in attempts:
        headers = a["request"]["headers"]
        assert headers["x-toolstand-repetition"] == str(a["attempt"])
        assert headers["x-toolstand-case"] == a["case_id"]
        assert a["stream"] is stream and a["request"]["body"].get("stream", False) is stream
        bodies.setdefault((a["case_id"], a["mode"]), []).append(a["request"]["body"])
        if a["second_turn"] is not None:  # built from turn 1's body, which it left alone
            assert a["second_turn"]["request"]["headers"] == headers
            assert len(a["second_turn"]["request"]["body"]["messages"]) > len(
                a["request"]["body"]["messages"]
            )
    assert all(len(b) == 3 and b[0] == b[1] == b[2] for b in bodies.values())
    assert any(a["second_turn"] is not None for a in attempts)


def test_a_run_with_repair_arms_builds_turn_1_once_per_repetition_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _built(monkeypatch)
    inputs = make_inputs(
        [sim("sim-sloppy", "openai-chat")],
        modes=["auto"],
        repetitions=3,
        parallelism=4,
        repair={"max_repairs": 2, "feedback": ["path_value", "allowed"]},
    )
    out = tmp_path / "run.jsonl"
    asyncio.run(run(inputs, out, only=ONLY, progress_out=None))
    assert sorted(made) == sorted((what, c) for c in ONLY for what in ("plan", "request"))
    _, attempts = read(out)
    assert len(attempts) == 3 * 2 * len(ONLY)
