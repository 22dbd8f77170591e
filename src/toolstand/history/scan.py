"""The cold index's scan: a chunk's lines read a column at a time, at C speed (no Textual).

QuickPath (quick.py) reads a line with a few dozen Python calls. The scan makes the same
reading a pass per step over a batch of lines, each pass one C-level ``map`` (a
``bytes.find``, a slice, a dictionary lookup per line), so that little Python code runs
per line but where a line does not fit:

1. line ends by one ``find`` each (``bytes.split`` reads byte by byte); each line cut
   at four keys: the head's part before its numbers (``,"attempt":``), the numbers,
   the *tail* (the head's part after the numbers, second_turn null, the judgement, its
   errors and calls, up to the segment), the segment with run_id and started_at
   (LineShape);
2. the head's part and the tail looked up by their exact bytes, each decoded and
   checked once per distinct bytes as QuickPath and ``_fast`` check them (the tail
   carries the judgement's verdict, facts and error codes); the numbers and the
   segments of a batch decoded by one orjson call each (``bulk``), then checked a
   column at a time with the checks QuickPath makes of each value;
3. the report's kind from a cache keyed as QuickPath keys it (the parts, the judgement's
   facts, the simulated flag, whether usage was reported); a line with a second turn
   read on from its head the way ``_fast`` reads it (``_turn_row``).

A line that fails any step (a header, a transport error, a torn or foreign line, a
number of an odd type, a cache entry that does not check) is read the index's own way
(``HistoryIndex._one``: QuickPath, ``_fast``, ``_slow``), in file order, so every row
is the one the line-by-line reading makes. A chunk the scan read whole reaches the
index as columns (``HistoryIndex._put``), any other as flat rows.

Measured by instruction count (callgrind; the machine's load made wall time useless):
103.6k instructions a row on the bench's history before, 86.3k with the scan, 78.3k
with a chunk read as one batch, second turns checked a column at a time and each number
column's types read once (bench/README_history.md, fourth pass). What is left is spread
thin: the fixed cost of each C call over some hundred passes a row (``bytes.find``
parses its arguments as a tuple, and scans at some five instructions a byte), orjson,
the 12% of rows with a second turn (170k each: their bodies scanned twice, their small
keys decoded one by one), and the index's own columns (``_put``, some 18k).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain, compress, repeat
from operator import itemgetter, sub
from typing import Any

import orjson

from toolstand.history.fields import (
    TURN_NUMBERS,
    field_problem,
    second_turn_problem,
    turn_types_problem,
)
from toolstand.history.quick import _NO_FACTS, NAN, HeadTemplate
from toolstand.history.read import ERRORS, JUDGEMENT, SECOND, SECOND_NULL, second_keys
from toolstand.history.report_rows import _second as second_facts
from toolstand.history.report_rows import facts
from toolstand.history.shape import (
    ATTEMPT,
    FAIL,
    FLAT_KEYS,
    JNULL,
    NO_USER,
    PASS,
    LineShape,
)

_U32 = 1 << 32
_LIMIT = 1 << 14  # entries of each cache: bounded, a hostile file can make every line new
_SECOND_OPEN = b',"second_turn":{'
# lines read a pass at a time: a whole chunk of the index's (some 1,100 lines of the
# bench's history), so that each pass's fixed cost and the columns' joining are paid once
# a chunk (82.6k instructions a row against 86.8k with batches of 64)
BATCH = 1 << 14
_DELIM = b"}\n,{"  # a newline can only sit between tokens: see bulk
_BAD = object()
_FIRST = itemgetter(0)
_PLUS_ONE = (1).__add__
_MINUS_ONE = (-1).__add__
_NULL_AT = len(SECOND_NULL)


def bulk(bodies: Sequence[bytes]) -> list[Any]:
    """bulk_joined's values."""
    return bulk_joined(bodies)[0]


def bulk_joined(bodies: Sequence[bytes]) -> tuple[list[Any], bytes, bool]:
    """(``orjson.loads(b"{" + body + b"}")`` of each body (or _BAD where that fails), in
    one call for all of them when it can be; the bodies joined; whether that one call
    read them, so that none is _BAD).

    The bodies are joined into one array ``[{b1}\\n,{b2}\\n,...]``. A raw newline cannot
    stand inside a JSON string, so each ``}`` before one is a closing brace; when no
    body holds a ``[`` the array is the only one in the text, so a ``,`` then ``{``
    after that brace can only start the array's next item (inside an object a key would
    have to follow): each joint is an item boundary, and with exactly as many items as
    bodies each item is one body's object, decoded as it would be alone."""
    text = _DELIM.join(bodies)
    if not bodies:
        return [], text, True
    if b"[" not in text:
        try:
            out: list[Any] = orjson.loads(b"[{" + text + b"}]")
        except orjson.JSONDecodeError:
            pass
        else:
            if len(out) == len(bodies):
                return out, text, True
    return [_one_object(b) for b in bodies], text, False


