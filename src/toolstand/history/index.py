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
Before ``_fast``, quick.py tries a line whose head repeats an earlier one but for its
numbers (the parts around them cached by their bytes), and a large file read from its
start is indexed in two processes (split.py); both give exactly ``_fast``'s rows.

``update`` reads only whole lines, so it can be called again and again to follow a file
still being written; a torn last line is left for later and reported as a warning.
sidecar.py saves the columns so that the next session starts where this one ended.
"""

from __future__ import annotations

import gc
import os
from array import array
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, tzinfo
from itertools import repeat
from operator import add, floordiv, truediv
from typing import Any

import orjson

import toolstand.history.read as history_read
from toolstand.history import split
from toolstand.history.columns import (
    MINUTE,
    TAIL,
    US,
    Days,
    Facet,
    Minutes,
    Tails,
    as_float,
    as_uint,
    column,
)
from toolstand.history.fields import (
    ARM_TYPES,
    TEXT_FIELDS,
    arms_problem,
    attempt_problem,
    field_problem,
    header_problem,
    judgement_problem,
    outcome_problem,
    turn_types_problem,
)
from toolstand.history.quick import HeadTemplate, QuickPath, segment
from toolstand.history.read import (
    ERRORS,
    JUDGEMENT,
    SECOND,
    SECOND_NULL,
    HistoryWarning,
    second_keys,
    too_long,
)
from toolstand.history.report_rows import (
    HEAD_KEYS,
    ReportRows,
    facts,
    judgement_facts,
    record_facts,
    split_record,
)
from toolstand.history.scan import Scan, rows_of
from toolstand.history.shape import (
    ARMS,
    ATTEMPT,
    ERROR,
    FAIL,
    FLAT_AT,
    JNULL,
    NO_USER,
    PASS,
    UNJUDGED,
    VERDICTS,
    LineShape,
    error_code,
    flat_of,
    flat_row,
)

__all__ = ["Facet", "HistoryIndex"]

# the categorical columns besides verdict and errors; stream, feedback and category are
# the attempt's arms and its case's category (shape.ARMS)
FACET_NAMES = ("run", "provider", "model", "case", "mode", "day", *ARMS)
NAN = float("nan")
_CACHE_LIMIT = 1 << 16  # error-list and timestamp caches: bounded, distinct values can be many

ERRORS_LIST = b',"errors":['
CALLS_AFTER = b'],"calls":'


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
        self.facets = {n: Facet(n) for n in FACET_NAMES}
        self.verdict = Facet("verdict")
        self.verdict.extend((*VERDICTS, "?"))
        self.verdict.codes.clear()
        self.errors = Facet("errors")  # a code per distinct tuple of error codes
        self.headers: list[dict[str, Any]] = []
        self.simulated: set[tuple[str, str]] = set()
        self.user_text: dict[tuple[int, int], str] = {}  # (run code, case code) -> user message
        self.warnings: list[HistoryWarning] = []
        self.tail: HistoryWarning | None = None  # an unfinished last line, if any
        self.too_long: HistoryWarning | None = None  # a line past MAX_LINE_BYTES, if any
        self.slow_lines = 0
        self.persisted = 0  # rows a sidecar file holds (history.sidecar)
        self.report = ReportRows()  # what the report counts of each row (report_rows.py)
        self._shape: LineShape | None = None
        self._quick: QuickPath | None = None  # quick.py: learned from the first fast row
        self._scan: Scan | None = None  # scan.py: learned with it, reads the next chunks
        self._learn = True  # no template tried yet
        self._heads: set[tuple[str, ...]] = set()  # key sequences of heads already checked
        self._judgements: dict[bytes, tuple[int, str | None]] = {}
        self._err_cache: dict[bytes, tuple[str, ...]] = {}
        self._minutes, self._tails, self._days = Minutes(), Tails(), Days(tz)
        self._buf = bytearray(1 << 22)

    # --- reading -----------------------------------------------------------------------

    def size(self) -> int:
        return os.stat(self.path).st_size

    def update(self, max_bytes: int = 1 << 62, chunk: int = 1 << 22) -> int:
        """Index whole lines from ``end`` onwards (at most about ``max_bytes``); the number
        of attempts added. Raises OSError when the file cannot be read."""
        added = 0
        if self.too_long is not None:
            return 0  # a line past MAX_LINE_BYTES: nothing after it is read
        if max_bytes >= 1 << 62 and split.can_split(self, self.size()):
            cut = split.cut_point(self.path, self.size())
            if cut:  # a large file from its start: two processes (split.py)
                return split.update_in_two(self, cut)
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
                    if n > history_read.MAX_LINE_BYTES:
                        self.too_long = too_long(
                            self.path, self.lines + 1, history_read.MAX_LINE_BYTES
                        )
                        self.warnings.append(self.too_long)
                        break
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
        if b"\n" in rest or self.too_long is not None or (len(rest) == 1 << 20 and fh.read(1)):
            return  # whole lines still to index (a budgeted update): no tail yet
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
        """Index the whole lines in ``_buf[:length]``; the number of attempts added.

        The cyclic garbage collector is paused for the chunk (and left as it was found):
        a chunk makes some ten objects a line, none in a cycle, all freed by reference
        counting, and the collector's passes over them cost a tenth of the cold index.
        Between chunks it runs as usual, so a caller's own cycles are still collected."""
        was_on = gc.isenabled()
        gc.disable()
        try:
            return self._lines(length)
        finally:
            if was_on:
                gc.enable()

    def _lines(self, length: int) -> int:
        """_chunk's work: one row per attempt line of ``_buf[:length]``."""
        if self._scan is not None:  # a column at a time (scan.py)
            warned, odd = len(self.warnings), len(self.report.odd)
            return self._flush(self._scan.chunk(length), warned, odd)
        buf = self._buf
        view = memoryview(buf)
        # one tuple per attempt: (offset in the chunk, verdict, error codes, summary
        # dict, report facts, line number)
        rows: list[Any] = []  # tuples, and lists for rows whose facts are deferred
        warned, odd = len(self.warnings), len(self.report.odd)
        find = buf.find
        fast = self._fast
        quick = self._quick.row if self._quick is not None else None
        pos = 0
        try:
            while pos < length:
                nl = find(b"\n", pos, length)
                self.lines += 1
                row: Sequence[Any] | None = None
                if self._shape is not None and buf.startswith(ATTEMPT, pos):
                    if quick is not None:
                        row = quick(buf, view, pos, nl, self.lines)
                    if row is None:
                        row = fast(buf, view, pos, nl)
                        if self._learn and row is not None:
                            quick = self._learn_template(row[3])
                if row is not None:
                    rows.append(flat_of(row))
                elif nl - pos > 1:
                    row = self._slow(bytes(buf[pos:nl]), pos)
                    if row is not None:
                        rows.append(flat_of(row))
                pos = nl + 1
        finally:
            view.release()
        return self._flush(rows, warned, odd)

    def _one(
        self, buf: bytearray, view: memoryview, pos: int, nl: int, line: int
    ) -> tuple[Any, ...] | None:
        """The flat row of the line ``buf[pos:nl]`` (number ``line``) read as _lines reads
        it once the layout is learned, or None (for a line the scan leaves)."""
        self.lines = line
        row: Sequence[Any] | None = None
        if self._shape is not None and buf.startswith(ATTEMPT, pos):
            if self._quick is not None:
                row = self._quick.row(buf, view, pos, nl, line)
            if row is None:
                row = self._fast(buf, view, pos, nl)
        if row is None and nl - pos > 1:
            row = self._slow(bytes(buf[pos:nl]), pos)
        return None if row is None else flat_of(row)

    def _fast(self, buf: bytearray, view: memoryview, pos: int, nl: int) -> Sequence[Any] | None:
        """The row of a line in the runner's layout (history.read's key order), or None.
        Decoded in place (a segment is closed with ``}`` for the call, never copied):
        the head before ``second_turn``, the second turn's small keys when it has one,
        the judgement before ``errors`` (cached: repetitions repeat it byte for byte),
        the segment with run_id and started_at, and the error list of a failure."""
        find, loads = buf.find, orjson.loads
        if buf[nl - 1] != 0x7D:
            return None  # the report decodes such a line whole: so does the index
        q = find(SECOND, pos, nl)
        if q < 0:
            return None
        buf[q] = 0x7D
        try:
            head = loads(view[pos : q + 1])
        except orjson.JSONDecodeError:
            return None
        finally:
            buf[q] = 0x2C
        if type(head) is not dict or (tuple(head) not in self._heads and not self._head_ok(head)):
            return None
        st: dict[str, Any] | None = None
        if buf.startswith(SECOND_NULL, q):
            v = q + len(SECOND_NULL)
        else:
            second = second_keys(buf, q, nl)
            if second is None:
                return None
            st, r = second
            v = find(JUDGEMENT, r, nl)
            if v < 0:
                return None
            v += len(JUDGEMENT)
        errors: tuple[str, ...] = ()
        if buf.startswith(JNULL, v):
            e, j = v, None
            te = head["transport_error"]
            if te is None:
                return None  # read the careful way, whose check names the fault
            if type(te) is not dict or type(te.get("code")) is not str:
                return None
            verdict, errors = ERROR, (te["code"],)
        else:
            judged = self._judged(buf, view, v, nl)
            if judged is None:
                return None
            e, j = judged
            te = head["transport_error"]
            if te is not None:
                if type(te) is not dict or type(te.get("code")) is not str:
                    return None
                verdict, errors = ERROR, (te["code"],)
            elif j[0] == PASS:
                verdict = PASS
                if st and st.get("transport_error") and self._errors(buf, e, nl) is None:
                    return None  # the error table reads this list: it must be one
            else:
                found = self._errors(buf, e, nl)
                if found is None:
                    return None
                verdict, errors = FAIL, found
        assert self._shape is not None
        seg = segment(buf, view, self._shape, e, nl)
        if seg is None:
            return None
        f = facts(head, st, None if j is None else j[1], j is not None)
        if f is None and (turn_types_problem(head, st) or field_problem(head, "attempt")):
            return None  # a field of the wrong type: the careful way skips it, naming it
        head.update(seg)
        return (pos, verdict, errors, head, f, self.lines)

    def _learn_template(self, row: dict[str, Any]) -> Any:
        """The quick path (quick.py) from the first fast row's keys: its head's keys are
        the row's before the segment ``_fast`` added. Its ``row``, or None."""
        self._learn = False
        shape = self._shape
        assert shape is not None
        keys = list(row)
        head = keys[: len(keys) - shape.nkeys] if keys[-shape.nkeys :] == list(shape.keys) else []
        template = HeadTemplate(head)
        if not template.ok:
            return None
        self._quick = QuickPath(template, shape, self._judged, self._errors)
        scan = Scan(template, shape, self)
        self._scan = scan if scan.ok else None
        return self._quick.row

    def _head_ok(self, head: dict[str, Any]) -> bool:
        if head.get("type") != "attempt" or not head.keys() >= HEAD_KEYS:
            return False
        if len(self._heads) < 64:
            self._heads.add(tuple(head))
        return True

    def _judged(
        self, buf: bytearray, view: memoryview, v: int, nl: int
    ) -> tuple[int, tuple[int, str | None]] | None:
        """(where ``errors`` starts, the judgement's (verdict, report facts)) of the
        judgement starting at ``v``, cached by its bytes before ``errors``; or None."""
        e = buf.find(ERRORS, v, nl)
        if e < 0:
            return None
        blob = bytes(view[v:e])
        j = self._judgements.get(blob)
        if j is None:
            j = self._judgement(blob)
            if j is None:
                return None
        return e, j

    def _judgement(self, blob: bytes) -> tuple[int, str | None] | None:
        """(verdict, report facts) of a judgement's bytes before ``errors``."""
        if not blob.startswith(b'{"verdict":') or b',"metrics":{' not in blob:
            return None
        try:
            cut = orjson.loads(blob + b"}")
        except orjson.JSONDecodeError:
            return None
        if type(cut) is not dict or cut.get("verdict") not in ("pass", "fail"):
            return None
        if judgement_problem(cut) is not None:
            return None  # read the careful way, whose check names the fault
        j = (PASS if cut["verdict"] == "pass" else FAIL, judgement_facts(cut))
        if len(self._judgements) >= _CACHE_LIMIT:
            self._judgements.clear()
        self._judgements[blob] = j
        return j

    def _errors(self, buf: bytearray, e: int, nl: int) -> tuple[str, ...] | None:
        """The distinct codes of the error list starting at ``e`` (``"errors":[``)."""
        if not buf.startswith(ERRORS_LIST, e):
            return None
        c = buf.find(CALLS_AFTER, e, nl)
        if c < 0:
            return None
        blob = bytes(buf[e + len(ERRORS_LIST) - 1 : c + 1])
        codes = self._err_cache.get(blob)
        if codes is None:
            try:
                errors = orjson.loads(blob)
            except orjson.JSONDecodeError:
                return None
            if not isinstance(errors, list) or not all(type(x) is dict for x in errors):
                return None
            codes = tuple(dict.fromkeys(error_code(x) for x in errors))
            if len(self._err_cache) >= _CACHE_LIMIT:
                self._err_cache.clear()
            self._err_cache[blob] = codes
        return codes

    def _slow(self, line: bytes, pos: int) -> tuple[Any, ...] | None:
        """A line the fast path cannot read, decoded whole: an attempt's row, else None
        (a header is kept, anything else becomes a warning). The first attempt read
        teaches the index its file's layout."""
        self.slow_lines += 1
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            self._odd(pos)
            self.warnings.append(HistoryWarning(self.path, self.lines, f"malformed line: {exc}"))
            return None
        kind = rec.get("type") if isinstance(rec, dict) else type(rec).__name__
        if kind == "attempt":
            problem = attempt_problem(rec)
            if problem is not None:
                self._odd(pos)
                self.warnings.append(
                    HistoryWarning(self.path, self.lines, f"attempt skipped: {problem}")
                )
                return None
            if self._shape is None:
                shape = LineShape(rec)
                if shape.ok and split_record(rec) is not None:
                    self._shape = shape
            flat = flat_row(rec)
            # a line the report decodes whole (not ending in "}") it reads itself
            f = record_facts(rec) if line.endswith(b"}") else None
            return (pos, flat["_v"], flat["_e"], flat, f, self.lines)
        self._odd(pos)  # a header too: the report reads the run headers itself
        self._other(kind, rec)
        return None

    def _odd(self, pos: int) -> None:
        """Note a line of the chunk being indexed that the report must read itself."""
        self.report.odd.append((self.lines, self.end + pos))

    def _other(self, kind: Any, rec: Any) -> None:
        """A line that is not an attempt: a run header is kept, anything else warned of."""
        if kind == "run":
            problem = header_problem(rec)
            if problem is not None:  # as the report says it: never a header kept
                self.warnings.append(
                    HistoryWarning(self.path, self.lines, f"run header skipped: {problem}")
                )
                return
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
        (history.keep): ``(offset, row)`` pairs, where a row is ``flat_row(record)`` with
        ``"_r"`` its report facts (report_rows.record_facts) for an attempt, and the
        record itself for anything else. The lines must be whole and continue the file
        from ``self.end``, the last one ending at ``end``: nothing is read. The number of
        attempts added."""
        rows: list[tuple[Any, ...]] = []
        base = self.end
        warned, odd = len(self.warnings), len(self.report.odd)
        for offset, row in lines:
            self.lines += 1
            if "_v" not in row:
                self.report.odd.append((self.lines, offset))
                self._other(row.get("type"), row)
                continue
            entry = flat_of((offset - base, row["_v"], row["_e"], row, row.get("_r"), self.lines))
            problem = _row_problem(entry)
            if problem is None:
                rows.append(entry)
            else:
                self.report.odd.append((self.lines, offset))
                self.warnings.append(
                    HistoryWarning(self.path, self.lines, f"attempt skipped: {problem}")
                )
        added = self._flush(rows, warned, odd)
        self.end = end
        return added

    # --- columns -----------------------------------------------------------------------

    def _flush(self, rows: Any, warned: int, odd: int) -> int:
        """Turn a chunk's rows (a list, or the scan's columns: scan.Scan.chunk) into
        column entries, and keep the odd lines and warnings
        the chunk added since ``warned`` and ``odd`` in file order (they are found in two
        passes: each line's own, and the column checks of ``_valid_rows``)."""
        added = self._columns(rows) if type(rows) is list else self._put(*rows)
        if len(self.warnings) - warned > 1:
            self.warnings[warned:] = sorted(self.warnings[warned:], key=lambda w: w.line or 0)
        if len(self.report.odd) - odd > 1:
            self.report.odd[odd:] = sorted(self.report.odd[odd:])
        return added

    def _columns(self, rows: list[tuple[Any, ...]]) -> int:
        """Turn a chunk's flat rows (shape.flat_of) into column entries: one transpose,
        then C-level maps over the columns (``_put``)."""
        if not rows:
            return 0
        cols = list(zip(*rows, strict=True))
        blank = (None, NAN, NAN, 0, 0, 0)  # a row whose line the report reads itself
        facts = list(zip(*[blank if f is None else f for f in cols[3]], strict=True))
        return self._put(cols, facts, rows)

    def _put(
        self,
        cols: Sequence[Sequence[Any]],
        facts: Sequence[Sequence[Any]],
        rows: list[tuple[Any, ...]] | None = None,
    ) -> int:
        """Turn a chunk's rows, a column each (the flat rows' columns, and the report's
        kinds (None for a row it reads from its line) and numbers), into column
        entries; ``rows`` are the same rows, if the caller has them."""
        count = len(cols[0])
        if not count:
            return 0
        offs = cols[0]
        at = FLAT_AT
        text = [cols[at[key]] for key in TEXT_FIELDS]
        attempts = column("I", list(cols[at["attempt"]]), as_uint)
        arms = {key: cols[at[key]] for key in ARMS}
        if not _all_valid(text, attempts, cols[1], arms):
            if rows is None:
                rows = rows_of(cols, facts)
            return self._columns(self._valid_rows(rows))
        f = self.facets
        times, days = self._times(list(cols[at["started_at"]]))
        base = self.end
        report = self.report
        kinds = facts[0]
        if None in kinds:
            lines = cols[4]
            for i, k in enumerate(kinds):
                if k is None:  # the report reads this line itself
                    report.odd.append((lines[i], base + offs[i]))
        report.extend_columns(*facts)
        # every column first; ``rows`` last: a reader sees a row only once it is whole
        f["run"].extend(cols[at["run_id"]])
        f["provider"].extend(cols[at["provider"]])
        f["model"].extend(cols[at["model"]])
        f["case"].extend(cols[at["case_id"]])
        f["mode"].extend(cols[at["mode"]])
        f["day"].extend(days)
        for key in ARMS:  # absent from a record: None, a facet value like any other
            f[key].extend(arms[key])
        self.verdict.codes.extend(cols[1])
        self.errors.extend(cols[2])
        self.attempt.extend(attempts)
        # the network time of the attempt's turns: the figure the report's p50/p95 use
        self.latency.extend(column("f", list(cols[at["elapsed_ms"]]), as_float))
        self.times.extend(array("d", times))
        self.offsets.extend(map(base.__add__, offs))
        first = self.rows
        self._users(first, count, cols[at["user"]], offs)
        self.rows = first + count
        return count

    def _valid_rows(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The rows of a chunk that attempt_problem would pass; each other one becomes a
        warning naming its line (and a line the report reads itself)."""
        keep = []
        for row in rows:
            problem = _row_problem(row)
            if problem is None:
                keep.append(row)
                continue
            self.report.odd.append((row[4], self.end + row[0]))
            self.warnings.append(HistoryWarning(self.path, row[4], f"attempt skipped: {problem}"))
        return keep

    def _users(self, first: int, count: int, users: Sequence[Any], offs: Sequence[int]) -> None:
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
            text = users[i]
            if text is NO_USER:
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
        """Epoch seconds and local day of ISO-8601 stamps, each part parsed once: a
        stamp's minute and the rest of it (seconds, fraction, zone) come from caches in
        whole microseconds, added and divided column-wise (the value _one_time gives)."""
        minutes, tails, days = caches = (self._minutes, self._tails, self._days)
        for cache in caches:
            if len(cache) > _CACHE_LIMIT:
                cache.clear()
        try:
            at = map(minutes.__getitem__, map(MINUTE, stamps))
            us = list(map(add, at, map(tails.__getitem__, map(TAIL, stamps))))
        except (TypeError, ValueError):  # a stamp missing or not ISO-8601: one by one
            pairs = [self._one_time(x) for x in stamps]
            return [p[0] for p in pairs], [p[1] for p in pairs]
        times = list(map(truediv, us, repeat(US)))
        return times, list(map(days.__getitem__, map(floordiv, us, repeat(60 * US))))

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


def _all_valid(
    text: Iterable[Sequence[Any]],
    attempts: array[int],
    verdicts: Sequence[int],
    arms: Mapping[str, Sequence[Any]],
) -> bool:
    """Whether every row of a chunk holds what attempt_problem asks for, tested column by
    column at C speed (a row without a judgement or a transport error is UNJUDGED; an
    arm of another type, an object or a list say, is no facet value: fields.arms_problem)."""
    if UNJUDGED in verdicts or (attempts and min(attempts) == 0):
        return False
    if not all(set(map(type, values)) <= {str} for values in text):
        return False
    return all(set(map(type, values)) <= set(ARM_TYPES[k]) for k, values in arms.items())


def _row_problem(row: tuple[Any, ...]) -> str | None:
    """attempt_problem's answer for a flat row: its summary dict and its verdict (a row
    of the scan, which has no dict, holds every one of these keys)."""
    fields = row[-1]
    if fields is None:
        fields = {k: row[FLAT_AT[k]] for k in (*TEXT_FIELDS, "attempt")}
    for key in (*TEXT_FIELDS, "attempt"):
        problem = field_problem(fields, key)
        if problem is not None:
            return problem
    if row[1] == UNJUDGED:
        return outcome_problem(None, None)
    return arms_problem({k: row[FLAT_AT[k]] for k in ARMS})
