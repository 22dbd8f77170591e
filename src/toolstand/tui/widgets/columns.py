"""Table columns sized to their content within the width a table has.

Each column asks for its content's width (``want``) and can live with less (``least``,
where an id is cut in the middle). What the leasts leave over raises the columns to
their content in the order given, the one that matters most first; what is left after
that goes to one column (the widest content, whose cells are the longest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


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
