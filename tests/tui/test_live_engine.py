"""The Run screen's model goes through the same attempt engine as `run` and `rejudge`:
a case's own tools are offered live, and a pasted strict-mode body reads its nulls as
absent exactly as the live answer would (issue 27, bugs 1 and 2)."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.tui import write_config
from toolstand import transport_client
from toolstand.tui.model.live import LiveSession, judge_pasted
from toolstand.tui.model.project import load_project

LOOKUP_PARCEL: dict[str, Any] = {
    "name": "lookup_parcel",
    "description": "Find a parcel by its tracking number.",
    "effect": "read",
    "parameters": {
        "type": "object",
        "properties": {"tracking": {"type": "string"}},
        "required": ["tracking"],
        "additionalProperties": False,
    },
}
OWN_TOOLS_CASE: dict[str, Any] = {
    "id": "parcel_own_tools",
    "user": "Where is parcel TRK-42?",
    "tools": [LOOKUP_PARCEL],
    "expect": {"kind": "tool_call", "tool": "lookup_parcel", "arguments": {"tracking": "TRK-42"}},
}


def _add_case(project: Path, case: dict[str, Any]) -> None:
    with (project / "cases" / "delivery.jsonl").open("ab") as fh:
        fh.write(orjson.dumps(case) + b"\n")


async def test_a_case_with_its_own_tools_is_offered_them_live(project: Path) -> None:
    # bug 1: the Run screen sent the project's delivery tools, and the case failed
    # missing_call live while it passes headless
    _add_case(project, OWN_TOOLS_CASE)
    write_config(
        project,
        runs=[{"provider": "sim", "model": "sim-careful", "api": "openai-chat", "base_url": "sim"}],
    )
    proj = load_project(project)
    case = proj.casefile.by_id()["parcel_own_tools"]
    session = LiveSession(proj)
    try:
        state = await session.first(0, case, "auto")
        _, rec = session.append(state)
    finally:
        await session.close()
    assert rec["offered_tools"] == ["lookup_parcel"]
    assert rec["blocked_tools"] == []
    assert rec["decision"] is not None
    sent = rec["request"]["body"]["tools"]
    assert [t["function"]["name"] for t in sent] == ["lookup_parcel"]
    assert rec["judgement"] is not None
    assert rec["judgement"]["verdict"] == "pass", rec["judgement"]["errors"]
    assert rec["decision"]["calls"][0]["arguments"] == {"tracking": "TRK-42"}


def test_a_pasted_answer_is_judged_on_the_case_s_own_tools(project: Path) -> None:
    _add_case(project, OWN_TOOLS_CASE)
    proj = load_project(project)
    case = proj.casefile.by_id()["parcel_own_tools"]
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "lookup_parcel", "arguments": '{"tracking":"TRK-42"}'},
    }
    body = {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
            }
        ]
    }
    view = judge_pasted(proj, 0, case, "auto", 200, orjson.dumps(body).decode())
    assert view.judgement is not None and view.judgement["verdict"] == "pass"
    assert view.request is not None
    assert [t["function"]["name"] for t in view.request["body"]["tools"]] == ["lookup_parcel"]


NOTE_CONTRACT = {
    "name": "orders",
    "version": "1",
    "tools": [
        {
            "name": "get_order",
            "description": "Get an order by its id.",
            "effect": "read",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
                    "note": {"type": "string"},
                },
                "required": ["order_id"],
                "additionalProperties": False,
            },
        }
    ],
}
NOTE_CASE = {
    "id": "lookup_with_optional_note",
    "user": "Where is ORD-123456?",
    "expect": {"kind": "tool_call", "tool": "get_order", "arguments": {"order_id": "ORD-123456"}},
}


def test_a_pasted_strict_body_reads_its_nulls_as_absent_like_a_live_one(project: Path) -> None:
    # bug 2: judge_pasted never read strict mode's nulls as absent, so a null for the
    # optional `note` failed pasted (invalid_arguments, argument_mismatch) and passed in
    # `run` and `rejudge`
    (project / "contracts" / "delivery_tools.json").write_bytes(orjson.dumps(NOTE_CONTRACT))
    (project / "cases" / "delivery.jsonl").write_bytes(orjson.dumps(NOTE_CASE) + b"\n")
    run = {"provider": "p", "model": "m", "api": "openai-chat", "base_url": "https://x.test/v1"}
    write_config(project, runs=[{**run, "options": {"strict": True}, "api_key_env": "NO_KEY"}])
    proj = load_project(project)
    assert proj.config is not None
    case = proj.casefile.by_id()["lookup_with_optional_note"]
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_order", "arguments": '{"order_id":"ORD-123456","note":null}'},
    }
    body = {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
            }
        ]
    }
    view = judge_pasted(proj, 0, case, "auto", 200, orjson.dumps(body).decode())
    assert view.request is not None
    assert view.request["body"]["tools"][0]["function"]["strict"] is True
    assert view.judgement is not None
    assert [e["code"] for e in view.judgement["errors"]] == []
    assert view.judgement["verdict"] == "pass"
    assert view.decision is not None
    assert view.decision["calls"][0]["arguments"] == {"order_id": "ORD-123456"}


async def test_a_live_run_on_the_simulator_loads_no_ca_bundle(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the Run screen's first ctrl+g built one client for every run and loaded the CA
    # bundle for it (~0.1 s) even when every run is the simulator on loopback; each run
    # now has its own client, as the runner gives it (plain HTTP to the simulator)
    def no_bundle() -> ssl.SSLContext:
        raise AssertionError("the CA bundle was loaded for the simulator")

    monkeypatch.setattr(transport_client, "tls_context", no_bundle)
    write_config(
        project,
        runs=[
            {"provider": "sim", "model": "sim-careful", "api": "openai-chat", "base_url": "sim"},
            {"provider": "sim", "model": "sim-eager", "api": "anthropic", "base_url": "sim"},
        ],
    )
    proj = load_project(project)
    case = proj.casefile.by_id()["direct_lookup"]
    session = LiveSession(proj)
    try:
        states = [await session.first(i, case, "auto") for i in (0, 1)]
        records = [session.append(state)[1] for state in states]
    finally:
        await session.close()
    assert [r["model"] for r in records] == ["sim-careful", "sim-eager"]
    verdicts = [r["judgement"]["verdict"] if r["judgement"] else None for r in records]
    assert verdicts == ["pass", "pass"]
