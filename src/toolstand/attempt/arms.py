"""A whole attempt, headless, in each of its feedback arms from one first turn.

design.md, Repair turn: the arms of one (run, case, mode, repetition) share one first
turn. Turn 1 is requested once and every arm branches from that response, so the arms
repair the same failures and compare paired per (case, repetition); only the repair
turns differ per arm. Turn 2 (the followup after the fake executor's results) answers
turn 1's calls, whatever the repairs did, so it is requested once as well. The records
after the first arm hold a copy of both with ``first_turn_shared: true``. A turn 1 that
failed on the wire is one failure, recorded once per arm (each arm's denominators leave
it out, as they would without the sharing).
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Sequence

import httpx

from toolstand.adapters.base import BuiltRequest
from toolstand.attempt.plan import (
    AttemptPlan,
    AttemptState,
    Target,
    attempt_policy,
    plan_attempt,
)
from toolstand.attempt.record import record
from toolstand.attempt.repair_turns import repair_loop
from toolstand.attempt.turns import (
    default_results,
    first_template,
    first_turn,
    second_turn,
    wants_second_turn,
)
from toolstand.judge.verdict import followup_possible
from toolstand.spec.cases import Case
from toolstand.spec.config import Config
from toolstand.spec.contract import Contract
from toolstand.transport import RetryPolicy
from toolstand.types import AttemptRecord, FeedbackStyle, Mode


async def play_arms(
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
    arms: Sequence[FeedbackStyle | None] = (None,),
    stream: bool = False,
    read_last_later: bool = False,
    prepared: dict[Hashable, tuple[AttemptPlan, BuiltRequest]] | None = None,
) -> list[AttemptState]:
    """Every turn of one repetition in every arm of ``arms``: each arm's finished state,
    in that order, for ``record`` (the runner records them after its next requests have
    gone out); ``stream``: its stream arm (each stream arm has its own turn 1).
    ``read_last_later``: the answer of a lone arm's last turn, after which nothing is
    sent, is read and judged by ``record`` (the states are complete after ``settle``).
    ``prepared``: the plans and turn 1 requests made so far in this run, kept by the
    caller (the same for every repetition of a case, mode, arm and stream arm)."""
    key = (id(target), id(case), mode, arms[0], stream)
    made = prepared.get(key) if prepared is not None else None
    if made is None:
        plan = plan_attempt(target, case, mode, contract, config, arms[0], stream)
        made = plan, first_template(plan, system)
        if prepared is not None:
            prepared[key] = made
    plan, template = made
    # one wall-clock deadline for every turn of the repetition (issue 31, H2)
    policy = attempt_policy(policy, config.timeouts.attempt_s)
    state = AttemptState(plan, attempt, run_id)
    # no repair turn can follow: turn 2 is last, and turn 1 when no followup can run
    lone = read_last_later and len(arms) == 1 and plan.feedback is None
    later = lone and not followup_possible(case, mode)
    await first_turn(state, system, client, policy, read_later=later, template=template)
    if not later and wants_second_turn(state):
        await second_turn(state, default_results(state), client, policy, read_later=lone)
    states = []
    for i, arm in enumerate(arms):
        branch = state if i == 0 else _branch(state, plan.arm(arm, plan.max_repairs))
        await repair_loop(branch, client, policy)
        states.append(branch)  # done: nothing changes it from here (the next arm is a copy)
    return states


def _branch(state: AttemptState, plan: AttemptPlan) -> AttemptState:
    """Another arm of ``state``: its turns 1 and 2 (copied, so no record shares a list
    with another) and no repair turn yet."""
    return AttemptState(
        plan,
        state.attempt,
        state.run_id,
        state.started_at,
        first=state.first,
        judgement=copy.deepcopy(state.judgement),
        second=state.second,
        second_results=list(state.second_results),
        second_judgement=copy.deepcopy(state.second_judgement),
        # turn 1 needs a repair or not whatever the arm: the contract is the same
        repair_needed=state.repair_needed if plan.feedback is not None else False,
        first_turn_shared=True,
    )


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
    """The whole attempt in one arm: first turn, repair turns when its arm has them,
    second turn when it applies, the record."""
    (state,) = await play_arms(
        target,
        case,
        mode,
        attempt,
        run_id,
        contract=contract,
        config=config,
        system=system,
        client=client,
        policy=policy,
        arms=(feedback,),
        stream=stream,
    )
    return record(state)
