"""Feedback arms share one first turn (design.md, Repair turn; issue 24, point 3): turn 1
is requested once per (run, case, mode, repetition), every arm branches from it, so the
arms repair the same failures and first-turn metrics equal those of the run without
repair, whatever the order requests arrive in."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

import toolstand.sim
from toolstand.reporting import compute_files
from toolstand.reporting.formats import render_table, to_json
from toolstand.run.runner import load_inputs, plan, run
from toolstand.sim import SimServer
from toolstand.spec.config import parse_config

ROOT = Path(__file__).resolve().parent.parent
ARMS = ["traceback", "allowed"]
FIRST_TURN = ("decision", "judgement", "transport_error", "request_hash")


def config(*, repair: dict[str, Any] | None, parallelism: int, reps: int = 4) -> dict[str, Any]:
    data: dict[str, Any] = {
        "runs": [
            {"provider": "sim", "model": "sim-sloppy", "api": "openai-chat", "base_url": "sim"}
        ],
        "system_prompt": "prompts/delivery-router-v1.txt",
        "tools": "contracts/delivery_tools.json",
        "cases": "cases/delivery.jsonl",
        "repetitions": reps,
        "parallelism": parallelism,
        "sim": {"seed": 3},
    }
    if repair is not None:
        data["repair"] = repair
    return data


class Servers:
    """The simulators the runs of one test started (to read their request logs)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started: list[SimServer] = []
        outer = self

        class Recorded(SimServer):
            def __init__(self, *args: Any, **kw: Any) -> None:
                super().__init__(*args, **kw)
                outer.started.append(self)

        monkeypatch.setattr(toolstand.sim, "SimServer", Recorded)


def run_history(data: dict[str, Any], out: Path) -> list[dict[str, Any]]:
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    asyncio.run(run(inputs, out, progress_out=None))
    recs = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    return [r for r in recs if r["type"] == "attempt"]


def by_slot(recs: list[dict[str, Any]]) -> dict[tuple[str, str, int, str | None], dict[str, Any]]:
    return {(r["case_id"], r["mode"], r["attempt"], r.get("feedback")): r for r in recs}


def first_turn(rec: dict[str, Any]) -> bytes:
    """Turn 1 as judged, and the answer it was judged on (not the wall-clock ``created``
    an API stamps on it)."""
    answer = {k: v for k, v in rec["response"]["body"].items() if k != "created"}
    return orjson.dumps(
        {**{k: rec[k] for k in FIRST_TURN}, "answer": answer}, option=orjson.OPT_SORT_KEYS
    )


def test_arms_judge_turn_1_as_the_run_without_repair_does(tmp_path: Path) -> None:
    # eight in flight: the draws depend on the repetition, not on the arrival order
    repair = {"max_repairs": 2, "feedback": ARMS}
    arms = by_slot(run_history(config(repair=repair, parallelism=8), tmp_path / "arms.jsonl"))
    plain = by_slot(run_history(config(repair=None, parallelism=8), tmp_path / "plain.jsonl"))
    assert len(arms) == 2 * len(plain) > 0
    needed = 0
    for (case_id, mode, attempt, _), rec in plain.items():
        first = arms[(case_id, mode, attempt, ARMS[0])]
        second = arms[(case_id, mode, attempt, ARMS[1])]
        assert first_turn(first) == first_turn(rec) == first_turn(second), case_id
        assert first["repair"]["needed"] == second["repair"]["needed"]
        assert "first_turn_shared" not in first and second["first_turn_shared"] is True
        assert second["second_turn"] == first["second_turn"]  # one turn 2, copied
        if rec["second_turn"] is not None:
            for key in ("decision", "judgement", "request_hash", "transport_error"):
                assert first["second_turn"][key] == rec["second_turn"][key], (case_id, key)
        needed += first["repair"]["needed"]
    assert needed > 0  # sim-sloppy broke some calls: the arms had something to repair
    # the arms differ in their repair turns only, and did differ there
    differ = [
        k
        for k, r in arms.items()
        if k[3] == ARMS[0] and r["repair_turns"] != arms[(*k[:3], ARMS[1])]["repair_turns"]
    ]
    assert differ


