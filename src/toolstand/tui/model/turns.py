"""The turns of one attempt record as History shows them: turn 1, the repair turns as
turns 2…n (each with the feedback that was sent before it), then the second turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from toolstand.history import error_code


@dataclass(frozen=True)
class ShownTurn:
    number: int  # 1-based, as the attempt's conversation went
    label: str  # "turn 2 · repair 1 · feedback allowed"
    body: dict[str, Any]  # has request, response, decision (the record or a sub-record)
    repair: int | None = None  # the repair index for a repair turn


def attempt_turns(rec: dict[str, Any]) -> list[ShownTurn]:
    """Every turn of ``rec`` in conversation order; always at least turn 1."""
    out = [ShownTurn(1, "turn 1", rec)]
    for t in rec.get("repair_turns") or []:
        if not isinstance(t, dict):
            continue
        n = len(out) + 1
        label = f"turn {n} · repair {t.get('index')} · feedback {t.get('feedback')}"
        out.append(ShownTurn(n, label, t, t.get("index")))
    st = rec.get("second_turn")
    if isinstance(st, dict):
        n = len(out) + 1
        out.append(ShownTurn(n, f"turn {n} · second turn", st))
    return out


def verdict_line(rec: dict[str, Any]) -> str:
    """``pass``, ``fail [codes]`` or the transport failure of a record (or a turn of it)."""
    te = rec.get("transport_error")
    if isinstance(te, dict):
        return f"transport error {te.get('code')}"
    j = rec.get("judgement")
    if not isinstance(j, dict):
        return "not judged"
    codes = [error_code(e) for e in j.get("errors") or []]
    return str(j.get("verdict")) + (f" [{', '.join(codes)}]" if codes else "")


def feedback_text(result: Any) -> list[str]:
    """A tool result sent as feedback, as lines: a traceback's text, a problem's detail
    and each violation with what is allowed."""
    if not isinstance(result, dict):
        return [orjson.dumps(result).decode()]
    error = result.get("error")
    if isinstance(error, str):
        return error.splitlines()
    if not isinstance(error, dict):
        return [orjson.dumps(result).decode()]
    out = [f"{error.get('status')} {error.get('code')}: {error.get('detail')}"]
    for e in error.get("errors") or []:
        if not isinstance(e, dict):
            continue
        line = f"  {e.get('pointer') or '(arguments)'}: received "
        line += f"{orjson.dumps(e.get('received')).decode()} — {e.get('message')}"
        if "allowed" in e:
            line += f"; allowed {orjson.dumps(e['allowed']).decode()}"
        out.append(line)
    return out


def repair_lines(rec: dict[str, Any], shown: ShownTurn | None = None) -> list[str]:
    """The repair loop in words: the summary, one line per repair turn, and for the
    repair turn on screen the feedback sent before it, in full."""
    summary = rec.get("repair")
    if not isinstance(summary, dict):
        return []
    if not summary.get("needed"):
        return [f"repair ({rec.get('feedback')}): turn 1 needed none"]
    k = summary.get("passed_after")
    state = f"repaired after {k}" if k is not None else "not repaired"
    if summary.get("transport_error"):
        state += f", ended by transport error {summary['transport_error']}"
    out = [f"repair ({rec.get('feedback')}): {state} in {summary.get('turns')} turn(s)"]
    for t in attempt_turns(rec)[1:]:
        if t.repair is None:
            continue
        valid = "valid" if t.body.get("valid") else "invalid"
        out.append(f"  {t.label}: {valid}, {verdict_line(t.body)}")
    if shown is not None and shown.repair is not None:
        out.append(f"feedback sent before {shown.label}:")
        for r in shown.body.get("tool_results") or []:
            out.append(f"  {r.get('name')} ({r.get('call_id')}):")
            out += [f"    {line}" for line in feedback_text(r.get("result"))]
        j = shown.body.get("judgement")
        if isinstance(j, dict):
            for e in j.get("errors") or []:
                out.append(f"  ✗ {error_code(e)} {e.get('path') or ''}".rstrip())
    return out
