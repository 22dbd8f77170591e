"""What the report counts of each attempt, kept beside the History index (no Textual).

The report (reporting.metrics) reads an attempt line the way history.read.split_metrics
cuts it: the top-level keys before ``second_turn`` (the *head*), the second turn's keys
before ``tool_results``, and the judgement's keys before ``errors``. ReportRows keeps,
per row of a HistoryIndex, just what those three give the metrics, so that a report over
a million attempts is a few passes over columns instead of a decode of every line:

* ``kind``: a small id into ``kinds``, one entry per distinct combination of the group
  key (provider, model, mode, case, api, feedback arm), the simulated flag, the
  transport code, the per-metric facts of the judgement (verdict, verdict_normalized,
  metrics with the normalized signature: one JSON string), the repair summary, the
  second turn's outcome and whether the attempt reported usage;
* per row, the numbers that vary: latency, cost, retries and tokens (both turns).

A row the columns cannot stand for exactly (a value of an unexpected type, a line out
of the runner's key order, anything the report warns about) gets kind 0, ODD, and its
line is listed in ``odd`` with every other line the report must read itself (a torn
line, a foreign record, an attempt the index skipped): the report reads just those
lines by offset, with its own code, in file order. So the columns never change a
result, they only spare the decoding.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from itertools import repeat
from operator import itemgetter
from types import NoneType
from typing import Any

import orjson

ODD = 0  # kind of a row the report reads from its line (``odd`` names it)
HEAD_KEYS = frozenset(  # what a head must hold (history.read.METRIC_KEYS)
    (
        *("type", "provider", "model", "api", "mode", "case_id", "attempt", "simulated"),
        *("elapsed_ms", "retries", "usage", "cost_usd", "transport_error"),
    )
)
_U32 = 1 << 32

# (kind key, elapsed, cost, retries, input tokens, output tokens); NaN: no value
Facts = tuple[tuple[Any, ...], float, float, int, int, int]
NAN = float("nan")


def _count(x: Any) -> bool:
    return x is None or (type(x) is int and 0 <= x < _U32)


def split_record(rec: Mapping[str, Any]) -> tuple[dict[str, Any], Any, Any] | None:
    """(head, second turn's small keys or None, judgement's keys before errors or None)
    of a decoded attempt whose line split_metrics would split the same way, else None.
    ``rec`` must hold the line's keys in the line's order (orjson keeps it)."""
    keys = list(rec)
    try:
        q = keys.index("second_turn")
    except ValueError:
        return None
    if q + 1 >= len(keys) or keys[q + 1] != "judgement":
        return None
    head = {k: rec[k] for k in keys[:q]}
    if head.get("type") != "attempt" or not head.keys() >= HEAD_KEYS:
        return None
    run_id = rec.get("run_id")
    if type(run_id) is not str or ("run_id" not in head and keys.index("run_id") < q):
        return None
    st = rec["second_turn"]
    small = None
    if st is not None:
        if not isinstance(st, dict):
            return None
        skeys = list(st)
        if "tool_results" not in skeys:
            return None
        small = {k: st[k] for k in skeys[: skeys.index("tool_results")]}
        if "transport_error" not in small or "judgement" not in small:
            return None
    j = rec["judgement"]
    cut = None
    if j is not None:
        if not isinstance(j, dict):
            return None
        jkeys = list(j)
        if not jkeys or jkeys[0] != "verdict" or "errors" not in jkeys:
            return None
        cut = {k: j[k] for k in jkeys[: jkeys.index("errors")]}
        if not isinstance(cut.get("metrics"), dict):
            return None
        failed = cut["verdict"] == "fail" or (small and small.get("transport_error"))
        if failed and not isinstance(j["errors"], list):
            return None  # the error table would skip it: let the report say so
    return head, small, cut


def judgement_facts(cut: Mapping[str, Any]) -> str | None:
    """The judgement's per-metric facts as one JSON string (None: not countable here)."""
    if cut.get("verdict") not in ("pass", "fail") or not isinstance(cut.get("metrics"), dict):
        return None
    keep = {k: cut[k] for k in ("verdict", "verdict_normalized", "metrics") if k in cut}
    try:
        return orjson.dumps(keep).decode()
    except TypeError:
        return None


_NUMBER = frozenset((int, float, type(None)))


