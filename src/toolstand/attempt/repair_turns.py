"""Repair turns: the tool answers an invalid call with feedback; the model tries again.

design.md, Repair turn: when turn 1 has a call whose arguments do not parse or fail its
schema, the fake executor answers it with a validation problem in the attempt's feedback
style (feedback.py), sent through the adapter's ``append_tool_result`` after the
conversation so far; the next answer is judged against the same expectation, at most
``max_repairs`` times. Turn 1's judgement is never touched: the repair turns and their
summary sit beside it in the record.

The summary (``repair`` in the record) is all the metrics read:
``needed`` (turn 1 needed a repair), ``turns`` (repair turns sent), ``valid_after`` /
``passed_after`` (the repair turn whose calls were all schema-valid / whose judgement
passed, or None), ``transport_error`` (the code that ended the loop, or None: such an
attempt leaves the repair denominators) and the tokens the repair turns cost.
"""

from __future__ import annotations

from typing import Any

import httpx

from toolstand.adapters.base import Adapter, BuiltRequest, ToolResult
from toolstand.attempt.feedback import decision_needs_repair, repair_results
from toolstand.attempt.plan import AttemptPlan, AttemptState, RepairTurn
from toolstand.attempt.reading import Reading, read_recorded
from toolstand.attempt.turns import repair_turn
from toolstand.transport import RetryPolicy, request_hash, sanitize_request
from toolstand.types import RepairSummary, RepairTurnRecord


def repair_due(state: AttemptState, budget: int) -> bool:
    """The last turn has a call that needs repair and fewer than ``budget`` repair
    turns were sent (a turn that failed on the wire needs none)."""
    last = state.last_turn
    return (
        last is not None
        and len(state.repairs) < budget
        and decision_needs_repair(last.decision, state.plan.contract)
    )


def next_feedback(state: AttemptState) -> list[ToolResult] | None:
    """The results to send for the last turn's calls, or None when no repair is due:
    repairs off, budget spent, or the last turn needs none (or failed on the wire)."""
    if state.feedback is None or not repair_due(state, state.max_repairs):
        return None
    assert state.last_turn is not None and state.last_turn.decision is not None
    return repair_results(state.last_turn.decision, state.feedback, state.plan.contract, state.case)


async def repair_loop(state: AttemptState, client: httpx.AsyncClient, policy: RetryPolicy) -> None:
    """Repair turns until one needs no repair, the budget is spent or the wire fails."""
    while (results := next_feedback(state)) is not None:
        await repair_turn(state, results, client, policy)


# --- records ---


def _tokens(adapter: Adapter, body: Any) -> tuple[int | None, int | None]:
    u = adapter.usage(body)
    return u.input_tokens, u.output_tokens


def turn_record(rt: RepairTurn, adapter: Adapter) -> RepairTurnRecord:
    turn = rt.turn
    tin, tout = (None, None) if turn.failed else _tokens(adapter, turn.exchange.body)
    return {
        "index": rt.index,
        "feedback": rt.feedback,
        "transport_error": turn.exchange.transport_error_record(),
        "valid": rt.valid,
        "judgement": rt.judgement,
        "elapsed_ms": turn.exchange.elapsed_ms,
        "retries": max(0, len(turn.exchange.tries) - 1),
        "usage": {"input_tokens": tin, "output_tokens": tout},
        "tool_results": [r.to_record() for r in rt.results],
        "decision": turn.decision.to_dict() if turn.decision is not None else None,
        "tries": [t.to_dict() for t in turn.exchange.tries],
        "request_hash": request_hash(turn.built.http.body),
        "request": sanitize_request(turn.built.http),
        "response": turn.exchange.response_record(),
    }


def summary(needed: bool, turns: list[Any]) -> RepairSummary:
    """The repair summary of an attempt from its repair-turn records (see the module doc)."""
    valid_after = passed_after = None
    transport = None
    tin = tout = 0
    for t in turns:
        usage = t.get("usage") or {}
        tin += usage.get("input_tokens") or 0
        tout += usage.get("output_tokens") or 0
        if t.get("transport_error"):
            transport = t["transport_error"].get("code")
            break
        if t.get("valid") and valid_after is None:
            valid_after = t["index"]
        if (t.get("judgement") or {}).get("verdict") == "pass" and passed_after is None:
            passed_after = t["index"]
    return {
        "needed": needed,
        "turns": len(turns),
        "valid_after": valid_after,
        "passed_after": passed_after,
        "transport_error": transport,
        "input_tokens": tin,
        "output_tokens": tout,
    }


def repair_fields(state: AttemptState) -> dict[str, Any]:  # the keys AttemptRecord may hold
    """The record's ``feedback``, ``repair`` and ``repair_turns``; {} with repairs off."""
    if state.feedback is None:
        return {}
    turns = [turn_record(rt, state.target.adapter) for rt in state.repairs]
    summed = summary(state.repair_needed, turns)
    return {"feedback": state.feedback, "repair": summed, "repair_turns": turns}


def rejudge_repairs(
    rec: dict[str, Any], plan: AttemptPlan, built: BuiltRequest, first: Reading
) -> dict[str, Any]:
    """``repair`` and ``repair_turns`` of a record re-read from their raw bodies by
    ``read_recorded`` (strict mode's nulls read as absent as in turn 1); ``first`` is turn
    1 re-read. {} for a record without repairs."""
    if plan.feedback is None:
        return {}
    turns = []
    for t in rec.get("repair_turns") or []:
        t = dict(t)
        resp = t.get("response") or {}
        status = resp.get("status")
        if status is not None:
            r = read_recorded(plan, built, resp)
            decision = r.decision.to_dict() if r.decision is not None else None
            t.update(decision=decision, judgement=r.judgement, transport_error=r.error)
            t["valid"] = r.valid
        turns.append(t)
    return {"repair": summary(first.needs_repair, turns), "repair_turns": turns}
