"""Reading one provider answer: the only way toolstand turns a body into a decision and
a judgement.

``read_turn`` classifies the status and body (a transport failure is no decision),
parses the decision with the plan's adapter, reads strict mode's nulls as absent where
the request made an optional property nullable, and judges the answer: against the
case's expectation for turn 1 and repair turns, against the followup checks for turn 2.
The runner's live turns, the Run screen, a pasted body and ``rejudge`` all call it, so
one answer gets one ruling wherever it is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolstand.adapters.base import BuiltRequest, HttpRequest
from toolstand.adapters.strict import nulls_as_absent
from toolstand.adapters.tools import recorded_nullable
from toolstand.attempt.feedback import decision_needs_repair
from toolstand.attempt.plan import AttemptPlan
from toolstand.decision import ModelDecision
from toolstand.judge.verdict import followup_applies, judge, judge_followup, with_turn_errors
from toolstand.transport import decode_body, sanitize_request
from toolstand.transport_stream import StreamTrace, exchange_decision, recorded_answer
from toolstand.types import FollowupJudgement, Judgement, TransportErrorRecord

__all__ = [
    "Reading",
    "decode_body",
    "followup_applies",
    "read_answer",
    "read_decision",
    "read_recorded",
    "read_turn",
    "recorded_request",
    "request_record",
    "with_turn_errors",
]


@dataclass(frozen=True)
class Reading:
    """What one answer says: a transport error, or a decision and its judgement."""

    error: TransportErrorRecord | None = None
    decision: ModelDecision | None = None
    judgement: Judgement | None = None  # turn 1 and repair turns
    followup: FollowupJudgement | None = None  # turn 2
    # the decision has a call a repair turn would answer (only read in a repair arm)
    needs_repair: bool = False

    @property
    def valid(self) -> bool:
        """Calls, none of them needing repair (a repair turn's ``valid``)."""
        return self.decision is not None and bool(self.decision.calls) and not self.needs_repair


def read_turn(
    plan: AttemptPlan,
    built: BuiltRequest,
    status: int,
    headers: Mapping[str, str],
    body: Any,
    *,
    results: list[dict[str, Any]] | None = None,
) -> Reading:
    """``body`` (decoded: JSON, or the text of a non-JSON body) answered with ``status``
    to ``built``. ``results``: the tool results turn 2 sent (then the followup checks
    judge it); None for turn 1 and repair turns."""
    err = plan.adapter.classify_error(status, dict(headers), body)
    if err is not None:
        return Reading(error={"code": err.code, "message": err.message, "status": status})
    return read_answer(plan, built, body, results=results)


def read_answer(
    plan: AttemptPlan,
    built: BuiltRequest,
    body: Any,
    *,
    results: list[dict[str, Any]] | None = None,
    trace: StreamTrace | None = None,
) -> Reading:
    """``read_turn`` after the classification: the body is an answer (the transport
    classified it already on a live turn, so it is not asked twice). ``trace``: the
    stream it came as, whose assembled events are the answer."""
    return read_decision(plan, built, exchange_decision(plan.adapter, body, trace), results)


def read_recorded(
    plan: AttemptPlan,
    built: BuiltRequest,
    response: Mapping[str, Any],
    *,
    results: list[dict[str, Any]] | None = None,
) -> Reading:
    """A recorded response (its status set) read again with the current code: a
    transport failure, or its decision judged; a streamed one from its recorded events
    (``rejudge``). Raises ValueError for a body that cannot be what was recorded."""
    err, decision = recorded_answer(plan.adapter, dict(response))
    if err is not None:
        status = response.get("status")
        return Reading(error={"code": err.code, "message": err.message, "status": status})
    assert decision is not None
    return read_decision(plan, built, decision, results)


def read_decision(
    plan: AttemptPlan,
    built: BuiltRequest,
    decision: ModelDecision,
    results: list[dict[str, Any]] | None = None,
) -> Reading:
    """A parsed decision read: strict nulls as absent, then judged (see ``read_turn``)."""
    if built.nullable:  # strict mode: a null there means absent
        decision = nulls_as_absent(decision, built.nullable)
    if results is not None:
        followup = plan.case.followup
        fj = judge_followup(followup, decision, results) if followup is not None else None
        return Reading(decision=decision, followup=fj)
    judgement = judge(
        plan.case, decision, plan.contract, offered_tools=plan.offered_names, mode=plan.mode
    )
    needs = plan.feedback is not None and decision_needs_repair(decision, plan.contract)
    return Reading(decision=decision, judgement=judgement, needs_repair=needs)


def recorded_request(plan: AttemptPlan, request: Mapping[str, Any] | None) -> BuiltRequest:
    """A stored request as ``read_turn`` needs it: its body, and the optional properties
    strict mode made nullable there, recomputed from the case's own tools."""
    request = request or {}
    body = request.get("body")
    nullable = recorded_nullable(plan.adapter.api, body, plan.contract.by_name)
    http = HttpRequest(
        str(request.get("method") or "POST"),
        str(request.get("url") or ""),
        {},
        body if isinstance(body, dict) else {},
    )
    return BuiltRequest(http, nullable=nullable)


def request_record(built: BuiltRequest) -> dict[str, Any]:
    """The request as a record holds it: sanitized (no key, no secret header)."""
    return sanitize_request(built.http)
