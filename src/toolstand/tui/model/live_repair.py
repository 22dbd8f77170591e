"""Repair turns on the Run screen, one step at a time (no Textual).

After a turn 1 whose call fails its schema, the screen offers the fake executor's
validation problem in a feedback style, lets the user edit it, and sends it as a
repair turn (design.md, Repair turn), as many times as the budget allows: the config's
``repair.max_repairs``, or 3 when the config asks for none. The attempt's arm is the
style of its first repair turn; the record is the runner's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from toolstand.attempt.feedback import repair_results
from toolstand.attempt.plan import AttemptState, ToolResult
from toolstand.attempt.repair_turns import repair_due as due
from toolstand.spec.config import Config
from toolstand.types import FEEDBACK_STYLES, FeedbackStyle

MAX_REPAIRS = 3


def styles_for(config: Config) -> list[FeedbackStyle]:
    """The feedback styles to offer, the config's arms first."""
    arms = [a for a in config.feedback_arms if a is not None]
    return arms + [s for s in FEEDBACK_STYLES if s not in arms]


def budget(config: Config) -> int:
    r = config.repair
    return r.max_repairs if r is not None and r.max_repairs > 0 else MAX_REPAIRS


def repair_due(state: AttemptState, config: Config) -> bool:
    """The last turn has a call that needs repair and the budget is not spent."""
    return due(state, budget(config))


def style_of(state: AttemptState, config: Config) -> FeedbackStyle:
    """The attempt's feedback style: its arm once set, else the config's first."""
    return state.feedback or styles_for(config)[0]


def repair_offer(
    state: AttemptState, config: Config, *, again: bool = False
) -> tuple[list[ToolResult], list[dict[str, dict[str, Any]]], tuple[str, ...]]:
    """What the step panel opens on for the next repair turn: the feedback in the
    attempt's style, each call's feedback in every style (one pick away), the titles.
    ``again``: the first repair turn once more, answering turn 1 (a recorded attempt's
    repair sent again from the same turn 1)."""
    if again:
        state = replace(state, repairs=[])
    style = style_of(state, config)
    by_style = {s: feedback_for(state, s) for s in styles_for(config)}
    choices = [
        {f"feedback: {s}": results[i].result for s, results in by_style.items()}
        for i in range(len(by_style[style]))
    ]
    return by_style[style], choices, repair_title(len(state.repairs) + 1, style, again=again)


def repair_title(n: int, style: str, *, again: bool = False) -> tuple[str, ...]:
    """The step panel's titles for repair turn ``n`` in ``style``, the fullest first (the
    pane shows the first that fits: at 80 columns the longer ones are cut)."""
    if again:
        return (
            f"repair {n} again: feedback ({style}) · ctrl+l styles · ctrl+t sends (a new attempt)",
            f"repair {n} again ({style}) · ctrl+l styles · ctrl+t sends (a new attempt)",
            f"repair {n} again ({style}) · ctrl+l styles · ctrl+t sends",
        )
    return (
        f"repair {n}: feedback to send ({style}) · ctrl+r edit · ctrl+l other styles · ctrl+t sends",
        f"repair {n}: feedback ({style}) · ctrl+r edit · ctrl+l styles · ctrl+t sends",
        f"repair {n} ({style}) · ctrl+r edit · ctrl+l styles · ctrl+t sends",
    )


def feedback_for(state: AttemptState, style: str) -> list[ToolResult]:
    """What the fake executor answers the last turn's calls in ``style`` (to edit), on
    the case's own tools when it has them."""
    last = state.last_turn
    assert last is not None and last.decision is not None
    return repair_results(last.decision, style, state.plan.contract, state.case)


def arm(state: AttemptState, style: FeedbackStyle, config: Config) -> None:
    """Make ``state`` a repair attempt in ``style`` (its first repair turn fixes the arm)."""
    if state.feedback is None:
        state.plan = state.plan.arm(style, budget(config))
        state.repair_needed = True


def edited(results: list[ToolResult], texts: list[Any]) -> list[ToolResult]:
    """The results with each one's value replaced by the user's edit (a JSON object)."""
    return [
        ToolResult(r.call_id, r.call_id_synthesized, r.name, t if isinstance(t, dict) else r.result)
        for r, t in zip(results, texts, strict=True)
    ]
