"""An attempt's plan, made once, and the records of an attempt in progress.

Every caller that sends a turn or reads an answer (the runner, the Run screen, the pasted
body judge, ``rejudge``) starts from an ``AttemptPlan``: the case's own contract (its
``tools`` when it has them, taken once here), the tools offered and blocked, the request
settings, the secrets to scrub, and the arms the attempt belongs to. Nothing below the
plan decides any of these again, so the three callers cannot drift apart.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from toolstand.adapters import get_adapter
from toolstand.adapters.base import Adapter, BuiltRequest, RequestSettings, ToolResult
from toolstand.decision import ModelDecision
from toolstand.spec.cases import Case
from toolstand.spec.config import Config, RunSpec
from toolstand.spec.contract import Contract, ToolSpec
from toolstand.transport import Exchange, RetryPolicy
from toolstand.types import FeedbackStyle, FollowupJudgement, Judgement, Mode, RequestToolChoice
from toolstand.util.redact import scrubbable

__all__ = [
    "AttemptPlan",
    "AttemptState",
    "RepairTurn",
    "Target",
    "ToolResult",
    "Turn",
    "mode_applies",
    "offered_tools",
    "plan_attempt",
    "plan_recorded",
    "policy_for",
    "tool_choice_for",
]


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
    # the run's identity (spec/identity.py), written in each attempt's record
    identity: str | None = None

    def all_secrets(self, config: Config) -> list[str]:
        if self.secrets is None:
            self.secrets = scrubbable([self.key, *config.secrets()])
        return self.secrets

    @classmethod
    def make(
        cls, spec: RunSpec, base_url: str, key: str | None, identity: str | None = None
    ) -> Target:
        return cls(spec, get_adapter(spec.api), base_url, key, identity=identity)


@dataclass(frozen=True)
class AttemptPlan:
    """What one attempt sends and is judged against, decided once (see the module doc).

    ``feedback`` is the attempt's repair arm (None: no repair turns) and ``stream`` its
    streaming arm: a reading of an answer depends on the plan alone, so a streamed
    answer assembled elsewhere is read by the same ``read_turn``."""

    adapter: Adapter
    case: Case
    mode: Mode
    contract: Contract  # the case's own: case.contract_for, taken once
    offered: list[ToolSpec] | None  # None: the no-tools control
    blocked: list[str]
    settings: RequestSettings
    # the tool names the judge reads as offered ([] for the no-tools control; None:
    # every tool of the contract, for a stored record that names none)
    offered_names: list[str] | None
    target: Target | None = None  # None when nothing is sent (rejudge)
    secrets: list[str] = field(default_factory=list)
    feedback: FeedbackStyle | None = None
    max_repairs: int = 0
    stream: bool = False

    def arm(self, feedback: FeedbackStyle | None, max_repairs: int) -> AttemptPlan:
        """The same plan in another repair arm (None, 0: no repair turns)."""
        return replace(self, feedback=feedback, max_repairs=max_repairs if feedback else 0)


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


def plan_attempt(
    target: Target,
    case: Case,
    mode: Mode,
    contract: Contract,
    config: Config,
    feedback: FeedbackStyle | None = None,
    stream: bool = False,
) -> AttemptPlan:
    """The plan of an attempt of ``case`` on ``target``; ``contract`` is the project's
    (a case with its own tools offers and is judged on those). ``feedback`` names the
    repair arm; it has repair turns only when the config's budget is above 0. ``stream``
    names the stream arm: every turn is then sent in its API's streaming form."""
    own = case.contract_for(contract)
    offered, blocked = offered_tools(own, case, mode)
    settings = RequestSettings(
        tool_choice=tool_choice_for(case, mode),
        parallel_tool_calls=target.spec.parallel_tool_calls,
        temperature=config.temperature,
        max_output_tokens=config.max_output_tokens,
        options=target.spec.adapter_options(),
    )
    plan = AttemptPlan(
        target.adapter,
        case,
        mode,
        own,
        offered,
        blocked,
        settings,
        [t.name for t in offered] if offered is not None else [],
        target,
        target.all_secrets(config),
        stream=stream,
    )
    budget = config.repair.max_repairs if config.repair is not None else 0
    return plan.arm(feedback, budget) if feedback is not None and budget > 0 else plan