def _one_object(body: bytes) -> Any:
    try:
        return orjson.loads(b"{" + body + b"}")
    except orjson.JSONDecodeError:
        return _BAD


class Scan:
    """The rows of a chunk of whole lines (``chunk``) for a HistoryIndex whose quick path
    is learned; ``ok`` is False for a layout the scan does not read (the index then
    reads line by line)."""

    def __init__(self, template: HeadTemplate, shape: LineShape, ix: Any) -> None:
        self.ok = False
        t = template
        if not (t.ok and shape.ok) or {*t.p_keys, *t.v_keys, *t.s_keys} & set(shape.keys):
            return
        self.t, self.shape, self.ix = t, shape, ix
        self.v_keys = t.v_keys
        self.v_set = frozenset(t.v_keys)
        self.v_start, self.s_start = t.v_start, t.s_start
        self.seg_start, self.seg_end = shape.start, shape.end
        self.seg_keys = shape.keys
        # the part before the numbers -> (serial, its decoded keys, the flat values it
        # holds), or None: such a line is not the scan's
        self._heads: dict[bytes, Any] = {}
        # from the part after the numbers to the segment (the rest of the head, the
        # judgement, its errors and calls) -> (serial, the rest of the head decoded, its
        # flat values, verdict, error codes, judgement facts), _TURN (a second turn: read
        # line by line), or None
        self._tails: dict[bytes, Any] = {}  # (and b"": _TURN, see _rows)
        self._serial = 0
        # (head serial, tail serial, simulated, usage reported) -> kind or _NO_FACTS
        self._kinds: dict[tuple[Any, ...], Any] = {}
        # where each flat key (shape.FLAT_KEYS) comes from: the segment, the numbers, the
        # head's part before them, the part after, or nowhere (None; "user": NO_USER)
        self.sources: list[tuple[str, Any]] = []
        self.p_flat = [k for k in FLAT_KEYS if k in t.p_keys and k not in shape.keys]
        self.s_flat = [k for k in FLAT_KEYS if k in t.s_keys and k not in shape.keys]
        for k in FLAT_KEYS:
            if k in shape.keys:
                self.sources.append(("seg", k))
            elif k in ("attempt", "elapsed_ms"):
                self.sources.append(("num", k))
            elif k in self.p_flat:
                self.sources.append(("p", self.p_flat.index(k)))
            elif k in self.s_flat:
                self.sources.append(("s", self.s_flat.index(k)))
            else:
                self.sources.append(("none", NO_USER if k == "user" else None))
        # the tail of a line with a second turn: its row is _turn_row's
        self._turn: tuple[Any, ...] = (0, {}, (None,) * len(self.s_flat), PASS, (), None)
        self._tails[b""] = self._turn
        # a second turn's row: the head's part after the numbers (serial, decoded) by
        # its bytes, and the kinds of its head alone
        self._turn_parts: dict[bytes, Any] = {}
        self._turn_kinds: dict[tuple[Any, ...], Any] = {}
        # a second turn's judgement (its JSON) -> whether it passed, or _BAD (_passed)
        self._turn_judged: dict[bytes, Any] = {}
        # the flat columns _turn_row sets (the rest are the scan's): (index, key)
        self.turn_seg = [(5 + i, k) for i, k in enumerate(FLAT_KEYS) if k in shape.keys]
        self.turn_s = [(5 + i, k) for i, k in enumerate(FLAT_KEYS) if k in self.s_flat]
        self._first = 0  # the number of lines before the chunk being read
        self.rows = self.turns = 0  # rows the scan made, of them with a second turn
        self.ok = True

    # --- one chunk ---------------------------------------------------------------------

    def chunk(self, length: int) -> Any:
        """The rows of the lines of ``ix._buf[:length]`` in file order, for
        ``HistoryIndex._flush``: (their columns, the report's columns) when the scan
        read them all, else their flat rows (shape.flat_of); ``ix.lines`` moves past
        them. The lines are found by one ``find`` each
        (``bytes.split`` reads byte by byte, ``find`` a word at a time), then read in
        batches of BATCH lines (one batch, unless the lines are very short)."""
        ix = self.ix
        view = memoryview(ix._buf)
        try:
            data = bytes(view[:length])
        finally:
            view.release()
        find = data.find
        ends: list[int] = []
        end = ends.append
        pos = 0
        while pos < length:
            nl = find(b"\n", pos, length)
            end(nl)
            pos = nl + 1
        starts = [0, *map(_PLUS_ONE, ends)]
        starts.pop()
        first = self._first = ix.lines  # _one moves ix.lines: the chunk's own count
        batches = []
        others: list[int] = []
        for i in range(0, len(ends), BATCH):
            cols, facts, bad, left = self._rows(data, starts[i : i + BATCH], ends[i : i + BATCH], i)
            batches.append((cols, facts, bad))
            others += left
        ix.lines = first + len(ends)
        if not others:  # the scan's rows only: the columns, joined
            cols, facts = batches[0][:2]
            if len(batches) > 1:
                cols = [
                    list(chain.from_iterable(b[0][j] for b in batches)) for j in range(len(cols))
                ]
                facts = [list(chain.from_iterable(b[1][j] for b in batches)) for j in range(6)]
            return cols, facts
        rows: list[Any] = []
        for cols, facts, bad in batches:
            if cols is not None:
                got = rows_of(cols, facts)
                rows += [r for k, r in enumerate(got) if k not in bad] if bad else got
        rows += self._others(others, starts, ends, first)
        ix.lines = first + len(ends)
        rows.sort(key=_FIRST)  # in file order: the offsets are distinct
        return rows

    def _others(
        self, which: list[int], starts: list[int], ends: list[int], first: int
    ) -> list[Any]:
        """The rows of the lines at ``which`` (indices in the chunk), read by the index's
        own way, in file order."""
        ix = self.ix
        buf = ix._buf
        view = memoryview(buf)
        out = []
        try:
            for i in which:
                row = ix._one(buf, view, starts[i], ends[i], first + i + 1)
                if row is not None:
                    out.append(row)
        finally:
            view.release()
        return out

    def _rows(
        self, data: bytes, starts: list[int], ends: list[int], base: int
    ) -> tuple[Any, Any, set[int], list[int]]:
        """(the flat rows' columns, the report's columns (kinds and numbers), the rows
        of them that are not the scan's, the indices in the chunk of those lines) of
        the lines ``data[starts[k]:ends[k]]``, line ``base`` of the chunk the first of
        them; no columns when no line is the scan's."""
        n = len(starts)
        find, getitem = data.find, data.__getitem__
        a = list(map(find, repeat(self.v_start), starts, ends))
        c = list(map(find, repeat(self.s_start), a, ends))
        s = list(map(find, repeat(self.seg_start), c, ends))
        u = list(map(find, repeat(self.seg_end), map(_PLUS_ONE, s), ends))
        last = list(map(getitem, map(_MINUS_ONE, ends)))  # "}" (125) ends each line
        bad: set[int] = set()
        for col in (a, c, s, u):
            if min(col) < 0:
                bad.update(k for k, x in enumerate(col) if x < 0)
        if set(last) != {125}:
            bad.update(k for k, x in enumerate(last) if x != 125)
        if bad:  # these lines' cuts are no cuts: another line's stand in for them
            if len(bad) == n:
                return None, None, bad, [base + k for k in range(n)]
            ok = next(k for k in range(n) if k not in bad)
            a, c, s, u, starts = (
                [x if k not in bad else col[ok] for k, x in enumerate(col)]
                for col in (a, c, s, u, starts)
            )
        cut = s
        if max(map(sub, s, c)) > _SHORT:  # a second turn makes a long tail: none kept
            cut = list(s)
            startswith = data.startswith
            for k in compress(range(n), map(_SHORT.__lt__, map(sub, s, c))):
                q = find(SECOND, c[k], s[k])
                if q > 0 and startswith(_SECOND_OPEN, q):
                    cut[k] = c[k]  # no tail is empty: the empty one stands for _TURN
        # each part from its cache (a miss, seldom: the batch learned part by part)
        keys = list(map(getitem, map(slice, starts, a)))
        try:
            heads = list(map(self._heads.__getitem__, keys))
        except KeyError:
            heads = list(map(self._learn_head, keys))
        keys = list(map(getitem, map(slice, c, cut)))
        try:
            tails = list(map(self._tails.__getitem__, keys))
        except KeyError:
            tails = list(map(self._learn_tail, keys))
        nums, text, whole = bulk_joined(list(map(getitem, map(slice, map(_PLUS_ONE, a), c))))
        if SECOND in text:  # a number's object holds a second_turn key: not the line's
            bad.update(k for k, x in enumerate(map(getitem, map(slice, a, c))) if SECOND in x)
        segs, _, whole_segs = bulk_joined(list(map(getitem, map(slice, map(_PLUS_ONE, s), u))))
        serials = _serials(heads, tails)  # None: a part not the scan's (None, not a tuple)
        if serials is None:
            bad.update(k for k in range(n) if heads[k] is None or tails[k] is None)
        bad.update(self._bad_nums(nums, whole))
        bad.update(self._bad_segments(segs, whole_segs))
        turn = self._turn
        if serials is not None:  # the turn's entry is the only one numbered 0
            turns = [k for k in range(n) if tails[k] is turn] if 0 in serials[1] else []
        else:
            turns = [k for k in range(n) if tails[k] is turn] if turn in tails else []
        if bad:  # another line's values stand in for theirs
            if len(bad) == n:
                return None, None, bad, [base + k for k in range(n)]
            heads, tails, nums, segs = _stand_in(bad, n, heads, tails, nums, segs)
            serials = None
        try:
            number, sim, elapsed, retries, usage, cost = zip(*map(_V_GET, nums), strict=True)
        except KeyError:  # six keys, not the template's
            bad.update(k for k, x in enumerate(nums) if not self.v_set <= x.keys())
            if len(bad) == n:
                return None, None, bad, [base + k for k in range(n)]
            heads, tails, nums, segs = _stand_in(bad, n, heads, tails, nums, segs)
            serials = None
            number, sim, elapsed, retries, usage, cost = zip(*map(_V_GET, nums), strict=True)
        # each column's types, read once: its checks and its nulls
        types = te, tr, tc = _types(elapsed), _types(retries), _types(cost)
        bad.update(_bad_numbers(number, elapsed, retries, cost, types))
        if _bad_usage(usage):
            tin, tout = _tokens(usage)
        else:
            tin = list(map(dict.get, usage, repeat("input_tokens")))
            tout = list(map(dict.get, usage, repeat("output_tokens")))
        ti_t, to_t = _types(tin), _types(tout)
        bad.update(_bad_counts(tin, ti_t), _bad_counts(tout, to_t))
        if _NONE in ti_t or _NONE in to_t:
            reported = list(map(_either, tin, tout))
        else:
            reported = list(repeat(True, n))
        if serials is None:  # the stand-ins' (no part is None now)
            serials = list(map(_FIRST, heads)), list(map(_FIRST, tails))
        by = list(zip(*serials, map(bool, sim), reported, strict=True))
        try:
            kinds = list(map(self._kinds.__getitem__, by))
        except KeyError:  # kinds not made yet (none for a row left to the index)
            kinds = list(map(self._kinds.get, by))
            kinds = [
                x
                if x is not None or k in bad
                else self._kind(heads[k], tails[k], nums[k], reported[k])
                for k, x in enumerate(kinds)
            ]
        # the report's kinds and numbers (NaN, NaN, 0, 0, 0 for a row without facts)
        fl, co = _floats(elapsed, te), _floats(cost, tc)
        re = list(retries) if _NONE not in tr else [x or 0 for x in retries]
        ti = tin if _NONE not in ti_t else [x or 0 for x in tin]
        to = tout if _NONE not in to_t else [x or 0 for x in tout]
        facts_cols: list[Any] = [kinds, fl, co, re, ti, to]
        if _NO_FACTS in kinds:
            for k, kind in enumerate(kinds):
                if kind is _NO_FACTS and k not in bad:
                    if _no_facts_problem(_head_of(heads[k], nums[k], tails[k])):
                        bad.add(k)
                    else:
                        _set(facts_cols, k, _NO_REPORT)
        # the flat rows' columns
        first = self._first + base + 1
        cols: list[Any] = [
            starts,
            list(map(_VERDICT, tails)),
            list(map(_ERRORS, tails)),
            kinds,
            list(range(first, first + n)),
        ]
        pcols = list(zip(*map(_THIRD, heads), strict=True)) if self.p_flat else []
        scols = list(zip(*map(_THIRD, tails), strict=True)) if self.s_flat else []
        for where, what in self.sources:
            if where == "seg":
                cols.append(list(map(dict.get, segs, repeat(what))))
            elif where == "num":
                cols.append(number if what == "attempt" else elapsed)
            elif where == "p":
                cols.append(pcols[what])
            elif where == "s":
                cols.append(scols[what])
            else:
                cols.append(list(repeat(what, n)))
        cols.append(list(repeat(None, n)))
        if turns:  # a second turn's rows are made one by one
            cols = [x if type(x) is list else list(x) for x in cols]
            begun = [None if k in bad else self._turn_start(data, c[k], ends[k]) for k in turns]
            outcomes = self._turn_facts([x[1] for x in begun if x is not None])
            outcome = iter(outcomes)
            for k, start in zip(turns, begun, strict=True):
                got = None
                if start is not None:
                    got = self._turn_row(data, heads[k], nums[k], start, next(outcome), ends[k],
                                         [col[k] for col in facts_cols], reported[k])  # fmt: skip
                if got is None:
                    bad.add(k)
                    continue
                cols[1][k], cols[2][k], sd, seg, f = got
                for at, key in self.turn_seg:
                    cols[at][k] = seg.get(key)
                for at, key in self.turn_s:
                    cols[at][k] = sd[key]
                _set(facts_cols, k, f)
        self.rows += n - len(bad)
        self.turns += len(turns) - len(bad.intersection(turns))
        return cols, facts_cols, bad, sorted(base + k for k in bad)

    # --- the steps' checks and caches ---------------------------------------------------

    def _bad_nums(self, nums: list[Any], whole: bool) -> list[int]:
        """Rows whose numbers are not an object of the template's keys (in any order:
        each value is read by its key, so the order changes none of them; a row with
        six keys that are not the template's is found when they are read)."""
        size = len(self.v_keys)
        if (not whole and _BAD in nums) or set(map(len, nums)) != {size}:
            return [
                k
                for k, x in enumerate(nums)
                if x is _BAD or len(x) != size or not self.v_set <= x.keys()
            ]
        return []

    def _bad_segments(self, segs: list[Any], whole: bool) -> list[int]:
        """Rows whose segment ``segment`` (quick.py) would not take: not an object of
        the shape's number of keys with run_id among them."""
        nkeys = self.shape.nkeys
        if (
            (not whole and _BAD in segs)
            or set(map(len, segs)) != {nkeys}
            or not all(map(dict.__contains__, segs, repeat("run_id")))
        ):
            return [
                k
                for k, x in enumerate(segs)
                if x is _BAD or type(x) is not dict or len(x) != nkeys or "run_id" not in x
            ]
        return []

    def _learn_head(self, part: bytes) -> Any:
        """The entry of a head's part before its numbers (``{"type":"attempt",...``):
        decoded, it must hold the template's keys in order (as QuickPath._learn checks),
        a null transport error if it holds one, and no second_turn key anywhere."""
        entry = self._heads.get(part, _BAD)  # learned by an earlier line of the batch
        if entry is not _BAD:
            return entry
        if len(self._heads) >= _LIMIT:
            self._heads.clear()
            self._kinds.clear()
        entry = None
        if part.startswith(ATTEMPT) and SECOND not in part:
            p = _one_object(part[1:])
            if type(p) is dict and tuple(p) == self.t.p_keys and p.get("transport_error") is None:
                self._serial += 1
                entry = (self._serial, p, tuple(p[k] for k in self.p_flat))
        if len(part) <= _KEPT:
            self._heads[part] = entry
        return entry

    def _learn_tail(self, part: bytes) -> Any:
        """The entry of a line's bytes from the head's part after its numbers to the
        segment: the part decoded (the template's keys in order, a null transport error
        if it holds one), then second_turn null, the judgement (read and cached as
        ``_judged`` reads it), the error codes of a failure (``_errors``). _TURN for a
        line with a second turn, None for anything else."""
        entry = self._tails.get(part, _BAD)  # learned by an earlier line of the batch
        if entry is not _BAD:
            return entry
        if len(self._tails) >= _LIMIT:
            self._tails.clear()
            self._tails[b""] = self._turn
            self._kinds.clear()
        q = part.find(SECOND)
        if q > 0 and part.startswith(_SECOND_OPEN, q):
            return self._turn  # never the same bytes twice: not kept
        entry = None
        if q > 0 and part.startswith(SECOND_NULL, q):
            sd = _one_object(part[1:q])
            v = q + _NULL_AT
            e = part.find(ERRORS, v)
            if (
                type(sd) is dict
                and tuple(sd) == self.t.s_keys
                and sd.get("transport_error") is None
                and not part.startswith(JNULL, v)
                and e > 0
            ):
                entry = self._tail_entry(part, sd, v, e)
        if len(part) <= _KEPT:
            self._tails[part] = entry
        return entry

    def _tail_entry(self, part: bytes, sd: dict[str, Any], v: int, e: int) -> Any:
        ix = self.ix
        blob = part[v:e]
        j = ix._judgements.get(blob) or ix._judgement(blob)
        if j is None:
            return None
        errors: tuple[str, ...] | None = ()
        if j[0] != PASS:
            errors = ix._errors(part, e, len(part))
            if errors is None:
                return None
        self._serial += 1
        flat = tuple(sd[k] for k in self.s_flat)
        return (self._serial, sd, flat, PASS if j[0] == PASS else FAIL, errors, j[1])

    def _kind(self, head: Any, tail: Any, nums: dict[str, Any], reported: bool) -> Any:
        """QuickPath's kind for rows of these parts, judgement facts, simulated flag and
        usage: ``facts`` of the head they make, once per combination (the numbers of any
        other such row pass the same checks: see ``_bad_numbers``)."""
        key = (head[0], tail[0], bool(nums["simulated"]), reported)
        kind: Any = self._kinds.get(key)
        if kind is not None:  # made for an earlier line of the batch
            return kind
        if tail is self._turn:
            kind = _TURN_KIND  # made by _turn_row
        else:
            f = facts(_head_of(head, nums, tail), None, tail[5], True)
            kind = _NO_FACTS if f is None else f[0]
        if len(self._kinds) >= _LIMIT:
            self._kinds.clear()
        self._kinds[key] = kind
        return kind

    def _turn_start(self, data: bytes, c: int, nl: int) -> tuple[Any, ...] | None:
        """(the head's part after the numbers (serial, decoded), the second turn's small
        keys, where the top-level judgement's value starts) of a line
        with a second turn, as ``_fast`` finds them; None where it would not read so."""
        q = data.find(SECOND, c, nl)
        if q < 0:
            return None
        part = self._turn_part(data[c:q])
        got = _second(data, q, nl) if part is not None else None
        if got is None or data.startswith(JNULL, got[1]):
            return None
        return part, *got

    def _turn_facts(self, turns: list[dict[str, Any]]) -> list[Any]:
        """``second_facts`` of each second turn's small keys where ``second_turn_problem``
        passes it, else None: a column at a time for the turns with no transport error
        and numbers, counts and usage that pass the scan's checks of them (each then
        passes ``_turn_problem``'s), their judgements' checks cached by the judgement's
        JSON (they read nothing else of it); any other turn one by one."""
        if not turns:
            return []
        n = len(turns)
        get = dict.get
        retries = list(map(get, turns, repeat("retries")))
        tin, tout = _tokens(list(map(get, turns, repeat("usage"))))
        bad: set[int] = set()
        bad.update(_bad_counts(retries), _bad_counts(tin), _bad_counts(tout))
        codes = list(map(get, turns, repeat("transport_error")))
        if codes.count(None) != n:
            bad.update(k for k, x in enumerate(codes) if x is not None)
        for key in TURN_NUMBERS:
            col = list(map(get, turns, repeat(key)))
            if not _amounts(col):
                bad.update(k for k, x in enumerate(col) if not (x is None or _amount(x)))
        passed = self._passed(list(map(get, turns, repeat("judgement"))))
        if _BAD in passed:
            bad.update(k for k, x in enumerate(passed) if x is _BAD)
        re = retries if None not in retries else [x or 0 for x in retries]
        ti = [x or 0 for x in tin] if any(tin) else repeat(0)
        to = [x or 0 for x in tout] if any(tout) else repeat(0)
        out: list[Any] = list(
            zip(map(_NO_CODE, passed), zip(re, ti, to, strict=False), strict=False)
        )
        for k in bad:
            st = turns[k]
            out[k] = None if second_turn_problem(st) else second_facts(st)
        return out

    def _passed(self, judgements: list[Any]) -> list[Any]:
        """Whether each second turn's judgement passed, or _BAD where it fails
        ``_judgement_problem`` or is no object (each answer cached by the judgement's
        JSON, which is all the check and ``passed`` read)."""
        memo = self._turn_judged
        try:
            keys = list(map(orjson.dumps, judgements))
        except orjson.JSONEncodeError:  # an integer past 64 bits, say: no cache
            return [_BAD] * len(judgements)
        got = list(map(memo.get, keys))
        if None in got:
            if len(memo) >= _LIMIT:
                memo.clear()
            for key, j in zip(keys, judgements, strict=True):
                if key not in memo:
                    fine = j is None or type(j) is dict
                    fine = fine and second_turn_problem({"judgement": j}) is None
                    memo[key] = bool((j or {}).get("passed")) if fine else _BAD
            got = list(map(memo.__getitem__, keys))
        return got

    def _turn_row(
        self, data: bytes, head_entry: Any, nums: dict[str, Any], start: tuple[Any, ...],
        turn: Any, nl: int, numbers: list[Any], reported: bool,
    ) -> tuple[Any, ...] | None:  # fmt: skip
        """(verdict, error codes, the head's part after the numbers, the segment, the
        report's kind and numbers) that ``_fast`` reads of a line with a second turn, or
        None (the index reads it): its head's part before the numbers and the numbers
        already read and checked as QuickPath checks them, its start (``_turn_start``)
        and its turn's outcome (``_turn_facts``) read, so that the report's facts are
        those of the head alone (``_turn_kind``, once per kind) with the second turn's
        outcome and counts put in, as ``report_rows.facts`` puts them."""
        ix = self.ix
        part, st, v = start
        e = data.find(ERRORS, v, nl)
        if e < 0:
            return None
        blob = data[v:e]
        j = ix._judgements.get(blob) or ix._judgement(blob)
        if j is None:
            return None
        errors: tuple[str, ...] | None = ()
        if j[0] == PASS:
            verdict = PASS
            if st.get("transport_error") and ix._errors(data, e, nl) is None:
                return None
        else:
            errors = ix._errors(data, e, nl)
            if errors is None:
                return None
            verdict = FAIL
        s = data.find(self.seg_start, e, nl)
        u = data.find(self.seg_end, s + 1, nl) if s >= 0 else -1
        if u < 0:
            return None
        seg = _one_object(data[s + 1 : u])
        if type(seg) is not dict or len(seg) != self.shape.nkeys or "run_id" not in seg:
            return None
        key = (head_entry[0], part[0], j[1], bool(nums["simulated"]), reported)
        kind = self._turn_kinds.get(key)
        if kind is None:
            kind = self._turn_kind(key, head_entry, nums, part[1], j[1])
        f: Any = None
        if kind is not _NO_FACTS and turn is not None:
            outcome, (sret, sin, sout) = turn
            _, el, co, re, ti, to = numbers
            re, ti, to = re + sret, ti + sin, to + sout
            if re < _U32 and ti < _U32 and to < _U32:
                f = ((*kind[:10], outcome, *kind[11:]), el, co, re, ti, to)
        if f is None:
            head = _head_of(head_entry, nums, part)
            if turn_types_problem(head, st) or field_problem(head, "attempt"):
                return None
            f = _NO_REPORT
        return verdict, errors, part[1], seg, f

    def _turn_part(self, part: bytes) -> Any:
        """(serial, decoded) of the head's part after the numbers of a line with a
        second turn (the template's keys in order, a null transport error), or None."""
        got = self._turn_parts.get(part, _BAD)
        if got is not _BAD:
            return got
        if len(self._turn_parts) >= _LIMIT:
            self._turn_parts.clear()
            self._turn_kinds.clear()
        sd = _one_object(part[1:])
        got = None
        if type(sd) is dict and tuple(sd) == self.t.s_keys and sd.get("transport_error") is None:
            self._serial += 1
            got = (self._serial, sd)
        if len(part) <= _KEPT:
            self._turn_parts[part] = got
        return got

    def _turn_kind(
        self, key: tuple[Any, ...], head_entry: Any, nums: dict[str, Any],
        sd: dict[str, Any], jfacts: str | None,
    ) -> Any:  # fmt: skip
        """The kind ``facts`` makes of the head alone (its second turn aside), or
        _NO_FACTS; the second turn only adds reasons for no facts, its outcome and its
        counts."""
        f = facts(_head_of(head_entry, nums, (0, sd)), None, jfacts, True)
        kind = _NO_FACTS if f is None else f[0]
        if len(self._turn_kinds) >= _LIMIT:
            self._turn_kinds.clear()
        self._turn_kinds[key] = kind
        return kind


