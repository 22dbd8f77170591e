"""A byte-offset index of one JSONL history: the History screen's file layer (no Textual).

One row per attempt: its byte offset and compact summary columns (time, run, provider,
model, case, mode, attempt, verdict, error codes, latency). Categorical columns hold a
one-byte code per row (two bytes past 256 distinct values), so a million attempts take
tens of megabytes, and a filter is a ``bytes.translate`` per column plus big-integer ANDs,
all at C speed (query.py).

Speed comes from decoding as little as possible. A runner writes every attempt of a file
with the same top-level key order; the index learns that order from the first attempt
(LineShape, shape.py) and then, per line, decodes only the small-key segments it
needs with orjson (closed in place, never copied) and reads the judgement's verdict where
it starts. Error lists are decoded for failures only. A line that does not fit the
learned shape is decoded with history.decode_summary instead: the order is a speed
contract, never a correctness one. Request and response bodies are never decoded.

``update`` reads only whole lines, so it can be called again and again to follow a file
still being written; a torn last line is left for later and reported as a warning.
sidecar.py saves the columns so that the next session starts where this one ended.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, tzinfo
from operator import add, itemgetter
from typing import Any

import orjson

from toolstand.history.columns import (
    MINUTE,
    SECONDS,
    ZONE,
    Facet,
    Minutes,
    as_float,
    as_uint,
    column,
)
from toolstand.history.fields import TEXT_FIELDS, attempt_problem, field_problem, outcome_problem
from toolstand.history.read import HistoryWarning, decode_summary
from toolstand.history.shape import (
    ATTEMPT,
    ERROR,
    FAIL,
    JFAIL,
    JNULL,
    JPASS,
    PASS,
    UNJUDGED,
    VERDICTS,
    LineShape,
    error_code,
    flat_row,
)

__all__ = ["Facet", "HistoryIndex"]

_CACHE_LIMIT = 1 << 16  # error-list and timestamp caches: bounded, distinct values can be many


AFTER_SECOND_TURN = b'},"judgement":{"verdict":'


class HistoryIndex:
    """Offsets and summary columns of the attempts of one history file, grown by update()."""

    def __init__(self, path: str | os.PathLike[str], *, tz: tzinfo | None = None) -> None:
        self.path = os.fspath(path)
        self.tz = tz  # None: local time, for "today" and the time column
        self.rows = 0  # published last, after every column holds the new rows
        self.end = 0  # byte offset just past the last whole line read
        self.size_hint = 0  # the file's size when last read (for a progress bar)
        self.lines = 0
        self.offsets = array("q")
        self.times = array("d")  # epoch seconds
        self.latency = array("f")  # ms; NaN when unknown
        self.attempt = array("I")
        self.facets = {n: Facet(n) for n in ("run", "provider", "model", "case", "mode", "day")}
        self.verdict = Facet("verdict")
        self.verdict.extend((*VERDICTS, "?"))
        self.verdict.codes.clear()
        self.errors = Facet("errors")  # a code per distinct tuple of error codes
        self.headers: list[dict[str, Any]] = []
        self.simulated: set[tuple[str, str]] = set()
        self.user_text: dict[tuple[int, int], str] = {}  # (run code, case code) -> user message
        self.warnings: list[HistoryWarning] = []
        self.tail: HistoryWarning | None = None  # an unfinished last line, if any
        self.slow_lines = 0
        self.persisted = 0  # rows a sidecar file holds (history.sidecar)
        self._shape: LineShape | None = None
        self._chunk_line = 0  # lines read before the chunk being indexed
        self._err_cache: dict[bytes, tuple[str, ...]] = {}
        self._minutes = Minutes(tz)
        self._buf = bytearray(1 << 22)

    # --- reading -----------------------------------------------------------------------

    def size(self) -> int:
        return os.stat(self.path).st_size

    def update(self, max_bytes: int = 1 << 62, chunk: int = 1 << 22) -> int:
        """Index whole lines from ``end`` onwards (at most about ``max_bytes``); the number
        of attempts added. Raises OSError when the file cannot be read."""
        added = 0
        with open(self.path, "rb", buffering=0) as fh:
            self.size_hint = os.fstat(fh.fileno()).st_size
            fh.seek(self.end)
            budget = max_bytes
            while budget > 0:
                want = min(chunk, budget)
                if len(self._buf) < want:
                    self._buf = bytearray(want)
                view = memoryview(self._buf)
                n = fh.readinto(view[:want])
                view.release()
                if not n:
                    break
                last = self._buf.rfind(b"\n", 0, n)
                if last == -1 and budget < max_bytes:
                    break  # the budget ends mid-line: that line is read next time
                while last == -1:  # one line longer than the chunk: read on until it ends
                    more = fh.read(chunk)
                    if not more:
                        break
                    self._buf[n : n + len(more)] = more
                    last = self._buf.rfind(b"\n", n, n + len(more))
                    n += len(more)
                if last == -1:
                    break
                added += self._chunk(last + 1)
                budget -= last + 1
                self.end += last + 1
                fh.seek(self.end)
            self._check_tail(fh)
        return added

    def _check_tail(self, fh: Any) -> None:
        fh.seek(self.end)
        rest = fh.read(1 << 20)
        self.tail = None
        if rest.strip():
            what = "torn last line (no newline at end) skipped"
            try:
                if isinstance(orjson.loads(rest), dict):
                    what = "last line has no newline yet; waiting for it"
            except orjson.JSONDecodeError:
                pass
            self.tail = HistoryWarning(self.path, self.lines + 1, what)

    def all_warnings(self) -> list[HistoryWarning]:
        return self.warnings + ([self.tail] if self.tail else [])

    # --- one chunk of whole lines ------------------------------------------------------

    def _chunk(self, length: int) -> int:
        """Index the whole lines in ``_buf[:length]``; the number of attempts added."""
        buf = self._buf
        shape = self._shape
        self._chunk_line = self.lines  # the line before the chunk's first
        # one tuple per attempt: (offset, verdict, error codes, *dicts of the segments
        # in shape.always); a slowly decoded row repeats its one flat dict instead
        rows: list[tuple[Any, ...]] = []
        added = misses = 0
        find = buf.find
        pos = 0
        while pos < length:
            nl = find(b"\n", pos, length)
            self.lines += 1
            row = None
            if shape is not None and buf.startswith(ATTEMPT, pos):
                row = self._fast(buf, pos, nl, shape)
            if row is not None:
                rows.append(row)
                misses = 0
            elif nl - pos > 1:
                flat = self._slow(bytes(buf[pos:nl]), relearn=shape is None or misses >= 32)
                if self._shape is not shape:  # learned (or re-learned) from this line
                    if rows:
                        added += self._flush(rows, shape)
                        rows = []
                    shape = self._shape
                    misses = 0
                if flat is not None:
                    misses += 1
                    self.slow_lines += 1
                    width = len(shape.always) if shape is not None else 1
                    rows.append((pos, flat["_v"], flat["_e"], *([flat] * width)))
            pos = nl + 1
        return added + self._flush(rows, shape)

    def _fast(self, buf: bytearray, pos: int, nl: int, shape: LineShape) -> tuple[Any, ...] | None:
        """The row tuple of a line in the learned shape, or None."""
        row: list[Any] = [pos, 0, ()]
        at = pos
        jpos = -1
        find, loads = buf.find, orjson.loads
        for start, end, nkeys, judge_here in shape.plan:
            s = pos if start is None else find(start, at, nl)
            if s < 0:
                return None
            e = nl - 1 if end is None else find(end, s + 1, nl)
            if e < 0:
                return None
            # open and close the segment in place: the line is never copied
            s0, e0 = buf[s], buf[e]
            buf[s], buf[e] = 0x7B, 0x7D
            try:
                d = loads(memoryview(buf)[s : e + 1])
            except orjson.JSONDecodeError:
                return None
            finally:
                buf[s], buf[e] = s0, e0
            if type(d) is not dict or len(d) != nkeys:
                return None
            row.append(d)
            at = e
            if judge_here:
                lit = shape.judgement_lit
                jpos = find(lit, at, nl)
                if jpos >= 0:
                    jpos += len(lit)
                elif shape.judgement_guard is not None:
                    # the second turn holds a judgement of its own; the attempt's comes
                    # right after the second turn's object. Inside it, a judgement is
                    # preceded by a null transport_error, or is itself null.
                    jpos = find(AFTER_SECOND_TURN, at, nl)
                    if jpos < 0:
                        return None
                    jpos += 2 + len(b'"judgement":')
                else:
                    return None
        if buf.startswith(JPASS, jpos):
            row[1] = PASS
        elif buf.startswith(JFAIL, jpos):
            errors = self._errors(buf, jpos, nl, shape)
            if errors is None:
                return None
            row[1], row[2] = FAIL, errors
        elif buf.startswith(JNULL, jpos):
            te = row[shape.te_at].get("transport_error")
            if te is None:
                row[1] = UNJUDGED  # not indexed: _flush warns of it
            elif type(te) is dict and type(te.get("code")) is str:
                row[1], row[2] = ERROR, (te["code"],)
            else:
                return None  # the careful way names the fault
        else:
            return None
        return tuple(row)

    def _errors(
        self, buf: bytearray, jpos: int, nl: int, shape: LineShape
    ) -> tuple[str, ...] | None:
        s = buf.find(b'"errors":[', jpos, nl)
        if s < 0:
            return None
        e = buf.find(shape.errors_end, s, nl)
        if e < 0:
            return None
        blob = bytes(buf[s + 9 : e + 1])
        codes = self._err_cache.get(blob)
        if codes is None:
            try:
                errors = orjson.loads(blob)
            except orjson.JSONDecodeError:
                return None
            if not isinstance(errors, list):
                return None
            codes = tuple(dict.fromkeys(error_code(x) for x in errors))
            if len(self._err_cache) >= _CACHE_LIMIT:
                self._err_cache.clear()
            self._err_cache[blob] = codes
        return codes

    def _slow(self, line: bytes, relearn: bool) -> dict[str, Any] | None:
        """A line the fast path cannot read: an attempt as a flat dict, else None (a
        header is kept, anything else becomes a warning). An attempt read with
        ``relearn`` teaches the index its file's key order."""
        try:
            rec = orjson.loads(line) if relearn else decode_summary(line)
        except orjson.JSONDecodeError as exc:
            self.warnings.append(HistoryWarning(self.path, self.lines, f"malformed line: {exc}"))
            return None
        kind = rec.get("type") if isinstance(rec, dict) else type(rec).__name__
        if kind == "attempt":
            problem = attempt_problem(rec)
            if problem is not None:
                self.warnings.append(
                    HistoryWarning(self.path, self.lines, f"attempt skipped: {problem}")
                )
                return None
            if relearn:
                shape = LineShape(rec)
                if shape.ok:
                    self._shape = shape
            return flat_row(rec)
        self._other(kind, rec)
        return None

    def _other(self, kind: Any, rec: Any) -> None:
        """A line that is not an attempt: a run header is kept, anything else warned of."""
        if kind == "run":
            self.headers.append(rec)
            for r in rec.get("runs") or []:
                if isinstance(r, dict) and r.get("simulated"):
                    self.simulated.add((str(r.get("provider")), str(r.get("model"))))
            return
        self.warnings.append(
            HistoryWarning(self.path, self.lines, f"unknown record type {kind!r} skipped")
        )

    # --- lines whose records the caller holds --------------------------------------------

    def add_written(self, lines: Sequence[tuple[int, dict[str, Any]]], end: int) -> int:
        """Index lines that the caller itself just wrote, from the records it still holds
        (history.keep): ``(offset, row)`` pairs, where a row is ``flat_row(record)`` for
        an attempt and the record itself for anything else. The lines must be whole and
        continue the file from ``self.end``, the last one ending at ``end``: nothing is
        read. The number of attempts added."""
        rows: list[tuple[Any, ...]] = []
        base = self.end
        for offset, row in lines:
            self.lines += 1
            if "_v" not in row:
                self._other(row.get("type"), row)
                continue
            entry = (offset - base, row["_v"], row["_e"], row)
            problem = _row_problem(entry)
            if problem is None:
                rows.append(entry)
            else:
                self.warnings.append(
                    HistoryWarning(self.path, self.lines, f"attempt skipped: {problem}")
                )
        added = self._flush(rows, None)
        self.end = end
        return added

    # --- columns -----------------------------------------------------------------------

    def _flush(self, rows: list[tuple[Any, ...]], shape: LineShape | None) -> int:
        """Turn a chunk's rows into column entries (C-level maps over the rows)."""
        if not rows:
            return 0
        count = len(rows)
        cols = list(zip(*rows, strict=True))
        offs = cols[0]

        def col(key: str) -> list[Any]:
            dicts = cols[3 + (shape.at_of[key] if shape is not None else 0)]
            try:
                return list(map(itemgetter(key), dicts))
            except KeyError:  # a line with a key missing: read value by value
                return [d.get(key) for d in dicts]

        text = {key: col(key) for key in TEXT_FIELDS}
        attempts = column("I", col("attempt"), as_uint)
        if not _all_valid(text.values(), attempts, cols[1]):
            return self._flush(self._valid_rows(rows), shape)
        f = self.facets
        times, days = self._times(col("started_at"))
        # every column first; ``rows`` last: a reader sees a row only once it is whole
        f["run"].extend(text["run_id"])
        f["provider"].extend(text["provider"])
        f["model"].extend(text["model"])
        f["case"].extend(text["case_id"])
        f["mode"].extend(text["mode"])
        f["day"].extend(days)
        self.verdict.codes.extend(cols[1])
        self.errors.extend(cols[2])
        self.attempt.extend(attempts)
        # the network time of the attempt's turns: the figure the report's p50/p95 use
        self.latency.extend(column("f", col("elapsed_ms"), as_float))
        self.times.extend(times)
        base = self.end
        self.offsets.extend(base + o for o in offs)
        first = self.rows
        user_at = shape.at_of.get("user") if shape is not None else 0
        users = cols[3 + user_at] if user_at is not None else [{}] * count
        self._users(first, count, users, offs)
        self.rows = first + count
        return count

    def _valid_rows(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The rows of a chunk (``_buf`` positions) that attempt_problem would pass; each
        other one becomes a warning naming its line."""
        keep = []
        for row in rows:
            problem = _row_problem(row)
            if problem is None:
                keep.append(row)
                continue
            line = self._chunk_line + self._buf.count(b"\n", 0, row[0]) + 1
            self.warnings.append(HistoryWarning(self.path, line, f"attempt skipped: {problem}"))
        return keep

    def _users(
        self, first: int, count: int, dicts: Sequence[dict[str, Any]], offs: Sequence[int]
    ) -> None:
        """Remember each new run x case's user message (for the free-text filter)."""
        runs, cases = self.facets["run"].codes, self.facets["case"].codes
        pairs = dict.fromkeys(
            zip(runs[first : first + count], cases[first : first + count], strict=True)
        )
        want = {p for p in pairs if p not in self.user_text}
        if not want:
            return
        for i in range(count):
            p = (runs[first + i], cases[first + i])
            if p not in want:
                continue
            want.discard(p)
            text = dicts[i].get("user")
            if "user" not in dicts[i]:
                # once per run x case: the whole line, wherever its writer put "user"
                nl = self._buf.find(b"\n", offs[i])
                try:
                    text = orjson.loads(memoryview(self._buf)[offs[i] : nl]).get("user")
                except (orjson.JSONDecodeError, AttributeError):
                    text = None
            self.user_text[p] = text if isinstance(text, str) else ""
            if not want:
                break

    def _times(self, stamps: list[Any]) -> tuple[list[float], list[date | None]]:
        """Epoch seconds and local day of ISO-8601 stamps, parsed once per minute: the
        minute's epoch comes from a cache, the seconds are added column-wise."""
        try:
            keys = list(map(add, map(MINUTE, stamps), map(ZONE, stamps)))
            secs = list(map(float, map(SECONDS, stamps)))
        except (TypeError, ValueError):  # a stamp missing or not ISO-8601: one by one
            pairs = [self._one_time(x) for x in stamps]
            return [p[0] for p in pairs], [p[1] for p in pairs]
        minutes = self._minutes
        if len(minutes) > _CACHE_LIMIT:
            minutes.clear()
            minutes.day.clear()
        times = list(map(add, map(minutes.__getitem__, keys), secs))
        return times, list(map(minutes.day.__getitem__, keys))

    def _one_time(self, s: Any) -> tuple[float, date | None]:
        try:
            dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
        except (AttributeError, ValueError):
            return (float("nan"), None)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        ts = dt.timestamp()
        return ts, datetime.fromtimestamp(ts, self.tz).date()

    # --- reading rows back -------------------------------------------------------------

    def value(self, facet: str, row: int) -> Any:
        return self.facets[facet].value(row)

    def verdict_of(self, row: int) -> str:
        return str(self.verdict.value(row))

    def errors_of(self, row: int) -> tuple[str, ...]:
        return tuple(self.errors.value(row))

    def local_time(self, row: int) -> datetime | None:
        t = self.times[row]
        return None if t != t else datetime.fromtimestamp(t, self.tz)


def _all_valid(text: Iterable[list[Any]], attempts: array[int], verdicts: Sequence[int]) -> bool:
    """Whether every row of a chunk holds what attempt_problem asks for, tested column by
    column at C speed (a row without a judgement or a transport error is UNJUDGED)."""
    if UNJUDGED in verdicts or (attempts and min(attempts) == 0):
        return False
    return all(set(map(type, values)) <= {str} for values in text)


def _row_problem(row: tuple[Any, ...]) -> str | None:
    """attempt_problem's answer for an indexed row: its decoded segments and its verdict."""
    fields: dict[str, Any] = {}
    for d in row[3:]:
        fields.update(d)
    for key in (*TEXT_FIELDS, "attempt"):
        problem = field_problem(fields, key)
        if problem is not None:
            return problem
    return outcome_problem(None, None) if row[1] == UNJUDGED else None
