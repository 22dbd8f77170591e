"""Repair turns: the tool answers an invalid call with feedback; the model tries again.

design.md, Repair turn: when turn 1 has a call whose arguments do not parse or fail its
schema, the fake executor answers it with a validation problem in the attempt's feedback
style (repair_feedback.py), sent through the adapter's ``append_tool_result`` after the
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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from toolstand.adapters.base import Adapter, ToolResult
from toolstand.adapters.schema import Parts
from toolstand.adapters.strict import nulls_as_absent
from toolstand.attempt.feedback import decision_needs_repair, repair_results
from toolstand.decision import ModelDecision
from toolstand.judge.verdict import judge
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract
from toolstand.transport import RetryPolicy, request_hash, sanitize_request
from toolstand.transport_stream import recorded_answer
from toolstand.types import FeedbackStyle, Judgement, RepairSummary, RepairTurnRecord

if TYPE_CHECKING:
    from toolstand.attempt.turns import AttemptState, Turn


@dataclass
class RepairTurn:
    """One repair turn: the feedback sent and what came back."""

    index: int  # 1-based: the first repair is turn 2 of the attempt
    feedback: FeedbackStyle
    results: list[ToolResult]
    turn: Turn
    judgement: Judgement | None = None
    valid: bool = False  # calls, all schema-valid (turn_valid)


def turn_valid(decision: ModelDecision | None, contract: Contract) -> bool:
    """A turn with calls, none of them to a contract tool with unparseable or
    schema-invalid arguments."""
    return (
        decision is not None
        and bool(decision.calls)
        and not decision_needs_repair(decision, contract)
    )


def repair_due(state: AttemptState, contract: Contract, budget: int) -> bool:
    """The last turn has a call that needs repair and fewer than ``budget`` repair
    turns were sent (a turn that failed on the wire needs none)."""
    last = state.last_turn
    return (
        last is not None
        and len(state.repairs) < budget
        and decision_needs_repair(last.decision, contract)
    )


def next_feedback(state: AttemptState, contract: Contract) -> list[ToolResult] | None:
    """The results to send for the last turn's calls, or None when no repair is due:
    repairs off, budget spent, or the last turn needs none (or failed on the wire)."""
    if state.feedback is None or not repair_due(state, contract, state.max_repairs):
        return None
    assert state.last_turn is not None and state.last_turn.decision is not None
    return repair_results(state.last_turn.decision, state.feedback, contract, state.case)


async def repair_turn(
    state: AttemptState,
    results: list[ToolResult],
    contract: Contract,
    client: httpx.AsyncClient,
    policy: RetryPolicy,
) -> RepairTurn:
    """Send ``results`` after the conversation so far; judge the answer like turn 1."""
    from toolstand.attempt.turns import continued, judge_turn, send

    assert state.feedback is not None
    last = state.last_turn
    assert last is not None
    built = continued(last, state.target.adapter, results)
    turn = await send(state, built, client, policy)
    rt = RepairTurn(len(state.repairs) + 1, state.feedback, results, turn)
    rt.valid = turn_valid(turn.decision, contract)
    if turn.decision is not None:
        rt.judgement = judge_turn(state, turn.decision, contract)
    state.repairs.append(rt)
    return rt


async def repair_loop(
    state: AttemptState, contract: Contract, client: httpx.AsyncClient, policy: RetryPolicy
) -> None:
    """Repair turns until one needs no repair, the budget is spent or the wire fails."""
    while (results := next_feedback(state, contract)) is not None:
        await repair_turn(state, results, contract, client, policy)


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
    rec: dict[str, Any],
    decision: ModelDecision,
    case: Case,
    contract: Contract,
    adapter: Adapter,
    nullable: Mapping[str, list[Parts]],
) -> dict[str, Any]:
    """``repair`` and ``repair_turns`` of a record re-parsed and re-judged from their raw
    bodies, strict mode's nulls read as absent as in turn 1; ``decision`` is turn 1's,
    re-parsed, and ``contract`` the case's own. {} for a record without repairs."""
    if rec.get("feedback") is None:
        return {}
    turns = []
    for t in rec.get("repair_turns") or []:
        t = dict(t)
        resp = t.get("response") or {}
        status = resp.get("status")
        if status is not None:
            err, parsed = recorded_answer(adapter, resp)
            if err is None and parsed is not None:
                d = nulls_as_absent(parsed, nullable)
                j = judge(
                    case,
                    d,
                    contract,
                    offered_tools=rec.get("offered_tools"),
                    mode=rec.get("mode", "auto"),
                )
                t.update(decision=d.to_dict(), judgement=j, transport_error=None)
                t["valid"] = turn_valid(d, contract)
            elif err is not None:
                error = {"code": err.code, "message": err.message, "status": status}
                t.update(decision=None, judgement=None, transport_error=error, valid=False)
        turns.append(t)
    needed = decision_needs_repair(decision, contract)
    return {"repair": summary(needed, turns), "repair_turns": turns}
