"""The cold index's quickest path: heads cut at their numbers, the rest cached by bytes.

An attempt's head (the keys before ``second_turn``) holds a run of numbers that change
from line to line (attempt, simulated, elapsed_ms, retries, usage, cost_usd: ``VARYING``,
next to each other in the runner's order) between two runs of keys that repeat byte for
byte across the attempts of a run x model x case (type, provider, model, api, mode,
case_id before; transport_error, the arms, run_identity after). HeadTemplate learns where
the numbers sit from the index's first attempt; the index then decodes only the numbers
of each line, and takes the part before and after them from a cache keyed on their exact
bytes, with the report's kind of the row (report_rows.facts) computed once per entry.

Each part is decoded and checked alone on a cache miss: its keys must be the template's,
in its order, so the three parts side by side are exactly the head the fast path
(index.py ``_fast``) decodes in one call, and every row equals the one ``_fast`` makes.
Anything else (a second turn, a transport error, a number of an odd type, a head of
another layout) is left to ``_fast``, which reads it or hands it on to the slow path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from toolstand.history.fields import TEXT_FIELDS, field_problem, turn_types_problem
from toolstand.history.read import SECOND, SECOND_NULL
from toolstand.history.report_rows import _amount, _count, facts, usage_tokens
from toolstand.history.shape import ARMS, FAIL, JNULL, NEEDED, PASS, LineShape

VARYING = frozenset(("attempt", "simulated", "elapsed_ms", "retries", "usage", "cost_usd"))
# what a row dict must hold for the columns besides attempt and elapsed_ms (V's) and the
# segment's keys: the rest of a head is read only by report_rows.facts, once per kind
ROW_KEYS = (*TEXT_FIELDS, *NEEDED, *ARMS, "user")
_LIMIT = 1 << 14  # parts cached: bounded, a hostile file can make every line new
NAN = float("nan")
_NO_FACTS = ()  # facts() said None for this kind: the row's facts are None
_UNSEEN: list[Any] = []  # a part not cached yet


def _key(name: str) -> bytes:
    return b"," + orjson.dumps(name) + b":"


class HeadTemplate:
    """Where a file's heads hold their numbers, learned from the keys of one head (in
    order). ``ok`` is False for a layout without one run of VARYING keys between two
    other runs (the index then keeps to ``_fast``)."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.ok = False
        keys = tuple(keys)
        at = [i for i, k in enumerate(keys) if k in VARYING]
        self.p_keys: tuple[str, ...] = ()
        self.v_keys: tuple[str, ...] = ()
        self.s_keys: tuple[str, ...] = ()
        self.v_start = self.s_start = b""
        if not at or at[0] == 0 or at != list(range(at[0], at[-1] + 1)):
            return
        if len(at) != len(VARYING) or at[-1] + 1 >= len(keys):
            return
        lo, hi = at[0], at[-1] + 1
        self.p_keys, self.v_keys, self.s_keys = keys[:lo], keys[lo:hi], keys[hi:]
        self.v_start, self.s_start = _key(keys[lo]), _key(keys[hi])
        self.ok = True