def test_turn_1_is_requested_once_per_repetition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = Servers(monkeypatch)
    data = config(repair={"max_repairs": 1, "feedback": ARMS}, parallelism=4, reps=3)
    recs = run_history(data, tmp_path / "arms.jsonl")
    (sim,) = servers.started
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    repetitions = {(it.case.id, it.mode, it.attempt) for it in plan(inputs)}
    # every request the simulator answered is one the records account for: turn 1 and
    # turn 2 once per repetition, the repair turns per arm
    seconds = sum(1 for r in recs if r["second_turn"] and r["feedback"] == ARMS[0])
    repairs = sum(len(r["repair_turns"]) for r in recs)
    assert sim.requests_total == len(repetitions) + seconds + repairs
    first = Counter(case for _, case, is_first in sim.log if is_first)
    assert sum(first.values()) == len(repetitions) == len(recs) // 2
    assert all(n == 3 for n in first.values())  # three repetitions, whatever the arms


def test_resume_completes_the_arms_left_with_the_same_turn_1(tmp_path: Path) -> None:
    data = config(repair={"max_repairs": 1, "feedback": ARMS}, parallelism=4, reps=2)
    out = tmp_path / "arms.jsonl"
    whole = by_slot(run_history(data, out))
    # a killed run: the second arm of every repetition of two cases never got written
    lost = {"quote_complete", "boundary_decimal_comma"}
    lines = out.read_bytes().splitlines(keepends=True)
    kept = [
        x
        for x in lines
        if not (
            (r := orjson.loads(x))["type"] == "attempt"
            and r["case_id"] in lost
            and r["feedback"] == ARMS[1]
        )
    ]
    assert len(kept) < len(lines)
    out.write_bytes(b"".join(kept))
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    summary = asyncio.run(run(inputs, out, resume=True, progress_out=None))
    assert summary.written == len(lines) - len(kept)
    recs = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    again = by_slot([r for r in recs if r["type"] == "attempt"])
    assert again.keys() == whole.keys()  # the whole matrix, no duplicate
    for key, rec in again.items():
        if key[0] in lost and key[3] == ARMS[1]:
            # asked again, the simulator answers turn 1 as it did the first arm
            assert first_turn(rec) == first_turn(again[(*key[:3], ARMS[0])])


def test_demo_repair_arms_have_equal_needed_repair_denominators(tmp_path: Path) -> None:
    # `make demo-repair`'s config, with eight in flight instead of one
    data = orjson.loads((ROOT / "config.repair.json").read_bytes())
    data["parallelism"] = 8
    out = tmp_path / "demo-repair.jsonl"
    run_history(data, out)
    report = compute_files([out])
    results = to_json(report)["results"]
    assert [e["feedback"] for e in results] == data["repair"]["feedback"]
    needed = {e["repair"]["needed"] for e in results}
    assert len(needed) == 1 and needed.pop() > 0
    for name in ("first_attempt_validity", "raw_schema_validity", "decision_accuracy"):
        assert len({(e[name]["numerator"], e[name]["denominator"]) for e in results}) == 1
    text = render_table(report)
    assert "repair arms paired on the same failures" in text
    assert "traceback vs allowed " in text


def test_the_progress_line_counts_one_first_turn_request_per_repetition(tmp_path: Path) -> None:
    import io

    data = config(repair={"max_repairs": 1, "feedback": ARMS}, parallelism=2, reps=3)
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    only = {"direct_lookup", "quote_complete"}
    records = len(plan(inputs, only))
    progress = io.StringIO()
    asyncio.run(run(inputs, tmp_path / "run.jsonl", only=only, progress_out=progress))
    last = progress.getvalue().splitlines()[-1]
    assert last.startswith(f"[{records}/{records}]")
    assert f"  {records // len(ARMS)} first-turn requests planned" in last