def _set(cols: list[Any], k: int, values: Sequence[Any]) -> None:
    for col, x in zip(cols, values, strict=True):
        col[k] = x


def rows_of(cols: Sequence[Sequence[Any]], facts: Sequence[Sequence[Any]]) -> list[Any]:
    """The flat rows (shape.flat_of) of columns, each with its report facts (or None)."""
    packed = [None if f[0] is None else f for f in zip(*facts, strict=True)]
    return [(*r[:3], p, *r[4:]) for r, p in zip(zip(*cols, strict=True), packed, strict=True)]


def _serials(heads: list[Any], tails: list[Any]) -> tuple[list[int], list[int]] | None:
    """The serials of the rows' parts, or None where a part is None (not the scan's)."""
    try:
        return list(map(_FIRST, heads)), list(map(_FIRST, tails))
    except TypeError:
        return None


def _stand_in(bad: set[int], n: int, *cols: list[Any]) -> list[list[Any]]:
    """The columns with another row's value in place of each bad row's (so that the
    passes over a column read values of the types they expect; bad rows are dropped)."""
    ok = next(k for k in range(n) if k not in bad)
    return [[x if k not in bad else col[ok] for k, x in enumerate(col)] for col in cols]


def _no_facts_problem(head: dict[str, Any]) -> bool:
    """QuickPath's check of a row whose kind has no facts (a streamed attempt...)."""
    return bool(turn_types_problem(head, None) or field_problem(head, "attempt"))