class QuickPath:
    """The rows of lines in a HeadTemplate's layout (``row``), for one HistoryIndex."""

    def __init__(
        self,
        template: HeadTemplate,
        shape: LineShape,
        judged: Callable[
            [bytearray, memoryview, int, int], tuple[int, tuple[int, str | None]] | None
        ],
        errors: Callable[[bytearray, int, int], tuple[str, ...] | None],
    ) -> None:
        self.t = template
        self.shape = shape
        self._judged = judged  # the index's: one decode per judgement, for both paths
        self._errors = errors
        # (bytes before the numbers, bytes after them) -> [the two parts decoded, kinds]
        self._parts: dict[tuple[bytes, bytes], list[Any] | None] = {}

    def row(
        self, buf: bytearray, view: memoryview, pos: int, nl: int, line: int
    ) -> tuple[Any, ...] | None:
        """``_fast``'s row of the line ``buf[pos:nl]`` (number ``line``), or None:
        ``_fast`` reads it."""
        find, t = buf.find, self.t
        if buf[nl - 1] != 0x7D:
            return None
        q = find(SECOND, pos, nl)
        if q < 0 or not buf.startswith(SECOND_NULL, q):
            return None
        a = find(t.v_start, pos, q)
        if a < 0:
            return None
        c = find(t.s_start, a, q)
        if c < 0:
            return None
        key = (bytes(view[pos:a]), bytes(view[c:q]))
        parts = self._parts.get(key, _UNSEEN)
        if parts is _UNSEEN:
            parts = self._learn(key)
        if parts is None:
            return None
        nums = closed(buf, view, a, c)
        if type(nums) is not dict or tuple(nums) != t.v_keys:
            return None
        number, elapsed, cost, retries = (
            nums["attempt"],
            nums["elapsed_ms"],
            nums["cost_usd"],
            nums["retries"],
        )
        usage = nums["usage"]
        # the checks report_rows.facts makes of the numbers; any other value: _fast
        if type(number) is not int or number < 1:
            return None
        if not (elapsed is None or _amount(elapsed)) or not (cost is None or _amount(cost)):
            return None
        if not _count(retries):
            return None
        tokens = usage_tokens(usage)
        if tokens is None:
            return None
        tin, tout = tokens
        v = q + len(SECOND_NULL)
        if buf.startswith(JNULL, v):
            return None
        judged = self._judged(buf, view, v, nl)
        if judged is None:
            return None
        e, j = judged
        errors: tuple[str, ...] = ()
        if j[0] == PASS:
            verdict = PASS
        else:
            found = self._errors(buf, e, nl)
            if found is None:
                return None
            verdict, errors = FAIL, found
        seg = segment(buf, view, self.shape, e, nl)
        if seg is None:
            return None
        kinds = parts[2]
        sim = bool(nums["simulated"])
        kk = (j[1], sim, tin is not None or tout is not None)
        kind = kinds.get(kk)
        if kind is None or kind is _NO_FACTS:
            head = parts[0] | nums
            head.update(parts[1])
            if kind is None:
                f = facts(head, None, j[1], True)
                kind = kinds[kk] = _NO_FACTS if f is None else f[0]
            if kind is _NO_FACTS:
                if turn_types_problem(head, None) or field_problem(head, "attempt"):
                    return None
                head.update(seg)
                return (pos, verdict, errors, head, None, line)
        f = (
            kind,
            NAN if elapsed is None else float(elapsed),
            NAN if cost is None else float(cost),
            retries or 0,
            tin or 0,
            tout or 0,
        )
        # the row holds what the columns read (index.py _columns, _users), with the
        # values the whole head would give them: the parts' keys never repeat a number's
        head = parts[3].copy()
        head["attempt"] = number
        head["elapsed_ms"] = elapsed
        head.update(seg)
        return (pos, verdict, errors, head, f, line)

    def _learn(self, key: tuple[bytes, bytes]) -> list[Any] | None:
        """The parts before and after the numbers decoded, when each holds just the
        template's keys in its order (else None: such lines go to ``_fast``); the
        transport error must be null (an error's row is ``_fast``'s)."""
        if len(self._parts) >= _LIMIT:
            self._parts.clear()
        before, after = key
        parts = None
        try:
            p = orjson.loads(before + b"}")
            s = orjson.loads(b"{" + after[1:] + b"}")
        except orjson.JSONDecodeError:
            p = s = None
        t = self.t
        if (
            type(p) is dict
            and type(s) is dict
            and tuple(p) == t.p_keys
            and tuple(s) == t.s_keys
            and p.get("transport_error", s.get("transport_error")) is None
        ):
            both = p | s
            parts = [p, s, {}, {k: both[k] for k in ROW_KEYS if k in both}]
        self._parts[key] = parts
        return parts


def closed(buf: bytearray, view: memoryview, s: int, u: int) -> Any:
    """``buf[s:u+1]`` decoded as an object, its first byte read as ``{`` and its last as
    ``}`` (changed in place for the call, never copied); None when it is no JSON."""
    s0, u0 = buf[s], buf[u]
    buf[s], buf[u] = 0x7B, 0x7D
    try:
        return orjson.loads(view[s : u + 1])
    except orjson.JSONDecodeError:
        return None
    finally:
        buf[s], buf[u] = s0, u0


def segment(
    buf: bytearray, view: memoryview, shape: LineShape, e: int, nl: int
) -> dict[str, Any] | None:
    """The run of small keys after the judgement (``e``: where its errors start) that
    holds run_id and started_at (LineShape), decoded, or None."""
    s = buf.find(shape.start, e, nl)
    if s < 0:
        return None
    u = buf.find(shape.end, s + 1, nl)
    if u < 0:
        return None
    seg = closed(buf, view, s, u)
    if type(seg) is not dict or len(seg) != shape.nkeys or "run_id" not in seg:
        return None
    return seg
