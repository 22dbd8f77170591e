"""Table columns sized to their content within the width a table has.

Each column asks for its content's width (``want``) and can live with less (``least``,
where an id is cut in the middle). What the leasts leave over raises the columns to
their content in the order given, the one that matters most first; what is left after
that goes to one column (the widest content, whose cells are the longest).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from toolstand.tui.fit import cut_middle

# where an id may go on to a second line: after one of these (never inside a word)
_BREAK = re.compile(r"(?<=[_\-./:])")


@dataclass(frozen=True)
class Column:
    key: str
    want: int  # the content's width (its title's at least)
    least: int  # narrower than this it is not worth showing

    @property
    def floor(self) -> int:
        """Content narrower than the least needs no more than its own width."""
        return min(self.want, self.least)


def floors(columns: Sequence[Column]) -> int:
    return sum(c.floor for c in columns)


def fit_widths(
    room: int,
    columns: Sequence[Column],
    rest: str | None = None,
    goals: dict[str, int] | None = None,
) -> dict[str, int]:
    """Each column's width in ``room`` cells (separators already taken out): the floors,
    then the columns of ``goals`` raised to their goals, then each column raised to its
    content in order, then what is left to ``rest``."""
    widths = {c.key: c.floor for c in columns}
    spare = max(0, room - sum(widths.values()))
    goals = goals or {}
    for target in ({c.key: goals.get(c.key, 0) for c in columns}, {c.key: c.want for c in columns}):
        for key, wanted in target.items():
            grow = max(0, min(spare, wanted - widths[key]))
            widths[key] += grow
            spare -= grow
    if rest in widths:
        widths[rest] += spare
    return widths


def pick_layout(
    width: int,
    stages: Sequence[Sequence[Column]],
    *,
    gap: int,
    goals: dict[str, int],
    rest: str | None = None,
) -> dict[str, int]:
    """The widths of the first stage (a set of columns, the fullest first) that fits
    ``width`` and gives each column of ``goals`` at least its goal; else of the first
    stage that fits at all (no column given up for a goal it cannot reach anyway). Each
    column costs ``gap`` cells beside its width."""
    first: dict[str, int] | None = None
    for stage in stages:
        room = width - gap * len(stage)
        if floors(stage) > room:
            continue
        widths = fit_widths(room, stage, rest, goals)
        if all(widths[k] >= g for k, g in goals.items() if k in widths):
            return widths
        first = first or widths
    return first if first is not None else {c.key: c.floor for c in stages[-1]}


# the list is shown again on every filter keystroke: its ids' breaks are remembered
@lru_cache(maxsize=1 << 13)
def _breaks(text: str) -> tuple[int, ...]:
    return tuple(m.start() for m in _BREAK.finditer(text) if 0 < m.start() < len(text))


@lru_cache(maxsize=1 << 13)
def two_line_width(text: str) -> int:
    """The fewest cells in which ``text`` fits on at most two lines broken after a
    separator (``recovery_retryable_`` / ``problem``: 19); its length where it has none."""
    n = len(text)
    return min((max(p, n - p) for p in _breaks(text)), default=n)


def two_lines(text: str, width: int) -> list[str]:
    """``text`` in ``width`` cells: one line where it fits, else two broken after the
    last separator that lets both fit; else (too narrow) cut in the middle on one."""
    if len(text) <= width:
        return [text]
    fits = [p for p in _breaks(text) if p <= width and len(text) - p <= width]
    if not fits:
        return [cut_middle(text, width)]
    return [text[: fits[-1]], text[fits[-1] :]]


def fewest_two_line(
    pair: tuple[str, str],
    lengths: Sequence[tuple[int, int]],
    widths: dict[str, int],
    goals: dict[str, int],
) -> dict[str, int]:
    """``widths`` with the cells the two columns of ``pair`` have between them split
    anew so that the fewest rows (``lengths``: each row's two lengths) take a second
    line, neither column below its goal; on a tie the first gets more."""
    a, b = pair
    total = widths[a] + widths[b]
    best = (len(lengths) + 1, 0)
    counted = Counter(lengths).items()  # a thousand rows have a few dozen distinct pairs
    for wa in range(goals.get(a, 0), total - goals.get(b, 0) + 1):
        wrapped = sum(n for (la, lb), n in counted if la > wa or lb > total - wa)
        best = min(best, (wrapped, -wa))
    if best[0] > len(lengths):
        return widths
    return {**widths, a: -best[1], b: total + best[1]}