def _head_of(head: Any, nums: dict[str, Any], tail: Any) -> dict[str, Any]:
    """The whole head of a row: its parts around the numbers and the numbers, in order."""
    out: dict[str, Any] = head[1] | nums
    out.update(tail[1])
    return out


def _bad_numbers(
    number: Any, elapsed: Any, retries: Any, cost: Any, types: tuple[set[type], ...]
) -> list[int]:
    """Rows whose numbers QuickPath would not take: an attempt number that is not a
    positive integer, an elapsed time or cost that is not an amount, retries that are
    not a count (``types``: the types of elapsed, retries and cost, as _types reads
    them)."""
    out: list[int] = []
    if set(map(type, number)) != {int} or min(number) < 1:
        out += [k for k, x in enumerate(number) if type(x) is not int or x < 1]
    te, tr, tc = types
    for col, kinds in ((elapsed, te), (cost, tc)):
        if not _amounts(col, kinds):
            out += [k for k, x in enumerate(col) if not (x is None or _amount(x))]
    if not _counts(retries, tr):
        out += [k for k, x in enumerate(retries) if not _count(x)]
    return out


def _types(col: Iterable[Any]) -> set[type]:
    """The types of a column's values (one pass: its checks and nulls read this)."""
    return set(map(type, col))


def _floats(col: Sequence[Any], kinds: set[type]) -> list[float]:
    """The report's value of each amount (NaN for null; a value no check passed, in a
    row that is then left to the index, reads NaN too); ``kinds``: _types(col)."""
    try:
        if _NONE in kinds:
            return list(map(float, map(_NULL_NAN.get, col, col)))  # type: ignore[arg-type]
        return list(map(float, col))
    except (TypeError, ValueError):
        return list(map(_float, col))


