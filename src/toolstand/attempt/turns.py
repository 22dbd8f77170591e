"""The turns of an attempt: send one, and turn 1, repair turns and turn 2 built on it.

Shared by the headless runner (attempt/arms.py) and the TUI's Run screen, which steps
through the same functions one at a time (so it can edit the tool results before the
second turn and the feedback before a repair turn). Every answer is read by
``reading`` (``read_turn``; here ``read_answer``, as the exchange classified it).
"""

from __future__ import annotations

from dataclasses import replace

import httpx

from toolstand.adapters.base import Adapter, BuiltRequest, HttpRequest, ToolResult
from toolstand.adapters.streaming import streamed
from toolstand.attempt.executor import execute
from toolstand.attempt.plan import AttemptPlan, AttemptState, RepairTurn, Turn
from toolstand.attempt.reading import Reading, read_answer
from toolstand.judge.verdict import followup_applies
from toolstand.spec.config import Config, RunSpec
from toolstand.transport import Exchange, RetryPolicy, exchange, lean, make_client
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
) -> tuple[Turn, Reading]:
    """One exchange, and its answer read (a repair turn's: judged like turn 1)."""
    ex = await _exchange(state, built, client, policy)
    reading = _read(state, built, ex)
    return Turn(built, ex, reading.decision), reading


async def _exchange(
    state: AttemptState, built: BuiltRequest, client: httpx.AsyncClient, policy: RetryPolicy
) -> Exchange:
    return await exchange(
        client,
        state.plan.adapter,
        built,
        state.target.key,
        state.settings,
        policy,
        secrets=state.secrets,
    )


def _read(
    state: AttemptState,
    built: BuiltRequest,
    ex: Exchange,
    results: list[ToolResult] | None = None,
) -> Reading:
    if ex.error is not None or ex.status is None:
        return Reading(error=ex.transport_error_record())
    sent = [r.result for r in results] if results is not None else None
    # the exchange classified the status and body already: an answer is read from here
    return read_answer(state.plan, built, ex.body, results=sent, trace=ex.stream)


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


def first_template(plan: AttemptPlan, system: str | None) -> BuiltRequest:
    """Turn 1's request as every repetition of ``plan`` sends it, in its streaming
    form for a stream arm; ``first_turn`` adds what differs per repetition."""
    target = plan.target
    assert target is not None
    built = first_request(plan, system, target.base_url, target.spec.model)
    return streamed(plan.adapter.api, built) if plan.stream else built


async def first_turn(
    state: AttemptState,
    system: str | None,
    client: httpx.AsyncClient,
    policy: RetryPolicy,
    *,
    read_later: bool = False,
    template: BuiltRequest | None = None,
) -> Turn:
    """Send turn 1 and judge it (and note whether its call needs a repair turn).
    ``read_later``: nothing is sent after it, so its answer is read and judged when
    the attempt is recorded (``AttemptState.settle``), not before the caller goes on.
    ``template``: ``first_template`` of the state's plan, made once for its repetitions
    (its headers are copied here, its body is sent and recorded as it is)."""
    target = state.target
    if template is None:
        built = first_template(state.plan, system)
    else:
        http = template.http
        headers = dict(http.headers)
        built = replace(
            template, http=HttpRequest(http.method, http.url, headers, http.body, dict(http.params))
        )
    if target.spec.simulated:
        built.http.headers[REPETITION_HEADER] = str(state.attempt)
        if state.case.id.isascii():
            built.http.headers[SIM_CASE_HEADER] = state.case.id  # kept by every later turn
    turn = Turn(built, await _exchange(state, built, client, policy), None)
    state.first = turn

    def read() -> None:
        reading = _read(state, built, turn.exchange)
        turn.decision = reading.decision
        state.judgement = reading.judgement
        state.repair_needed = reading.needs_repair

    state.reading(read, later=read_later)
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
    state: AttemptState,
    results: list[ToolResult],
    client: httpx.AsyncClient,
    policy: RetryPolicy,
    *,
    read_later: bool = False,
) -> Turn:
    """Send the tool results back with the assistant's own message; judge the followup.
    ``read_later``: as for ``first_turn``, when nothing is sent after it."""
    assert state.first is not None
    # append_tool_result already set tool_choice back to auto in the body; the
    # settings only carry the auth style from here on
    built = continued(state.first, state.plan.adapter, results)
    turn = Turn(built, await _exchange(state, built, client, policy), None)
    state.second = turn
    state.second_results = results

    def read() -> None:
        reading = _read(state, built, turn.exchange, results)
        turn.decision = reading.decision
        state.second_judgement = reading.followup

    state.reading(read, later=read_later)
    return turn
