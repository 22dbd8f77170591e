"""Filters over a HistoryIndex, vectorised over its columns (no Textual).

Each active filter turns one column into a 0/1 byte mask with ``bytes.translate`` (a
lookup table per column, C speed); masks combine as big integers; the matching row
numbers come out of ``itertools.compress``. Counts per facet value are taken over the
rows that match every *other* filter, so a chosen value still shows its alternatives.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from itertools import compress
from typing import Any

from toolstand.history.index import Facet, HistoryIndex

# facet name -> the index column it reads
FACETS: dict[str, str] = {
    "verdict": "verdict",
    "error": "errors",
    "provider": "provider",
    "model": "model",
    "case": "case",
    "mode": "mode",
    "run": "run",
    "stream": "stream",
    "feedback": "feedback",
    "category": "category",
    "day": "day",
}
TIME_PRESETS = ("any", "today", "yesterday", "last 7 days", "range")
# what a facet's missing value ("?") means, in words, where it has a meaning
MISSING_WORD = {"feedback": "none"}  # no repair arm: the attempt had no feedback


def shown_label(facet: str, label: str) -> str:
    """A facet value's label as a person reads it: "?" in words where it means one."""
    return MISSING_WORD.get(facet, label) if label == "?" else label


@dataclass(frozen=True)
class Query:
    """What to show: each set empty means "any"; days are inclusive local dates."""

    verdict: frozenset[str] = frozenset()
    error: frozenset[str] = frozenset()
    provider: frozenset[str] = frozenset()
    model: frozenset[str] = frozenset()
    case: frozenset[str] = frozenset()
    mode: frozenset[str] = frozenset()
    run: frozenset[str] = frozenset()
    stream: frozenset[str] = frozenset()  # "true", "false"; "?" before streaming existed
    feedback: frozenset[str] = frozenset()  # the repair arm; "?" without repair turns
    category: frozenset[str] = frozenset()
    days: tuple[date | None, date | None] | None = None
    text: str = ""

    @property
    def active(self) -> bool:
        return any(getattr(self, f) for f in FACETS if f != "day") or bool(
            self.days or self.text.strip()
        )

    def describe(self) -> str:
        """One line naming the active filters, for a status bar."""
        parts = [
            f"{f}={','.join(sorted(shown_label(f, v) for v in getattr(self, f)))}"
            for f in FACETS
            if f != "day"
        ]
        out = [p for p in parts if not p.endswith("=")]
        if self.days:
            lo, hi = self.days
            out.append(f"day {lo or '…'}..{hi or '…'}" if lo != hi else f"day {lo}")
        if self.text.strip():
            out.append(f'text "{self.text.strip()}"')
        return " · ".join(out)


def day_range(preset: str, today: date) -> tuple[date, date] | None:
    """The inclusive dates of a time preset ("any" and "range" give None)."""
    if preset == "today":
        return (today, today)
    if preset == "yesterday":
        y = today - timedelta(days=1)
        return (y, y)
    if preset == "last 7 days":
        return (today - timedelta(days=6), today)
    return None


@dataclass
class QueryResult:
    """The matching rows (ascending row numbers) of rows [start, end), with counts."""

    query: Query
    rows: array[int]
    counts: dict[str, Counter[Any]] = field(default_factory=dict)
    start: int = 0
    end: int = 0

    def extend(self, more: QueryResult) -> None:
        """Append the result of the same query over the rows that came next."""
        assert more.start == self.end and more.query == self.query
        self.rows.extend(more.rows)
        for name, c in more.counts.items():
            self.counts.setdefault(name, Counter()).update(c)
        self.end = more.end


def _column(ix: HistoryIndex, name: str) -> Facet:
    if name == "verdict":
        return ix.verdict
    if name == "errors":
        return ix.errors
    return ix.facets[name]


def _mask(codes: Any, allowed: Iterable[int], size: int) -> bytes:
    """A 0/1 byte per row: is the row's code among ``allowed``?"""
    allowed = set(allowed)
    if isinstance(codes, bytes | bytearray):
        table = bytearray(256)
        for c in allowed:
            table[c] = 1
        return bytes(codes.translate(table))
    wide = bytes(1 if c in allowed else 0 for c in range(size))
    return bytes(map(wide.__getitem__, codes))