def _float(x: Any) -> float:
    return float(x) if type(x) is int or type(x) is float else NAN


_V_GET = itemgetter("attempt", "simulated", "elapsed_ms", "retries", "usage", "cost_usd")
_THIRD = itemgetter(2)
_VERDICT = itemgetter(3)
_ERRORS = itemgetter(4)
_NULL_NAN = {None: NAN}
_NO_REPORT = (None, NAN, NAN, 0, 0, 0)  # a row the report reads from its line
_TURN_KIND = object()  # the kind of a second turn's row before _turn_row makes it
_SHORT = 1536  # a tail longer than this may be a second turn's (looked at first)
_KEPT = 1 << 13  # parts longer than this are not kept as cache keys


def _NO_CODE(passed: bool) -> tuple[None, bool]:
    return (None, passed)


def _either(a: Any, b: Any) -> bool:
    return a is not None or b is not None


def _second(data: bytes, q: int, nl: int) -> tuple[dict[str, Any], int] | None:
    """(a second turn's small keys, where the top-level judgement's value starts), as
    ``_fast`` finds them (read.second_keys, then the judgement after them)."""
    got = second_keys(data, q, nl)
    if got is None:
        return None
    v = data.find(JUDGEMENT, got[1], nl)
    return None if v < 0 else (got[0], v + len(JUDGEMENT))


