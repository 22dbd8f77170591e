"""The turns of an attempt: send one, and turn 1, repair turns and turn 2 built on it.

Shared by the headless runner (attempt/arms.py) and the TUI's Run screen, which steps
through the same functions one at a time (so it can edit the tool results before the
second turn and the feedback before a repair turn). Every answer is read by
``reading`` (``read_turn``; here ``read_answer``, as the exchange classified it).
"""

from __future__ import annotations

import httpx

from toolstand.adapters.base import Adapter, BuiltRequest, HttpRequest, ToolResult
from toolstand.adapters.streaming import streamed
from toolstand.attempt.executor import execute
from toolstand.attempt.plan import AttemptPlan, AttemptState, RepairTurn, Turn
from toolstand.attempt.reading import Reading, read_answer
from toolstand.judge.verdict import followup_applies
from toolstand.spec.config import Config, RunSpec
from toolstand.transport import RetryPolicy, exchange, lean, make_client
from toolstand.types import REPETITION_HEADER, SIM_CASE_HEADER


def client_for(config: Config, run: RunSpec, max_connections: int = 16) -> httpx.AsyncClient:
    """A client of ``run``'s own, with the config's timeouts: plain HTTP to the
    simulator on loopback (no CA bundle loaded, no proxy from the environment), the
    run's proxy, and TLS only where its base URL needs it (make_client)."""
    t = config.timeouts
    return make_client(
        connect_timeout=t.connect_s,
        read_timeout=t.read_s,
        max_connections=max_connections,
        loopback_only=run.simulated,
        plain_http=run.plain_http,
        proxy=run.proxy,
    )


def client_is_quick(run: RunSpec) -> bool:
    """Whether ``client_for(run)`` loads no CA bundle (plain HTTP, no proxy): quick to
    build inside the event loop."""
    return lean(loopback_only=run.simulated, plain_http=run.plain_http, proxy=run.proxy)


def first_request(plan: AttemptPlan, system: str | None, base_url: str, model: str) -> BuiltRequest:
    """Turn 1's request: the case's conversation with the plan's tools and settings."""
    return plan.adapter.build_request(
        base_url=base_url,
        model=model,
        system=system,
        messages=plan.case.conversation,
        tools=plan.offered,
        settings=plan.settings,
    )


async def send(
    state: AttemptState,
    built: BuiltRequest,
    client: httpx.AsyncClient,
    policy: RetryPolicy,
    results: list[ToolResult] | None = None,
) -> tuple[Turn, Reading]:
    """One exchange, and its answer read (``results``: the tool results of turn 2)."""
    ex = await exchange(
        client,
        state.plan.adapter,
        built,
        state.target.key,
        state.settings,
        policy,
        secrets=state.secrets,
    )
    if ex.error is not None or ex.status is None:
        return Turn(built, ex, None), Reading(error=ex.transport_error_record())
    sent = [r.result for r in results] if results is not None else None
    # the exchange classified the status and body already: an answer is read from here
    reading = read_answer(state.plan, built, ex.body, results=sent, trace=ex.stream)
    return Turn(built, ex, reading.decision), reading


def continued(turn: Turn, adapter: Adapter, results: list[ToolResult]) -> BuiltRequest:
    """``turn``'s request with its answer and ``results`` appended (append_tool_result),
    to the same URL, with the same headers, schema notes, settings and strict nullable
    paths (strict mode's nulls read as absent in every turn)."""
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
        turn.built.nullable,
        turn.built.stream,  # a streamed attempt streams every turn
    )


async def first_turn(
    state: AttemptState, system: str | None, client: httpx.AsyncClient, policy: RetryPolicy
) -> Turn:
    """Send turn 1 and judge it (and note whether its call needs a repair turn)."""
    target = state.target
    built = first_request(state.plan, system, target.base_url, target.spec.model)
    if state.plan.stream:
        built = streamed(state.plan.adapter.api, built)
    if target.spec.simulated:
        built.http.headers[REPETITION_HEADER] = str(state.attempt)
        if state.case.id.isascii():
            built.http.headers[SIM_CASE_HEADER] = state.case.id  # kept by every later turn
    turn, reading = await send(state, built, client, policy)
    state.first = turn
    state.judgement = reading.judgement
    state.repair_needed = reading.needs_repair
    return turn


async def repair_turn(
    state: AttemptState, results: list[ToolResult], client: httpx.AsyncClient, policy: RetryPolicy
) -> RepairTurn:
    """Send ``results`` (the feedback) after the conversation so far; judge the answer
    like turn 1."""
    assert state.feedback is not None
    last = state.last_turn
    assert last is not None
    turn, reading = await send(state, continued(last, state.plan.adapter, results), client, policy)
    rt = RepairTurn(
        len(state.repairs) + 1, state.feedback, results, turn, reading.judgement, reading.valid
    )
    state.repairs.append(rt)
    return rt


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
    # append_tool_result already set tool_choice back to auto in the body; the
    # settings only carry the auth style from here on
    turn, reading = await send(
        state, continued(state.first, state.plan.adapter, results), client, policy, results
    )
    state.second = turn
    state.second_results = results
    state.second_judgement = reading.followup
    return turn
