"""One attempt: first turn, judgement, optional second turn, and its JSONL record.

Shared by the headless runner and the TUI's Run screen, which steps through the same
functions one at a time (so it can edit the tool results before the second turn).
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import httpx

from toolstand import __version__
from toolstand.adapters import get_adapter
from toolstand.adapters.base import Adapter, BuiltRequest, HttpRequest, RequestSettings, ToolResult
from toolstand.adapters.streaming import streamed
from toolstand.adapters.strict import nulls_as_absent
from toolstand.attempt.executor import execute
from toolstand.attempt.feedback import decision_needs_repair
from toolstand.attempt.repair_turns import RepairTurn, repair_fields, repair_loop
from toolstand.decision import ModelDecision
from toolstand.history import in_key_order
from toolstand.judge.verdict import followup_applies, judge, judge_followup, with_turn_errors
from toolstand.spec.cases import Case
from toolstand.spec.config import Config, RunSpec
from toolstand.spec.contract import Contract, ToolSpec
from toolstand.transport import Exchange, RetryPolicy, exchange, request_hash, sanitize_request
from toolstand.transport_stream import exchange_decision
from toolstand.types import (
    AttemptRecord,
    FeedbackStyle,
    FollowupJudgement,
    Judgement,
    Mode,
    RequestToolChoice,
    SecondTurnRecord,
    Usage,
)
from toolstand.util.redact import scrub_record, scrubbable

SCHEMA_VERSION = 1


@dataclass
class Target:
    """A configured run made concrete: the adapter, its base URL and its key."""

    spec: RunSpec
    adapter: Adapter
    base_url: str
    key: str | None
    # every configured key, not only this target's (a cookie or an echo can carry
    # another provider's key into this attempt); read once, like ``key``, at first use
    secrets: list[str] | None = None

    def all_secrets(self, config: Config) -> list[str]:
        if self.secrets is None:
            self.secrets = scrubbable([self.key, *config.secrets()])
        return self.secrets

    @classmethod
    def make(cls, spec: RunSpec, base_url: str, key: str | None) -> Target:
        return cls(spec, get_adapter(spec.api), base_url, key)


@dataclass
class Turn:
    """What one exchange produced."""

    built: BuiltRequest
    exchange: Exchange
    decision: ModelDecision | None

    @property
    def failed(self) -> bool:
        return self.exchange.error is not None


@dataclass
class AttemptState:
    """An attempt in progress; the TUI keeps one between its steps."""

    target: Target
    case: Case
    mode: Mode
    attempt: int
    run_id: str
    offered: list[ToolSpec] | None
    blocked: list[str]
    settings: RequestSettings
    secrets: list[str] = field(default_factory=list)  # Target.all_secrets
    started_at: str = field(
        default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds")
    )
    first: Turn | None = None
    judgement: Judgement | None = None
    second: Turn | None = None
    second_results: list[ToolResult] = field(default_factory=list)
    second_judgement: FollowupJudgement | None = None
    # the feedback arm (None: no repair turns), its budget and the turns sent
    feedback: FeedbackStyle | None = None
    max_repairs: int = 0
    repair_needed: bool = False
    repairs: list[RepairTurn] = field(default_factory=list)
    # the stream arm: requests in their API's streaming form (design.md, Streaming)
    stream: bool = False

    @property
    def last_turn(self) -> Turn | None:
        """The turn a repair answers: the last repair turn, else turn 1."""
        return self.repairs[-1].turn if self.repairs else self.first


def tool_choice_for(case: Case, mode: Mode) -> RequestToolChoice:
    """forced: the expected tool when all expected calls name one, else required."""
    if mode == "forced":
        names = {c.tool for c in case.expect.expected_calls}
        return names.pop() if len(names) == 1 else "required"
    return "auto"


def offered_tools(
    contract: Contract, case: Case, mode: Mode
) -> tuple[list[ToolSpec] | None, list[str]]:
    """The tools sent (None for the no-tools control) and the blocked names, never sent."""
    active = contract.subset(case.active_tools)
    blocked = [t.name for t in contract.tools if t not in active]
    if mode == "no_tools":
        return None, blocked
    if mode == "reversed":
        active = list(reversed(active))
    return active, blocked


def mode_applies(case: Case, mode: Mode) -> bool:
    """forced runs only cases that expect a call."""
    return mode != "forced" or case.expects_call


def start(
    target: Target,
    case: Case,
    mode: Mode,
    attempt: int,
    run_id: str,
    contract: Contract,
    config: Config,
    feedback: FeedbackStyle | None = None,
    stream: bool = False,
) -> AttemptState:
    """A new attempt; ``feedback`` names its repair arm (None: no repair turns), ``stream``
    its stream arm."""
    offered, blocked = offered_tools(contract, case, mode)
    settings = RequestSettings(
        tool_choice=tool_choice_for(case, mode),
        parallel_tool_calls=target.spec.parallel_tool_calls,
        temperature=config.temperature,
        max_output_tokens=config.max_output_tokens,
        options=target.spec.adapter_options(),
    )
    secrets = target.all_secrets(config)
    state = AttemptState(target, case, mode, attempt, run_id, offered, blocked, settings, secrets)
    state.stream = stream
    if feedback is not None and config.repair is not None and config.repair.max_repairs > 0:
        state.feedback, state.max_repairs = feedback, config.repair.max_repairs
    return state


def attempt_policy(policy: RetryPolicy, attempt_s: float) -> RetryPolicy:
    """``policy`` with the deadline of an attempt starting now (a headless attempt: the
    TUI steps through turns at the user's pace and has none)."""
    deadline = asyncio.get_running_loop().time() + attempt_s
    if policy.deadline is not None:
        deadline = min(deadline, policy.deadline)
    return dataclasses.replace(policy, deadline=deadline)


def policy_for(config: Config) -> RetryPolicy:
    r = config.retry
    return RetryPolicy(
        max_retries=r.max_retries,
        base_delay_s=r.base_delay_s,
        max_delay_s=r.max_delay_s,
        total_budget_s=r.total_budget_s,
        request_s=config.timeouts.request_s,
        max_response_bytes=config.max_response_bytes,
        stream_idle_s=config.stream_idle_timeout_s,
    )


async def send(
    state: AttemptState, built: BuiltRequest, client: httpx.AsyncClient, policy: RetryPolicy
) -> Turn:
    ex = await exchange(
        client,
        state.target.adapter,
        built,
        state.target.key,
        state.settings,
        policy,
        secrets=state.secrets,
    )
    adapter = state.target.adapter
    decision = None if ex.error is not None else exchange_decision(adapter, ex.body, ex.stream)
    if decision is not None and built.nullable:  # strict mode: a null there means absent
        decision = nulls_as_absent(decision, built.nullable)
    return Turn(built, ex, decision)


def continued(turn: Turn, adapter: Adapter, results: list[ToolResult]) -> BuiltRequest:
    """``turn``'s request with its answer and ``results`` appended (append_tool_result),
    to the same URL, with the same schema notes, settings and strict nullable paths."""
    assert turn.decision is not None
    body = adapter.append_tool_result(
        request_body=turn.built.http.body,
        response_body=turn.exchange.body,
        decision=turn.decision,
        results=results,
    )
    http = turn.built.http
    return BuiltRequest(
        HttpRequest(http.method, http.url, dict(http.headers), body, dict(http.params)),
        turn.built.schema_notes,
        turn.built.api_settings,
        turn.built.nullable,  # strict mode's nulls read as absent in every turn
        turn.built.stream,  # a streamed attempt streams every turn
    )


def judge_turn(state: AttemptState, decision: ModelDecision, contract: Contract) -> Judgement:
    """A turn's answer judged against the case's expectation, with the tools offered."""
    names = [t.name for t in state.offered] if state.offered is not None else []
    return judge(state.case, decision, contract, offered_tools=names, mode=state.mode)


async def first_turn(
    state: AttemptState,
    system: str | None,
    contract: Contract,
    client: httpx.AsyncClient,
    policy: RetryPolicy,
) -> Turn:
    built = state.target.adapter.build_request(
        base_url=state.target.base_url,
        model=state.target.spec.model,
        system=system,
        messages=state.case.conversation,
        tools=state.offered,
        settings=state.settings,
    )
    if state.stream:
        built = streamed(state.target.adapter.api, built)
    turn = await send(state, built, client, policy)
    state.first = turn
    if turn.decision is not None:
        state.judgement = judge_turn(state, turn.decision, contract)
        if state.feedback is not None:
            state.repair_needed = decision_needs_repair(turn.decision, contract)
    return turn


def wants_second_turn(state: AttemptState) -> bool:
    return state.judgement is not None and followup_applies(state.case, state.judgement, state.mode)


def default_results(state: AttemptState) -> list[ToolResult]:
    """What the fake executor returns for each call of the first turn."""
    assert state.first is not None and state.first.decision is not None
    specs = {t.name: t for t in state.offered or []}
    return [
        ToolResult(
            c.call_id, c.call_id_synthesized, c.name, execute(c, specs.get(c.name), state.case)
        )
        for c in state.first.decision.calls
    ]


async def second_turn(
    state: AttemptState, results: list[ToolResult], client: httpx.AsyncClient, policy: RetryPolicy
) -> Turn:
    """Send the tool results back with the assistant's own message; judge the followup."""
    assert state.first is not None
    built = continued(state.first, state.target.adapter, results)
    # append_tool_result already set tool_choice back to auto in the body; the
    # settings only carry the auth style from here on
    turn = await send(state, built, client, policy)
    state.second = turn
    state.second_results = results
    if turn.decision is not None and state.case.followup is not None:
        state.second_judgement = judge_followup(
            state.case.followup, turn.decision, [r.result for r in results]
        )
    return turn


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
    """The attempt's JSONL record (docs/records.md)."""
    assert state.first is not None
    first = state.first
    spec = state.target.spec
    judgement = state.judgement
    if judgement is not None and state.second_judgement is not None:
        judgement = with_turn_errors(judgement, state.second_judgement["errors"])
    usage = _usage(state)
    trace = first.exchange.stream
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
        "stream": state.stream,
        "ttfb_ms": first.exchange.ttfb_ms,
        "first_token_ms": trace.first_token_ms if trace is not None else None,
        "first_call_ms": trace.first_call_ms if trace is not None else None,
    }
    rec.update(repair_fields(state))  # type: ignore[typeddict-item]  # only its 3 keys
    scrubbed = scrub_record(cast("dict[str, Any]", rec), state.secrets)
    # small fields first, bulky bodies last: the report and the history index slice
    # each line before "request" instead of decoding it whole; the keys stay the same
    return cast(AttemptRecord, in_key_order(scrubbed))


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


async def run_attempt(
    target: Target,
    case: Case,
    mode: Mode,
    attempt: int,
    run_id: str,
    *,
    contract: Contract,
    config: Config,
    system: str | None,
    client: httpx.AsyncClient,
    policy: RetryPolicy,
    feedback: FeedbackStyle | None = None,
    stream: bool = False,
) -> AttemptRecord:
    """The whole attempt, headless: first turn, repair turns when its arm has them,
    second turn when it applies, the record."""
    contract = case.contract_for(contract)  # a case with its own tools offers those
    # one wall-clock deadline for every turn of the attempt (issue 31, H2)
    policy = attempt_policy(policy, config.timeouts.attempt_s)
    state = start(target, case, mode, attempt, run_id, contract, config, feedback, stream)
    await first_turn(state, system, contract, client, policy)
    await repair_loop(state, contract, client, policy)
    if wants_second_turn(state):
        await second_turn(state, default_results(state), client, policy)
    return record(state)
