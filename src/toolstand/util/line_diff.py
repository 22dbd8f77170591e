"""Two texts compared line by line (difflib), with long unchanged runs folded.

The History diff shows two attempts' raw bodies and normalized decisions this way; the
lines are data, so any screen (or a test) reads the same result.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

Tag = Literal["same", "removed", "added", "folded"]


@dataclass(frozen=True)
class DiffLine:
    """One line of the diff: in both (``same``), only in A (``removed``), only in B
    (``added``), or ``folded``: a run of ``count`` unchanged lines left out."""

    tag: Tag
    text: str
    a: int | None = None  # 1-based line number in A
    b: int | None = None  # 1-based line number in B
    count: int = 0

    @property
    def sign(self) -> str:
        return {"same": " ", "removed": "-", "added": "+", "folded": "…"}[self.tag]


def line_diff(a: str, b: str, context: int = 3) -> list[DiffLine]:
    """Every changed line of ``a`` → ``b`` with ``context`` unchanged lines around each
    change; a longer unchanged run is one ``folded`` line saying how many it holds."""
    la, lb = a.splitlines(), b.splitlines()
    out: list[DiffLine] = []
    matcher = difflib.SequenceMatcher(None, la, lb, autojunk=False)
    ops = matcher.get_opcodes()
    for n, (op, i1, i2, j1, j2) in enumerate(ops):
        if op == "equal":
            out += _equal_run(la, i1, i2, j1, context, first=n == 0, last=n == len(ops) - 1)
            continue
        out += [DiffLine("removed", la[i], a=i + 1) for i in range(i1, i2)]
        out += [DiffLine("added", lb[j], b=j + 1) for j in range(j1, j2)]
    return out


def _equal_run(
    la: list[str], i1: int, i2: int, j1: int, context: int, *, first: bool, last: bool
) -> list[DiffLine]:
    def same(i: int) -> DiffLine:
        return DiffLine("same", la[i], a=i + 1, b=j1 + i - i1 + 1)

    head = 0 if first else context  # lines kept after the change before this run
    tail = 0 if last else context  # lines kept before the change after it
    if i2 - i1 <= head + tail + 1:
        return [same(i) for i in range(i1, i2)]
    kept_head = [same(i) for i in range(i1, i1 + head)]
    kept_tail = [same(i) for i in range(i2 - tail, i2)]
    folded = i2 - i1 - head - tail
    note = DiffLine("folded", f"{folded} unchanged line{'s' if folded != 1 else ''}", count=folded)
    return [*kept_head, note, *kept_tail]


def changed(lines: list[DiffLine]) -> int:
    """How many lines differ (removed plus added)."""
    return sum(line.tag in ("removed", "added") for line in lines)
