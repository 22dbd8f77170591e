"""The one vocabulary: the closed sets agree with what uses them, and the TypedDicts
declare exactly the keys a real run on the simulator writes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, get_args

import orjson

from toolstand.adapters import get_adapter
from toolstand.run.runner import load_inputs, run
from toolstand.sim import sim_base_url
from toolstand.spec.config import parse_config
from toolstand.types import (
    APIS,
    ERROR_CODES,
    FEEDBACK_STYLES,
    MODES,
    SCHEMA_SUBCODES,
    VERDICTS,
    AttemptRecord,
    CallRow,
    FollowupJudgement,
    JudgeError,
    Judgement,
    JudgeMetrics,
    RepairClass,
    RepairSummary,
    RepairTurnRecord,
    SecondTurnRecord,
    ToolResultRecord,
    TransportErrorRecord,
    Usage,
)

ROOT = Path(__file__).resolve().parent.parent


def test_the_tuples_are_the_literals() -> None:
    assert APIS == ("openai-chat", "openai-responses", "anthropic", "gemini")
    assert MODES == ("auto", "forced", "no_tools", "reversed")
    assert VERDICTS == ("pass", "fail")
    for api in APIS:  # every API has an adapter and a simulator route
        assert get_adapter(api).version.startswith(api + "/")
        assert sim_base_url("http://127.0.0.1:1", api).startswith("http://127.0.0.1:1")


def keys(typed: Any) -> tuple[frozenset[str], frozenset[str]]:
    return typed.__required_keys__, typed.__optional_keys__


def run_on_the_simulator(tmp_path: Path, models: tuple[str, ...], **extra: Any) -> list[Any]:
    """The attempt records of one run of ``models`` over the delivery cases."""
    data = {
        "runs": [
            {"provider": "sim", "model": model, "api": "openai-chat", "base_url": "sim"}
            for model in models
        ],
        "tools": "contracts/delivery_tools.json",
        "cases": "cases/delivery.jsonl",
        "system_prompt": "prompts/delivery-router-v1.txt",
        "repetitions": 1,
        **extra,
    }
    inputs = load_inputs(parse_config(orjson.dumps(data), "test-config", ROOT), "test-config")
    out = tmp_path / "run.jsonl"
    asyncio.run(run(inputs, out, progress_out=None))
    recs = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    return [r for r in recs if r["type"] == "attempt"]


def test_a_real_attempt_has_exactly_the_declared_keys(tmp_path: Path) -> None:
    attempts = run_on_the_simulator(
        tmp_path,
        ("sim-careful", "sim-eager", "sim-sloppy", "sim-flaky"),
        modes=["auto", "no_tools"],
        retry={"max_retries": 0, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 5},
        timeouts={"connect_s": 2, "read_s": 1},
        sim={"fault_rates": {"server_error": 0.2}},  # sim-flaky only
    )
    required, optional = keys(AttemptRecord)
    # runs with repair turns only (first_turn_shared: arms after the first)
    assert optional == {"feedback", "repair", "repair_turns", "first_turn_shared"}
    assert all(a.keys() == required for a in attempts)

    judged = [a["judgement"] for a in attempts if a["judgement"] is not None]
    failed = [a["transport_error"] for a in attempts if a["transport_error"] is not None]
    seconds = [a["second_turn"] for a in attempts if a["second_turn"] is not None]
    assert judged and failed and seconds  # the run reached every shape
    assert all(j.keys() == keys(Judgement)[0] for j in judged)
    assert all(j["metrics"].keys() == keys(JudgeMetrics)[0] for j in judged)
    assert all(e.keys() == keys(TransportErrorRecord)[0] for e in failed)
    assert all(a["usage"].keys() == keys(Usage)[0] for a in attempts)

    rows = [row for j in judged for row in j["calls"]]
    assert rows and all(row.keys() == keys(CallRow)[0] for row in rows)
    assert {row["repair"] for row in rows} <= set(get_args(RepairClass))

    errors = [e for j in judged for e in j["errors"]]
    need, may = keys(JudgeError)
    assert errors and all(need <= e.keys() <= need | may for e in errors)
    assert {e["code"] for e in errors} <= set(ERROR_CODES)
    assert {e["subcode"] for e in errors if "subcode" in e} <= set(SCHEMA_SUBCODES)
    assert len({e["code"] for e in errors}) > 3  # more than one kind of failure was seen

    assert all(st.keys() == keys(SecondTurnRecord)[0] for st in seconds)
    results = [r for st in seconds for r in st["tool_results"]]
    assert results and all(r.keys() == keys(ToolResultRecord)[0] for r in results)
    followups = [st["judgement"] for st in seconds if st["judgement"] is not None]
    assert followups and all(j.keys() == keys(FollowupJudgement)[0] for j in followups)

    assert {a["mode"] for a in attempts} == {"auto", "no_tools"}
    assert {j["verdict"] for j in judged} == set(VERDICTS)


def test_a_repair_attempt_adds_exactly_the_optional_keys(tmp_path: Path) -> None:
    attempts = run_on_the_simulator(
        tmp_path,
        ("sim-sloppy",),
        repetitions=2,
        repair={"max_repairs": 2, "feedback": ["allowed", "traceback"]},
    )
    required, optional = keys(AttemptRecord)
    # the second arm's records hold a copy of the first's turn 1, and say so
    first_arm = [a for a in attempts if a["feedback"] == "allowed"]
    second_arm = [a for a in attempts if a["feedback"] == "traceback"]
    assert first_arm and second_arm
    assert all(a.keys() == required | optional - {"first_turn_shared"} for a in first_arm)
    assert all(a.keys() == required | optional for a in second_arm)
    assert all(a["first_turn_shared"] is True for a in second_arm)
    assert all(a["repair"].keys() == keys(RepairSummary)[0] for a in attempts)
    turns = [t for a in attempts for t in a["repair_turns"]]
    assert turns and all(t.keys() == keys(RepairTurnRecord)[0] for t in turns)
    assert {t["feedback"] for t in turns} <= set(FEEDBACK_STYLES)
