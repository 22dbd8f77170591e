"""Network time and tries, worded the same on the Run screen and in History (no Textual).

Two times, never one word for both: a turn's network time (its tries on the wire and
the waits between them, as recorded in ``tries``), and the attempt's total over all its
turns (the record's ``elapsed_ms``). Time spent editing between turns is in neither.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def turn_ms(tries: Iterable[Mapping[str, Any]]) -> float | None:
    """One turn's network time: each try's time plus the wait after it; None when no
    try says how long it took (a pasted body, an older record)."""
    total, seen = 0.0, False
    for t in tries:
        if t.get("elapsed_ms") is None:
            continue
        seen = True
        total += float(t["elapsed_ms"]) + 1000.0 * float(t.get("waited_s") or 0.0)
    return total if seen else None


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f} ms"


def timing_line(this_turn: float | None, total: float | None, turns: int) -> str:
    """ "network 99 ms this turn, 240 ms all 2 turns" (one turn: both the same); "" when
    nothing went over the network."""
    if this_turn is None and total is None:
        return ""
    if turns <= 1:
        return f"network {_ms(this_turn if this_turn is not None else total)}, the only turn"
    return f"network {_ms(this_turn)} this turn, {_ms(total)} all {turns} turns"


def tries_lines(tries: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per try: its status and code, its time, the wait after it and why."""
    out: list[str] = []
    for i, t in enumerate(tries, start=1):
        status = f"HTTP {t['status']}" if t.get("status") is not None else "no response"
        line = f"try {i}: {status} {t.get('error_code') or 'ok'} {_ms(t.get('elapsed_ms'))}"
        if t.get("waited_s"):
            why = f"Retry-After {t['retry_after_s']:g} s" if t.get("retry_after_s") else "backoff"
            line += f", then waited {t['waited_s']:.2f} s ({why})"
        elif i == len(tries) and t.get("error_code"):
            line += ", not retried (final)"
        if t.get("message"):
            line += f": {t['message']}"
        out.append(line)
    return out
