"""An attempt's JSONL record (design.md, History), built from its state.

Small fields come first and bulky bodies last; the history's writer puts the keys in the
order its fast readers slice (history.read.in_key_order). Every configured secret is
scrubbed from the record before it leaves here.
"""

from __future__ import annotations

from typing import Any, cast

from toolstand import __version__
from toolstand.attempt.plan import AttemptState, Turn
from toolstand.attempt.repair_turns import repair_fields
from toolstand.judge.verdict import with_turn_errors
from toolstand.spec.config import RunSpec
from toolstand.transport import Exchange, request_hash, sanitize_request
from toolstand.types import AttemptRecord, SecondTurnRecord, Usage
from toolstand.util.redact import scrub_record

SCHEMA_VERSION = 1


def _tries(ex: Exchange) -> list[dict[str, Any]]:
    return [t.to_dict() for t in ex.tries]


def _usage(state: AttemptState) -> Usage:
    total_in = total_out = None
    for turn in _turns(state):
        if turn is None or turn.failed:
            continue
        u = state.target.adapter.usage(turn.exchange.body)
        if u.input_tokens is not None:
            total_in = (total_in or 0) + u.input_tokens
        if u.output_tokens is not None:
            total_out = (total_out or 0) + u.output_tokens
    return {"input_tokens": total_in, "output_tokens": total_out}


def _cost(spec: RunSpec, usage: Usage) -> float | None:
    if spec.prices is None or usage["input_tokens"] is None or usage["output_tokens"] is None:
        return None
    p = spec.prices
    return round(
        usage["input_tokens"] * p.input_per_mtok / 1e6
        + usage["output_tokens"] * p.output_per_mtok / 1e6,
        8,
    )


def record(state: AttemptState) -> AttemptRecord:
    """The attempt's JSONL record (docs/records.md); reads first the answer whose
    reading was put off (``AttemptState.settle``)."""
    state.settle()
    assert state.first is not None
    first = state.first
    trace = first.exchange.stream
    spec = state.target.spec
    judgement = state.judgement
    if judgement is not None and state.second_judgement is not None:
        judgement = with_turn_errors(judgement, state.second_judgement["errors"])
    usage = _usage(state)
    rec: AttemptRecord = {
        "type": "attempt",
        "schema_version": SCHEMA_VERSION,
        "run_id": state.run_id,
        "provider": spec.provider,
        "api": spec.api,
        "model": spec.model,
        "simulated": spec.simulated,
        "case_id": state.case.id,
        "category": state.case.category,
        "mode": state.mode,
        "attempt": state.attempt,
        "started_at": state.started_at,
        "elapsed_ms": _network_ms(state),
        "latency_ms": first.exchange.latency_ms,
        "retries": max(0, len(first.exchange.tries) - 1),
        "transport_error": first.exchange.transport_error_record(),
        "decision": first.decision.to_dict() if first.decision is not None else None,
        "judgement": judgement,
        "usage": usage,
        "cost_usd": _cost(spec, usage),
        "adapter_version": state.target.adapter.version,
        "toolstand_version": __version__,
        "api_settings": first.built.api_settings,
        "tool_choice": state.settings.tool_choice if state.offered is not None else None,
        "offered_tools": [t.name for t in state.offered] if state.offered is not None else [],
        "blocked_tools": state.blocked,
        "user": state.case.last_user_text,
        "schema_notes": [vars(n) for n in first.built.schema_notes],
        "tries": _tries(first.exchange),
        "request_hash": request_hash(first.built.http.body),
        "request": sanitize_request(first.built.http),
        "response": first.exchange.response_record(),
        "second_turn": _second_record(state),
        # the stream arm; turn 1's status line, first output and first call, in ms
        "stream": state.plan.stream,
        "ttfb_ms": first.exchange.ttfb_ms,
        "first_token_ms": trace.first_token_ms if trace is not None else None,
        "first_call_ms": trace.first_call_ms if trace is not None else None,
        # what tells this run from another of the same provider and model (api, base
        # URL, options, settings): part of the --resume key and of the report's group
        "run_identity": state.target.identity,
    }
    rec.update(repair_fields(state))  # type: ignore[typeddict-item]  # only its 3 keys
    if state.first_turn_shared:
        rec["first_turn_shared"] = True
    return cast(AttemptRecord, scrub_record(cast("dict[str, Any]", rec), state.secrets))


def _network_ms(state: AttemptState) -> float:
    """The attempt's latency: each turn's exchange, retries included. Never the wall time
    from start to record, which in the TUI holds the user's editing before turn 2."""
    return round(sum(t.exchange.elapsed_ms for t in _turns(state) if t is not None), 3)


def _turns(state: AttemptState) -> list[Turn | None]:
    return [state.first, *(rt.turn for rt in state.repairs), state.second]


def _second_record(state: AttemptState) -> SecondTurnRecord | None:
    turn = state.second
    if turn is None:
        return None
    second: SecondTurnRecord = {
        "tool_results": [r.to_record() for r in state.second_results],
        "transport_error": turn.exchange.transport_error_record(),
        "judgement": state.second_judgement,
        "elapsed_ms": turn.exchange.elapsed_ms,
        "retries": max(0, len(turn.exchange.tries) - 1),
        "decision": turn.decision.to_dict() if turn.decision is not None else None,
        "tries": _tries(turn.exchange),
        "request_hash": request_hash(turn.built.http.body),
        "request": sanitize_request(turn.built.http),
        "response": turn.exchange.response_record(),
    }
    return second
