"""The raw bodies and normalized decisions of two attempt records, turn by turn, as
line diffs (no Textual): what History's diff shows beside its field table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson

from toolstand.tui.model.turns import ShownTurn, attempt_turns
from toolstand.util.line_diff import DiffLine, changed, line_diff
from toolstand.util.printable import visible_lines

Part = Literal["raw", "decision"]


@dataclass(frozen=True)
class Section:
    """One turn's raw body (or decision) of A against B."""

    title: str  # "turn 1 · raw response body"
    lines: list[DiffLine]

    @property
    def changed(self) -> int:
        return changed(self.lines)


def _pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


def _raw_text(turn: ShownTurn | None) -> str:
    """A turn's response body as received: JSON pretty-printed in its own key order,
    text as it came; a stream's events when the record kept no body."""
    if turn is None:
        return ""
    response = turn.body.get("response")
    if not isinstance(response, dict):
        return "(no response recorded)"
    body = response.get("body")
    if isinstance(body, str):
        return body
    return _pretty(body if body is not None else response)


def _decision_text(turn: ShownTurn | None) -> str:
    if turn is None:
        return ""
    return _pretty(turn.body.get("decision"))


def _title(n: int, turns: tuple[ShownTurn | None, ShownTurn | None], what: str) -> str:
    labels = {t.label for t in turns if t is not None}
    label = (
        labels.pop()
        if len(labels) == 1
        else f"turn {n} (A: {_label(turns[0])}, B: {_label(turns[1])})"
    )
    return f"{label} · {what}"


def _label(turn: ShownTurn | None) -> str:
    return turn.label if turn is not None else "none"


def body_sections(a: dict[str, Any], b: dict[str, Any], part: Part) -> list[Section]:
    """Each turn of either attempt, its raw response body (``raw``) or normalized
    decision (``decision``) of A against B; a turn one side lacks diffs against nothing."""
    ta, tb = attempt_turns(a), attempt_turns(b)
    text = _raw_text if part == "raw" else _decision_text
    what = "raw response body" if part == "raw" else "normalized decision"
    out = []
    for i in range(max(len(ta), len(tb))):
        pair = (ta[i] if i < len(ta) else None, tb[i] if i < len(tb) else None)
        # control characters spelled before the diff, so what is compared is what shows
        lines = line_diff(visible_lines(text(pair[0])), visible_lines(text(pair[1])))
        out.append(Section(_title(i + 1, pair, what), lines))
    return out
