"""The columns of a HistoryIndex (no Textual): categorical facets, timestamps by the
minute, and numeric columns that survive a stray value.

A categorical column holds a one-byte code per row (two bytes past 256 distinct
values), so a million attempts take tens of megabytes; query.py filters them
with ``bytes.translate`` and big-integer ANDs.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from datetime import date, datetime, tzinfo
from operator import itemgetter
from typing import Any


class _Codes(dict[Any, int]):
    """value -> code; a new value gets the next code (``map(ids.__getitem__, ...)`` then
    interns a whole column at C speed)."""

    def __init__(self, order: list[Any]) -> None:
        super().__init__()
        self.order = order

    def __missing__(self, value: Any) -> int:
        code = self[value] = len(self.order)
        self.order.append(value)
        return code


MINUTE = itemgetter(slice(0, 16))  # 2026-11-29T19:56
SECONDS = itemgetter(slice(17, 19))
ZONE = itemgetter(slice(-6, None))  # +00:00 (or the end of a stamp without one)


class Minutes(dict[str, float]):
    """A minute ("YYYY-MM-DDTHH:MM" + the stamp's last six characters) -> its epoch
    seconds; ``day`` holds its local date. Each minute is parsed once."""

    def __init__(self, tz: tzinfo | None) -> None:
        super().__init__()
        self.tz = tz
        self.day: dict[str, date | None] = {}

    def __missing__(self, key: str) -> float:
        zone = key[16:]
        if not (len(zone) == 6 and zone[0] in "+-" and zone[3] == ":"):
            zone = "+00:00"  # Z, or no zone at all: the runner writes UTC
        try:
            ts = datetime.fromisoformat(key[:16] + ":00" + zone).timestamp()
            day: date | None = datetime.fromtimestamp(ts, self.tz).date()
        except ValueError:
            ts, day = float("nan"), None
        self[key] = ts
        self.day[key] = day
        return ts


class Facet:
    """A categorical column: one small code per row, and the distinct values in order."""

    __slots__ = ("codes", "ids", "name", "values")

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: list[Any] = []
        self.ids = _Codes(self.values)
        self.codes: bytearray | array[int] = bytearray()

    def extend(self, values: Iterable[Any]) -> None:
        codes = list(map(self.ids.__getitem__, values))
        # one byte a row up to 256 values, two up to 65,536, then four; the codes move over
        # as a list of numbers (array() would read a bytearray as raw bytes)
        n = len(self.values)
        width = "B" if n <= 256 else "H" if n <= 1 << 16 else "I"
        if getattr(self.codes, "typecode", "B") != width:
            self.codes = array(width, list(self.codes))
        self.codes.extend(codes)

    def value(self, row: int) -> Any:
        return self.values[self.codes[row]]


def column(kind: str, values: list[Any], clean: Callable[[Any], Any]) -> array[Any]:
    try:
        return array(kind, values)
    except (TypeError, OverflowError):  # a null or a stray type: clean value by value
        return array(kind, map(clean, values))


def as_uint(x: Any) -> int:
    return x if type(x) is int and 0 <= x < 1 << 32 else 0


def as_float(x: Any) -> float:
    return float(x) if isinstance(x, int | float) else float("nan")
