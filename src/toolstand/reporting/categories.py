"""Per-category counts of a provider × model × mode (no Textual): for BFCL, where every
question file is a category, the category is the axis a reader compares first.

A case's category is the one its attempt records carry (``category``), the first seen
in file order; metrics.Collector and the report columns (reporting.columnar) collect
them the same way, into Report.categories. The rates of a category are its cases' counts
summed, exactly as a group's are its cases' (tally.GroupStats.metrics).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import orjson

from toolstand.history import decode_summary
from toolstand.reporting.stats import Rate
from toolstand.reporting.tally import CaseTally, GroupStats

NO_CATEGORY = "(none)"  # the row of the cases whose records name no category
# the rates the text report shows per category (the TUI table shows a few more)
TEXT_RATES = ("pass_rate", "normalized_pass_rate")


@dataclass
class CategoryRow:
    """One category of a group: how many cases, attempts and every rate over them."""

    category: str
    cases: int
    attempted: int
    scored: int
    rates: dict[str, Rate]


def line_category(line: bytes) -> str | None:
    """The ``category`` of an attempt line (None: absent, not a string, or unreadable)."""
    try:
        rec = decode_summary(line)
    except orjson.JSONDecodeError:
        return None
    value = rec.get("category") if isinstance(rec, dict) else None
    return value if type(value) is str else None


def by_category(g: GroupStats, categories: Mapping[str, str | None]) -> list[CategoryRow]:
    """The group's cases pooled per category, by name, the uncategorized last; empty
    when no case of the group has a category (the report then shows no table)."""
    members: dict[str, dict[str, CaseTally]] = {}
    for cid, tally in g.cases.items():
        name = categories.get(cid) or NO_CATEGORY
        members.setdefault(name, {})[cid] = tally
    if set(members) <= {NO_CATEGORY}:
        return []
    rows = []
    for name in sorted(members, key=lambda n: (n == NO_CATEGORY, n)):
        part = GroupStats(g.provider, g.model, g.mode, cases=members[name])
        rows.append(CategoryRow(name, len(part.cases), part.attempted, part.scored, part.metrics()))
    return rows


def lines(
    g: GroupStats,
    categories: Mapping[str, str | None],
    fmt: Callable[[Rate], str],
    visible: Callable[[str], str],
    width: int = 100,
) -> list[str]:
    """The text report's per-category table of one group (nothing without categories),
    in ``width`` columns: the rates whole, a long category name cut to what is left."""
    rows = by_category(g, categories)
    if not rows:
        return []
    rates = [[fmt(r.rates[m]) for m in TEXT_RATES] for r in rows]
    cols = [max(len(m), *(len(x[i]) for x in rates)) for i, m in enumerate(TEXT_RATES)]
    counts = max(5, *(len(str(r.cases)) for r in rows))
    names = [visible(r.category) for r in rows]
    label = f"per category ({len(rows)})"
    room = width - 4 - 1 - counts - sum(c + 2 for c in cols)
    wide = max(len(label) - 2, min(28, room, max(map(len, names))), 8)

    def line(first: str, cases: str, cells: list[str]) -> str:
        body = "  ".join(f"{x:<{c}}" for x, c in zip(cells, cols, strict=True))
        return f"{first} {cases:>{counts}}  {body}".rstrip()

    out = [line(f"  {label:<{wide + 2}}", "cases", list(TEXT_RATES))]
    for r, name, cells in zip(rows, names, rates, strict=True):
        name = name if len(name) <= wide else name[: wide - 1] + "…"
        out.append(line(f"    {name:<{wide}}", str(r.cases), cells))
    return out
