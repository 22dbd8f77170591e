"""The columns of a HistoryIndex (no Textual): categorical facets, timestamps by the
minute, and numeric columns that survive a stray value.

A categorical column holds a one-byte code per row (two bytes past 256 distinct
values), so a million attempts take tens of megabytes; query.py filters them
with ``bytes.translate`` and big-integer ANDs.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime, timedelta, tzinfo
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
TAIL = itemgetter(slice(16, None))  # :05.123+00:00 (or :05, :05Z, :05.5-03:30...)
US = 1_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


class Minutes(dict[str, int]):
    """A minute ("YYYY-MM-DDTHH:MM", no zone) -> its epoch microseconds read as UTC. Each
    minute is parsed once; one that is not ISO-8601 raises ValueError."""

    def __missing__(self, key: str) -> int:
        dt = datetime.fromisoformat(key + ":00")
        if dt.tzinfo is not None or len(key) != 16:
            raise ValueError(key)
        us = self[key] = (dt.replace(tzinfo=UTC) - _EPOCH) // _US
        return us


class Tails(dict[str, int]):
    """The rest of a stamp after its minute (":SS", a fraction, a zone) -> the
    microseconds it adds to the minute read as UTC (its seconds less its zone's offset),
    parsed as datetime.fromisoformat parses the whole stamp; ValueError when it is none."""

    def __missing__(self, key: str) -> int:
        if key[:1] != ":":
            raise ValueError(key)
        dt = datetime.fromisoformat("2000-01-01T00:00" + key.replace("Z", "+00:00"))
        offset = dt.utcoffset()
        us = dt.second * US + dt.microsecond - (offset // _US if offset else 0)
        self[key] = us
        return us


class Days(dict[int, date]):
    """A minute since the epoch -> its local date (in ``tz``)."""

    def __init__(self, tz: tzinfo | None) -> None:
        super().__init__()
        self.tz = tz

    def __missing__(self, minute: int) -> date:
        day = self[minute] = datetime.fromtimestamp(minute * 60, self.tz).date()
        return day


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
        if type(self.codes) is bytearray:
            self.codes += bytearray(codes)  # bytearray() reads a list at C speed
        else:
            self.codes.extend(array(width, codes))

    def extend_from(self, values: list[Any], codes: bytearray | array[int]) -> None:
        """``extend`` with the rows of another facet (its values and codes), at C speed
        where both hold a byte a row (``bytes.translate``). The other's values are
        interned in their order, which is the order of their first rows: the codes are
        those ``extend`` gives its rows."""
        table = [self.ids[v] for v in values]
        if type(codes) is bytearray and len(self.values) <= 256 and type(self.codes) is bytearray:
            self.codes += codes.translate(bytes(table).ljust(256, b"\0"))
        else:
            self.extend(map(values.__getitem__, codes))

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