def facts(head: Mapping[str, Any], st: Any, jfacts: str | None, judged: bool) -> Facts | None:
    """The row's facts from its head, its second turn's small keys and its judgement's
    facts (``judged``: the judgement was not null); None when only the line will do.
    (The writer's hot path: one lookup per field, checks inline.)"""
    get = head.get
    if get("stream") is True:
        return None  # a streamed row's first-token and first-call times: from its line
    number, provider, model, mode, case_id, api, feedback, te, elapsed, cost, retries = map(
        get, _FIELDS
    )
    if (
        type(number) is not int
        or number < 1
        or type(provider) is not str
        or type(model) is not str
        or type(mode) is not str
        or type(case_id) is not str
        or not (api is None or type(api) is str)
        or not (feedback is None or type(feedback) is str)
        or type(elapsed) not in _NUMBER
        or type(cost) not in _NUMBER
        or not (retries is None or (type(retries) is int and 0 <= retries < _U32))
    ):
        return None
    te_code = None
    if te is not None:
        if type(te) is not dict or type(te.get("code")) is not str:
            return None
        te_code = te["code"]
    elif jfacts is None:
        return None  # not judged, or judged in a way the report reads from the line
    usage = get("usage")
    tin = tout = None
    if usage:
        if type(usage) is not dict:
            return None
        tin, tout = usage.get("input_tokens"), usage.get("output_tokens")
        if not (_count(tin) and _count(tout)):
            return None
    retries, tin_all, tout_all = retries or 0, tin or 0, tout or 0
    second = None
    if st:
        turn = _second(st)
        if turn is None:
            return None
        second, (sret, sin, sout) = turn
        retries += sret
        tin_all += sin
        tout_all += sout
    repair = None
    if feedback is not None:
        summary = get("repair")
        if type(summary) is dict:
            repair = _repair(summary)
            if repair is False:
                return None
    if retries >= _U32 or tin_all >= _U32 or tout_all >= _U32:
        return None
    key = (
        *(provider, model, mode, case_id, api, feedback),
        bool(get("simulated")),
        te_code,
        None if te is not None else jfacts,
        repair,
        second,
        tin is not None or tout is not None,
        judged,
    )
    return (
        key,
        NAN if elapsed is None else float(elapsed),
        NAN if cost is None else float(cost),
        retries,
        tin_all,
        tout_all,
    )


_FIELDS: tuple[str, ...] = ("attempt", "provider", "model", "mode", "case_id", "api")
_FIELDS += ("feedback", "transport_error", "elapsed_ms", "cost_usd", "retries")
# every top-level key facts() reads: a segment decoded beside the head must hold none
FACT_KEYS = frozenset((*_FIELDS, "stream", "usage", "simulated", "repair"))


def _types(values: list[Any]) -> set[type]:
    return set(map(type, values))


def _counts_ok(values: list[Any]) -> bool:
    """_count() of every value, column-wise: ints in [0, 2**32) and nulls."""
    kinds = _types(values)
    if not kinds <= {int, NoneType}:
        return False
    ints = values if NoneType not in kinds else [x for x in values if x is not None]
    return not ints or (min(ints) >= 0 and max(ints) < _U32)


def plain_facts(heads: list[dict[str, Any]], jfacts: list[str | None]) -> list[Facts] | None:
    """``facts(head, None, jf, True)`` of each head and judgement facts, column by column
    (the cold index's bulk: judged attempts without a second turn or a transport
    error); None when some row needs facts() itself (then call it row by row)."""
    cols = {k: _column(heads, k) for k in _PLAIN_KEYS}
    number, stream, usage = cols["attempt"], cols["stream"], cols["usage"]
    if (
        _types(number) != {int}
        or min(number) < 1
        or any(_types(cols[k]) != {str} for k in ("provider", "model", "mode", "case_id"))
        or not _types(cols["api"]) <= {str, NoneType}
        or _types(cols["feedback"]) != {NoneType}
        or _types(cols["transport_error"]) != {NoneType}
        or not _types(cols["elapsed_ms"]) <= _NUMBER
        or not _types(cols["cost_usd"]) <= _NUMBER
        or not _counts_ok(cols["retries"])
        or None in jfacts
        or _types(usage) != {dict}
        or any(x is True for x in stream)
    ):
        return None
    tin = _column(usage, "input_tokens")
    tout = _column(usage, "output_tokens")
    if not (_counts_ok(tin) and _counts_ok(tout)):
        return None
    keys = zip(
        cols["provider"], cols["model"], cols["mode"], cols["case_id"], cols["api"],
        repeat(None), map(bool, cols["simulated"]), repeat(None), jfacts, repeat(None),
        repeat(None), [a is not None or b is not None for a, b in zip(tin, tout, strict=True)],
        repeat(True),
        strict=False,  # the repeats are endless
    )  # fmt: skip
    return list(
        zip(
            keys,
            _floats(cols["elapsed_ms"]),
            _floats(cols["cost_usd"]),
            [r or 0 for r in cols["retries"]],
            [x or 0 for x in tin],
            [x or 0 for x in tout],
            strict=True,
        )
    )


