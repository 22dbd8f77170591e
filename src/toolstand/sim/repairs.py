"""The simulated model in a repair turn: the tool answered its call with a validation
problem, and it tries again.

It reads the feedback style from the result actually sent (a traceback text, a problem
whose ``errors`` carry ``allowed`` or not, or a problem with prose only), so an edited
result changes the answer. ``sim-sloppy`` fixes its arguments at the declared rate of
that style, ``FEEDBACK_FIX_RATES``, times ``LATER_REPAIR_FACTOR`` for each repair turn
before this one (the first retry repairs most, the next fewer: seed 002); otherwise it
sends the same arguments again. Every other persona fixes them at once (they never send
invalid arguments of their own). The tests and the metric tests use these constants as
their oracle.
"""

from __future__ import annotations

import dataclasses

from toolstand.sim.personas import careful
from toolstand.sim.turn import Answer, Draws, ModelRequest, SimCall, ToolOutput
from toolstand.spec.cases import Case

FEEDBACK_FIX_RATES: dict[str, float] = {
    "traceback": 0.25,
    "path_value": 0.30,
    "allowed": 0.80,
    "allowed_prose": 0.75,
}
LATER_REPAIR_FACTOR = 0.5


def fix_rate(style: str, repair: int) -> float:
    """The chance sim-sloppy fixes its call in its ``repair``-th repair turn (1-based)."""
    return FEEDBACK_FIX_RATES[style] * LATER_REPAIR_FACTOR ** (repair - 1)


def feedback_style(output: ToolOutput) -> str | None:
    """The feedback style of a tool result, or None when it is no validation feedback."""
    if output.result.get("ok") is not False:
        return None
    error = output.result.get("error")
    if isinstance(error, str):
        return "traceback" if error.startswith("Traceback (most recent call last)") else None
    if not isinstance(error, dict) or error.get("code") != "INVALID_ARGUMENTS":
        return None
    entries = error.get("errors")
    if not isinstance(entries, list):
        return "allowed_prose"
    with_allowed = any(isinstance(e, dict) and "allowed" in e for e in entries)
    return "allowed" if with_allowed else "path_value"


def repair_answer(
    persona: str, case: Case | None, turn: ModelRequest, draws: Draws
) -> Answer | None:
    """The answer to a repair turn, or None when the trailing results hold no feedback
    (then the persona answers as usual). sim-flaky draws its faults first, elsewhere."""
    styles = [s for s in (feedback_style(r) for r in turn.results) if s is not None]
    if not styles or persona == "flaky":
        return None
    fresh = careful(case, dataclasses.replace(turn, results=[]))
    if persona != "sloppy" or fresh.kind != "calls":
        return fresh
    repair = max(1, len(turn.calls) // max(1, len(turn.results)))
    if draws.uniform() < fix_rate(styles[0], repair):
        return fresh
    return Answer("calls", calls=_again(turn))


def _again(turn: ModelRequest) -> list[SimCall]:
    """The calls of the last turn once more, arguments as the client sent them back."""
    n = max(1, len(turn.results))
    return [SimCall(c.name, dict(c.arguments)) for c in turn.calls[-n:]]
