"""Stream faults: one per server bug class of providers.md section S6.2, by its id there.

A persona declares ``stream_faults`` (fault -> rate; personas.STREAM_FAULTS). For each
streamed request every fault of the persona's declaration that its API can show is drawn
in this module's order; a drawn fault applies only where it can (``call_lost`` needs two
calls, ``value_coerced`` a number ...). The draws of the faults that change what the
model said come from a stream keyed by the request without its repetition count, so the
same request shows the same bug every time, as a real server's parser would; the
transient ones (``error_inband``, ``no_terminal``) draw afresh per request, so a retry
can get through.

Faults of one group exclude each other (the ways of cutting one call's arguments, of
ending one choice, of mangling one batch of parallel calls: ``call_lost`` loses the
calls after the first, or their arguments; ``index_reuse`` gives them all index 0). A
group draws once, at its first member, and its members share that draw by their rates,
in order: each shows at its own rate, whatever its place (rates that add up past 1 are
shared in proportion). The members' own draws are still taken, so a fault's draw stays
where it is whatever the group's outcome.

Answer-level faults (``value_coerced``, ``args_empty_zero_param``, ``call_lost``, and
``args_lost`` on Gemini, whose calls arrive whole) change the answer before it is
rendered, so everything in the stream agrees with them; the others are applied by each
API's event builder (stream_chat, stream_responses, stream_anthropic, stream_gemini)
or by the framing (stream.Framing).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolstand.sim.turn import Answer, Draws, SimCall
from toolstand.spec.config import check_stream_faults as check_stream_faults
from toolstand.types import STREAM_FAULT_IDS

CHAT = ("openai-chat",)
EVENTS = ("openai-responses", "anthropic")  # the APIs with ``event:`` lines
TEXT_ARGS = ("openai-chat", "openai-responses", "anthropic")  # arguments streamed as text
ALL = ("openai-chat", "openai-responses", "anthropic", "gemini")

# fault id -> the APIs that can show it (providers.md S6.2, S2-S5)
STREAM_FAULTS: dict[str, tuple[str, ...]] = {
    "args_whole": TEXT_ARGS,
    "args_empty_zero_param": TEXT_ARGS,
    "args_lost": ALL,
    "call_lost": ALL,
    "value_coerced": ALL,
    "id_missing": CHAT,
    "id_per_delta": CHAT,
    "index_reuse": CHAT,
    "index_duplicate": CHAT,
    "name_repeated": CHAT,
    "opener_with_args": CHAT,
    "args_cumulative": TEXT_ARGS,
    "finish_wrong": CHAT,
    "finish_missing": CHAT,
    "finish_repeated": CHAT,
    "finish_with_delta": CHAT,
    "usage_elsewhere": CHAT,
    "error_inband": ALL,
    "no_terminal": ALL,
    "done_extra": ("openai-responses",),
    "comment_keepalive": ALL,
    "field_order": EVENTS,
    "json_padding": ALL,
    "choices_null": CHAT,
}
assert tuple(STREAM_FAULTS) == STREAM_FAULT_IDS  # the vocabulary, in its order
TRANSIENT = frozenset({"error_inband", "no_terminal"})
_GROUPS = (
    ("args_whole", "args_lost", "args_cumulative"),
    ("finish_wrong", "finish_missing", "finish_repeated", "finish_with_delta"),
    ("call_lost", "index_reuse"),
)
_GROUP_OF = {fault: group for group in _GROUPS for fault in group}
_NEEDS_CALL = frozenset(
    {
        *("args_whole", "args_lost", "args_cumulative", "id_missing", "id_per_delta"),
        *("index_duplicate", "name_repeated", "opener_with_args"),
    }
)


def pick(
    rates: Mapping[str, float], api: str, answer: Answer, stable: Draws, fresh: Draws
) -> frozenset[str]:
    """The faults this streamed answer shows (see the module's docstring)."""
    chosen: set[str] = set()
    winners: dict[tuple[str, ...], str | None] = {}
    for fault, apis in STREAM_FAULTS.items():
        u = (fresh if fault in TRANSIENT else stable).uniform()  # drawn always: aligned
        group = _GROUP_OF.get(fault)
        if group is not None:
            if group not in winners:  # the group's draw is its first member's
                winners[group] = _share(group, rates, u)
            drawn = winners[group] == fault
        else:
            drawn = u < rates.get(fault, 0.0)
        if drawn and api in apis and _applies(fault, answer):
            chosen.add(fault)
    return frozenset(chosen)


def _share(group: tuple[str, ...], rates: Mapping[str, float], u: float) -> str | None:
    """The member of ``group`` whose share of [0, 1) holds ``u``, each share its rate."""
    scale = max(1.0, sum(rates.get(f, 0.0) for f in group))
    edge = 0.0
    for fault in group:
        edge += rates.get(fault, 0.0) / scale
        if u < edge:
            return fault
    return None


def _applies(fault: str, answer: Answer) -> bool:
    calls = answer.calls if answer.kind == "calls" else []
    if fault in _NEEDS_CALL:
        return bool(calls)
    if fault == "args_empty_zero_param":
        return any(c.raw is None and not c.arguments for c in calls)
    if fault in ("call_lost", "index_reuse"):
        return len(calls) >= 2
    if fault == "value_coerced":
        return any(_has_number(c.arguments) for c in calls)
    return True


def apply_to_answer(answer: Answer, faults: frozenset[str], api: str) -> Answer:
    """The answer as the faulty server streams it (only the answer-level faults)."""
    if answer.kind != "calls":
        return answer
    calls = [SimCall(c.name, dict(c.arguments), c.raw) for c in answer.calls]
    if "value_coerced" in faults:
        calls = [SimCall(c.name, _coerced(c.arguments), c.raw) for c in calls]
    if "args_empty_zero_param" in faults:
        for c in calls:
            if c.raw is None and not c.arguments:
                c.raw = ""
    if "call_lost" in faults:
        empty = next((i for i, c in enumerate(calls) if not c.arguments or c.raw == ""), None)
        if empty is not None and empty < len(calls) - 1:
            # vLLM 47901: the arguments of every call after an empty one arrive as {}
            calls = calls[: empty + 1] + [SimCall(c.name, {}) for c in calls[empty + 1 :]]
        else:  # the second and later calls of the batch never arrive
            calls = calls[:1]
    if "args_lost" in faults and api == "gemini":
        calls = [SimCall(calls[0].name, {}), *calls[1:]]
    return Answer("calls", answer.text, calls, answer.truncated)


def lost(fragments: list[str]) -> list[str]:
    """args_lost: only the first half of the fragments arrive (at least one, never all)."""
    keep = max(1, len(fragments) // 2)
    if keep >= len(fragments):  # one fragment: it arrives cut in half
        text = fragments[0]
        return [text[: len(text) // 2]]
    return fragments[:keep]


def cumulative(fragments: list[str]) -> list[str]:
    """args_cumulative: each delta resends everything so far (a one-fragment call gets its
    whole string repeated by a final delta)."""
    if len(fragments) == 1:
        return [fragments[0], fragments[0]]
    return ["".join(fragments[: i + 1]) for i in range(len(fragments))]


def text_fragments(
    fragments: list[str], whole: str, faults: frozenset[str]
) -> tuple[list[str], str]:
    """The argument fragments a faulty server sends, and what its own whole copy says."""
    if "args_whole" in faults:
        return [whole], whole
    if "args_lost" in faults:
        return lost(fragments), whole
    if "args_cumulative" in faults:
        return cumulative(fragments), whole
    return fragments, whole


def _has_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, dict):
        return any(_has_number(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_number(v) for v in value)
    return False


def _coerced(value: Any) -> Any:
    """value_coerced (SGLang 35564): every number re-typed as a string, ``123`` -> ``"123"``."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return {k: _coerced(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_coerced(v) for v in value]
    return value