def plan_recorded(rec: Mapping[str, Any], case: Case, contract: Contract) -> AttemptPlan:
    """The plan a stored attempt was run under, for re-reading its bodies: its wire API,
    mode and arm, and the tools it recorded as offered (the case's own contract judges)."""
    own = case.contract_for(contract)
    names = rec.get("offered_tools")
    by_name = own.by_name
    offered = [by_name[n] for n in names or [] if n in by_name]
    mode = rec.get("mode", "auto")
    return AttemptPlan(
        get_adapter(rec["api"]),
        case,
        mode,
        own,
        None if mode == "no_tools" else offered,
        list(rec.get("blocked_tools") or []),
        RequestSettings(),
        names,
        feedback=rec.get("feedback"),
        max_repairs=len(rec.get("repair_turns") or []),
        stream=rec.get("stream") is True,
    )


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


def attempt_policy(policy: RetryPolicy, attempt_s: float) -> RetryPolicy:
    """``policy`` with the deadline of an attempt starting now (a headless attempt: the
    TUI steps through turns at the user's pace and has none; issue 31, H2)."""
    deadline = asyncio.get_running_loop().time() + attempt_s
    if policy.deadline is not None:
        deadline = min(deadline, policy.deadline)
    return replace(policy, deadline=deadline)


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
class RepairTurn:
    """One repair turn: the feedback sent and what came back."""

    index: int  # 1-based: the first repair is turn 2 of the attempt
    feedback: FeedbackStyle
    results: list[ToolResult]
    turn: Turn
    judgement: Judgement | None = None
    valid: bool = False  # calls, all schema-valid (turn_valid)


@dataclass
class AttemptState:
    """An attempt in progress; the TUI keeps one between its steps."""

    plan: AttemptPlan
    attempt: int
    run_id: str
    started_at: str = field(
        default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds")
    )
    first: Turn | None = None
    judgement: Judgement | None = None
    second: Turn | None = None
    second_results: list[ToolResult] = field(default_factory=list)
    second_judgement: FollowupJudgement | None = None
    repair_needed: bool = False
    repairs: list[RepairTurn] = field(default_factory=list)
    # turn 1 (and turn 2) copied from the attempt's first arm (design.md, Repair turn)
    first_turn_shared: bool = False
    # the reading of a last turn put off until the record is made (``reading``)
    unread: Callable[[], None] | None = None

    def reading(self, read: Callable[[], None], *, later: bool) -> None:
        """Read a turn's answer now, or with ``later`` when the attempt is recorded
        (``settle``): nothing is sent after the last turn, so its judgement can wait
        behind the requests ready to go out."""
        if not later:
            read()
            return
        assert self.unread is None, "one turn is read later: the last"
        self.unread = read

    def settle(self) -> None:
        """Read what ``later`` put off; what the reading raises is raised here (and
        again at the next call: the state is not complete)."""
        if self.unread is not None:
            self.unread()
            self.unread = None

    # what the plan decided, read where the state is at hand
    @property
    def target(self) -> Target:
        assert self.plan.target is not None, "a state that sends has a target"
        return self.plan.target

    @property
    def case(self) -> Case:
        return self.plan.case

    @property
    def mode(self) -> Mode:
        return self.plan.mode

    @property
    def offered(self) -> list[ToolSpec] | None:
        return self.plan.offered

    @property
    def blocked(self) -> list[str]:
        return self.plan.blocked

    @property
    def settings(self) -> RequestSettings:
        return self.plan.settings

    @property
    def secrets(self) -> list[str]:
        return self.plan.secrets

    @property
    def feedback(self) -> FeedbackStyle | None:
        return self.plan.feedback

    @property
    def max_repairs(self) -> int:
        return self.plan.max_repairs

    @property
    def last_turn(self) -> Turn | None:
        """The turn a repair answers: the last repair turn, else turn 1."""
        return self.repairs[-1].turn if self.repairs else self.first