def _amount(x: Any) -> bool:
    kind = type(x)
    return (kind is int and 0 <= x < _U32) or (kind is float and 0 <= x < float("inf"))


def _count(x: Any) -> bool:
    return x is None or (type(x) is int and 0 <= x < _U32)


def _amounts(col: Sequence[Any], kinds: set[type] | None = None) -> bool:
    """Whether every value is null or a non-negative finite number (below 2**32);
    ``kinds``: _types(col), if read already."""
    return _within(col, _AMOUNT_TYPES, _types(col) if kinds is None else kinds)


def _counts(col: Sequence[Any], kinds: set[type] | None = None) -> bool:
    """Whether every value is null or a non-negative integer below 2**32."""
    return _within(col, _COUNT_TYPES, _types(col) if kinds is None else kinds)


def _within(col: Sequence[Any], allowed: frozenset[type], kinds: set[type]) -> bool:
    if not kinds <= allowed:
        return False
    if _NONE in kinds:
        if len(kinds) == 1:
            return True
        col = [x for x in col if x is not None]
    return not col or (min(col) >= 0 and max(col) < _U32)


_NONE = type(None)
_AMOUNT_TYPES: frozenset[type] = frozenset((int, float, _NONE))
_COUNT_TYPES: frozenset[type] = frozenset((int, _NONE))


def _bad_counts(col: Sequence[Any], kinds: set[type] | None = None) -> list[int]:
    if _counts(col, kinds):
        return []
    return [k for k, x in enumerate(col) if not _count(x)]


def _bad_usage(usage: Sequence[Any]) -> bool:
    return set(map(type, usage)) != {dict}


def _tokens(usage: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """(input tokens, output tokens) of each usage as usage_tokens reads them; a usage
    it would refuse reads as a count no check passes (its row is then left)."""
    tin: list[Any] = []
    tout: list[Any] = []
    for x in usage:
        if x is None:
            tin.append(None)
            tout.append(None)
        elif type(x) is dict:
            tin.append(x.get("input_tokens"))
            tout.append(x.get("output_tokens"))
        else:
            tin.append(-1)
            tout.append(-1)
    return tin, tout