_PLAIN_KEYS = (*_FIELDS, "stream", "usage", "simulated")


def _column(rows: list[dict[str, Any]], key: str) -> list[Any]:
    """``row.get(key)`` of every row (a C-level map while every row holds the key)."""
    try:
        return list(map(itemgetter(key), rows))
    except KeyError:
        return [r.get(key) for r in rows]


def _floats(values: list[Any]) -> list[float]:
    if NoneType in _types(values):
        return [NAN if x is None else float(x) for x in values]
    return list(map(float, values))


def _second(st: Mapping[str, Any]) -> tuple[tuple[Any, bool], tuple[int, int, int]] | None:
    """A second turn's outcome (transport code, passed) and its (retries, input tokens,
    output tokens), or None for a value the report would read otherwise."""
    sret, su, ste, sj = (st.get(k) for k in ("retries", "usage", "transport_error", "judgement"))
    if not _count(sret) or not (sj is None or type(sj) is dict):
        return None
    if ste and (type(ste) is not dict):
        return None
    sin: Any = 0
    sout: Any = 0
    if su:
        if type(su) is not dict:
            return None
        sin, sout = su.get("input_tokens"), su.get("output_tokens")
        if not (_count(sin) and _count(sout)):
            return None
    outcome = (str(ste.get("code")) if ste else None, bool((sj or {}).get("passed")))
    return outcome, (sret or 0, sin or 0, sout or 0)


def _repair(summary: Mapping[str, Any]) -> tuple[Any, ...] | bool | None:
    """What RepairTally.add reads of a repair summary; False: a value it would read
    differently from a plain JSON count."""
    if not summary.get("needed"):
        return None
    te = summary.get("transport_error")
    if te:
        return (True, str(te), 0, 0, False, None) if isinstance(te, str) else False
    tin, tout, k = (summary.get(x) for x in ("input_tokens", "output_tokens", "passed_after"))
    if not (_count(tin) and _count(tout)) or type(k) is bool:
        return False
    k = k if type(k) is int and k >= 1 else None
    return (True, None, tin or 0, tout or 0, summary.get("valid_after") is not None, k)


# Key orders already checked (a writer repeats one): bounded, like read._good_heads
_LAYOUTS: dict[tuple[str, ...], bool] = {}
_TURN_LAYOUTS: dict[tuple[str, ...], bool] = {}
_CUT_LAYOUTS: dict[tuple[str, ...], bool] = {}
_JFACTS: dict[tuple[Any, ...], str | None] = {}
_LIMIT = 256


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> Any:
    if len(cache) >= _LIMIT:
        cache.clear()
    cache[key] = value
    return value


def _known(cache: dict[tuple[str, ...], Any], keys: tuple[str, ...], check: Any) -> Any:
    """``check(keys)``, remembered in ``cache`` (a writer repeats one key order)."""
    ok = cache.get(keys)
    return _remember(cache, keys, check(keys)) if ok is None else ok


def _layout_ok(keys: tuple[str, ...]) -> bool:
    """Whether a record with these top-level keys is its own head: the runner's order
    (split_record's), with feedback and repair (when there) before second_turn."""
    if "second_turn" not in keys or "run_id" not in keys:
        return False
    q = keys.index("second_turn")
    head = set(keys[:q])
    return (
        q + 1 < len(keys)
        and keys[q + 1] == "judgement"
        and head >= HEAD_KEYS
        and all(k in head for k in ("feedback", "repair") if k in keys)
        and ("run_id" in head or keys.index("run_id") > q)
    )


def record_facts(rec: Mapping[str, Any]) -> Facts | None:
    """The facts of a decoded attempt record (the writer's, or a line read whole): what
    split_record and facts give, with the key-order checks remembered per order."""
    keys = tuple(rec)
    if not _known(_LAYOUTS, keys, _layout_ok):
        return _careful(rec)
    if rec["type"] != "attempt" or type(rec["run_id"]) is not str:
        return None
    st, j = rec["second_turn"], rec["judgement"]
    if st is not None:
        if type(st) is not dict:
            return None
        if not _known(_TURN_LAYOUTS, tuple(st), _turn_ok):
            return _careful(rec)
    jfacts = None
    if j is not None:
        if type(j) is not dict:
            return None
        cut_vn = _known(_CUT_LAYOUTS, tuple(j), _cut_ok)
        if not cut_vn:
            return _careful(rec)
        m = j["metrics"]
        if type(m) is not dict:
            return None
        failed = j["verdict"] == "fail" or (st and st.get("transport_error"))
        if failed and not isinstance(j["errors"], list):
            return None
        vn = j.get("verdict_normalized", _NO) if cut_vn == 2 else _NO
        try:
            # types too: 1, 1.0 and true are equal keys, and distinct JSON
            jkey = (j["verdict"], vn, *m.items(), *map(type, m.values()))
            jfacts = _JFACTS.get(jkey)
            if jfacts is None:
                jfacts = _remember(_JFACTS, jkey, _judgement_of(rec))
        except TypeError:  # a list in the metrics: not hashable
            jfacts = _judgement_of(rec)
    return facts(rec, st, jfacts, j is not None)