def _and(masks: list[bytes], n: int) -> bytes | None:
    if not masks:
        return None
    if len(masks) == 1:
        return masks[0]
    acc = int.from_bytes(masks[0], "little")
    for m in masks[1:]:
        acc &= int.from_bytes(m, "little")
    return acc.to_bytes(n, "little")


def _or(a: bytes, b: bytes, n: int) -> bytes:
    return (int.from_bytes(a, "little") | int.from_bytes(b, "little")).to_bytes(n, "little")


def _allowed(ix: HistoryIndex, q: Query, facet: str) -> set[int] | None:
    """The codes of ``facet`` the query lets through, or None when it filters nothing."""
    col = _column(ix, FACETS[facet])
    if facet == "day":
        if not q.days:
            return None
        lo, hi = q.days
        return {
            c
            for c, d in enumerate(col.values)
            if d is not None and (lo is None or d >= lo) and (hi is None or d <= hi)
        }
    chosen: frozenset[str] = getattr(q, facet)
    if not chosen:
        return None
    if facet == "error":
        return {c for c, codes in enumerate(col.values) if chosen.intersection(codes)}
    return {c for c, v in enumerate(col.values) if value_label(v) in chosen}


def value_label(value: Any) -> str:
    """A facet value as queries and counts name it: None (a missing field) is "?", a
    boolean is spelled as in JSON."""
    if value is None:
        return "?"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _text_mask(ix: HistoryIndex, text: str, start: int, end: int) -> bytes | None:
    needle = text.strip().casefold()
    if not needle:
        return None
    n = end - start
    cases = ix.facets["case"]
    by_id = {c for c, v in enumerate(cases.values) if needle in value_label(v).casefold()}
    mask = _mask(cases.codes[start:end], by_id, len(cases.values))
    per_run: dict[int, set[int]] = {}
    for (run, case), user in list(ix.user_text.items()):
        if case not in by_id and needle in user.casefold():
            per_run.setdefault(run, set()).add(case)
    runs = ix.facets["run"].codes[start:end]
    for run, cs in per_run.items():
        hit = _and(
            [
                _mask(runs, {run}, len(ix.facets["run"].values)),
                _mask(cases.codes[start:end], cs, len(cases.values)),
            ],
            n,
        )
        assert hit is not None
        mask = _or(mask, hit, n)
    return mask


def _count(col: Facet, codes: Any, mask: bytes | None) -> Counter[Any]:
    """How many rows under ``mask`` hold each value of the column."""
    picked = codes if mask is None else compress(codes, mask)
    if isinstance(codes, bytes | bytearray):
        sel = bytes(picked)
        if len(col.values) <= 12:
            raw = Counter({c: sel.count(c) for c in range(len(col.values))})
        else:
            raw = Counter(sel)
    else:
        raw = Counter(picked)
    out: Counter[Any] = Counter()
    if col.name == "errors":
        for c, k in raw.items():
            for code in col.values[c]:
                out[code] += k
        return out
    for c, k in raw.items():
        if k:
            out[col.values[c] if col.name == "day" else value_label(col.values[c])] += k
    return out


def run_query(ix: HistoryIndex, q: Query, start: int = 0, end: int | None = None) -> QueryResult:
    """The rows of [start, end) (end: the rows indexed now) that match ``q``, with the
    count of every facet value among the rows matching the other filters."""
    end = ix.rows if end is None else min(end, ix.rows)
    n = end - start
    if n <= 0:
        return QueryResult(q, array("I"), {f: Counter() for f in FACETS}, start, max(start, end))
    cols = {f: _column(ix, FACETS[f]) for f in FACETS}
    codes = {f: cols[f].codes[start:end] for f in FACETS}
    masks: dict[str, bytes] = {}
    for f in FACETS:
        allowed = _allowed(ix, q, f)
        if allowed is not None:
            masks[f] = _mask(codes[f], allowed, len(cols[f].values))
    text = _text_mask(ix, q.text, start, end)
    base = [text] if text is not None else []
    everything = _and(base + list(masks.values()), n)
    counts: dict[str, Counter[Any]] = {}
    for f in FACETS:
        others = (
            everything
            if f not in masks
            else _and(base + [m for g, m in masks.items() if g != f], n)
        )
        counts[f] = _count(cols[f], codes[f], others)
    if everything is None:
        rows = array("I", range(start, end))
    else:
        rows = array("I", compress(range(start, end), everything))
    return QueryResult(q, rows, counts, start, end)