_NO = "\x00"  # no verdict_normalized before errors


def _turn_ok(skeys: tuple[str, ...]) -> bool:
    """Whether a second turn's keys before tool_results hold all that facts() reads."""
    if "tool_results" not in skeys:
        return False
    small = set(skeys[: skeys.index("tool_results")])
    if not {"transport_error", "judgement"} <= small:
        return False
    return all(k in small for k in ("retries", "usage") if k in skeys)


def _cut_ok(jkeys: tuple[str, ...]) -> int:
    """0: a judgement the report reads from its line; 1: its cut before errors holds the
    facts; 2: and verdict_normalized is in the cut too."""
    if not jkeys or jkeys[0] != "verdict" or "errors" not in jkeys:
        return 0
    cut = jkeys[: jkeys.index("errors")]
    if "metrics" not in cut:
        return 0
    return 2 if "verdict_normalized" in cut else 1


def _judgement_of(rec: Mapping[str, Any]) -> str | None:
    parts = split_record(rec)
    return None if parts is None or parts[2] is None else judgement_facts(parts[2])


def _careful(rec: Mapping[str, Any]) -> Facts | None:
    parts = split_record(rec)
    if parts is None:
        return None
    head, st, cut = parts
    return facts(head, st, None if cut is None else judgement_facts(cut), cut is not None)


class ReportRows:
    """The report's columns of a HistoryIndex, one entry per index row."""

    def __init__(self) -> None:
        self.kinds: list[tuple[Any, ...] | None] = [None]  # kind 0: ODD
        self.ids: dict[tuple[Any, ...], int] = {}
        self.kind = array("I")
        self.elapsed = array("d")
        self.cost = array("d")
        self.retries = array("I")
        self.tin = array("I")
        self.tout = array("I")
        # (line number, offset) of every line the report reads itself, in file order
        self.odd: list[tuple[int, int]] = []

    def columns(self) -> list[tuple[str, array[Any]]]:
        return [
            ("r:kind", self.kind),
            ("r:elapsed", self.elapsed),
            ("r:cost", self.cost),
            ("r:retries", self.retries),
            ("r:tin", self.tin),
            ("r:tout", self.tout),
        ]

    def extend(self, rows: list[Facts | None]) -> None:
        ids, kinds = self.ids, self.kinds
        codes = []
        for f in rows:
            if f is None:
                codes.append(ODD)
                continue
            code = ids.get(f[0])
            if code is None:
                code = ids[f[0]] = len(kinds)
                kinds.append(f[0])
            codes.append(code)
        self.kind.extend(codes)
        blank: Facts = ((), NAN, NAN, 0, 0, 0)
        full = [blank if f is None else f for f in rows]
        self.elapsed.extend([f[1] for f in full])
        self.cost.extend([f[2] for f in full])
        self.retries.extend([f[3] for f in full])
        self.tin.extend([f[4] for f in full])
        self.tout.extend([f[5] for f in full])

    def to_head(self, end: int) -> dict[str, Any]:
        """The tables a sidecar keeps, for the lines before ``end``."""
        return {"kinds": self.kinds[1:], "odd": [x for x in self.odd if x[1] < end]}

    def fill(self, head: Mapping[str, Any], cols: Mapping[str, Any]) -> None:
        self.kinds = [None]
        for k in head["kinds"]:
            k[9] = None if k[9] is None else tuple(k[9])
            k[10] = None if k[10] is None else tuple(k[10])
            self.kinds.append(tuple(k))
        self.ids = {k: i for i, k in enumerate(self.kinds) if k is not None}
        self.odd = [(int(n), int(o)) for n, o in head["odd"]]
        self.kind, self.elapsed, self.cost = cols["r:kind"], cols["r:elapsed"], cols["r:cost"]
        self.retries, self.tin, self.tout = cols["r:retries"], cols["r:tin"], cols["r:tout"]
