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
  second turn's outcome, whether the attempt reported usage, whether it was judged and
  its run identity (None for a record written before them);
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
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from toolstand.history.fields import judgement_problem, second_turn_problem

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


def usage_tokens(usage: Any) -> tuple[Any, Any] | None:
    """(input_tokens, output_tokens) of a record's ``usage`` as the report reads them
    (None for an absent usage or count), or None when the line reader would name a fault."""
    if usage is None:
        return None, None
    if type(usage) is not dict:
        return None
    tin, tout = usage.get("input_tokens"), usage.get("output_tokens")
    return (tin, tout) if _count(tin) and _count(tout) else None


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
    if judgement_problem(cut) is not None:
        return None
    keep = {k: cut[k] for k in ("verdict", "verdict_normalized", "metrics") if k in cut}
    try:
        return orjson.dumps(keep).decode()
    except TypeError:
        return None


def facts(head: Mapping[str, Any], st: Any, jfacts: str | None, judged: bool) -> Facts | None:
    """The row's facts from its head, its second turn's small keys and its judgement's
    facts (``judged``: the judgement was not null); None when only the line will do.
    (The writer's hot path: one lookup per field, checks inline.)"""
    get = head.get
    if get("stream") is True:
        return None  # a streamed row's first-token and first-call times: from its line
    ident = get("run_identity")
    if not (ident is None or type(ident) is str):
        return None
    number, provider, model, mode, case_id, api, feedback, te, elapsed, cost, retries, latency = (
        map(get, _FIELDS)
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
        or not (elapsed is None or _amount(elapsed))
        or not (cost is None or _amount(cost))
        or not (retries is None or (type(retries) is int and 0 <= retries < _U32))
        or not (latency is None or _amount(latency))
        or get("first_token_ms") is not None
        or get("first_call_ms") is not None
    ):
        return None  # read from the line, whose checks name the fault
    te_code = None
    if te is not None:
        if type(te) is not dict or type(te.get("code")) is not str:
            return None
        te_code = te["code"]
    elif jfacts is None:
        return None  # not judged, or judged in a way the report reads from the line
    tokens = usage_tokens(get("usage"))
    if tokens is None:
        return None
    tin, tout = tokens
    retries, tin_all, tout_all = retries or 0, tin or 0, tout or 0
    second = None
    if st is not None:
        if second_turn_problem(st) is not None:
            return None  # the second turn's numbers and judgement: as the line reader checks
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
        ident,
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
_FIELDS += ("feedback", "transport_error", "elapsed_ms", "cost_usd", "retries", "latency_ms")


def _amount(x: Any) -> bool:
    """A time or a cost fields.type_problem accepts: a non-negative finite number."""
    kind = type(x)
    return (kind is int and 0 <= x < _U32) or (kind is float and 0 <= x < _INF)


_INF = float("inf")


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


def repair_ended(repair: tuple[Any, ...] | None) -> str | None:
    """How repair turns ended, from ``_repair``'s reading (a kind's repair field): "err"
    (a transport error stopped them), "pass" (one passed), "fail"; None: none needed."""
    if repair is None:
        return None
    if repair[1] is not None:
        return "err"
    return "pass" if repair[5] is not None else "fail"


def record_repair_ended(rec: Mapping[str, Any]) -> str | None:
    """``repair_ended`` of an attempt record's repair summary, read as the report reads
    it (a summary it reads apart, or none: None)."""
    summary = rec.get("repair")
    got = _repair(summary) if isinstance(summary, Mapping) else None
    return None if isinstance(got, bool) else repair_ended(got)


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


def _kind_ok(k: Any) -> bool:
    """Whether a kind read back from a sidecar is one ``facts`` could have made."""
    if type(k) is not tuple or len(k) != 14 or not all(type(x) is str for x in k[:4]):
        return False
    if not (k[13] is None or type(k[13]) is str):  # the run identity
        return False
    api, feedback, _, te, jfacts, repair, second = k[4:11]
    if not all(x is None or type(x) is str for x in (api, feedback, te, jfacts)):
        return False
    if not (repair is None or (type(repair) is tuple and len(repair) == 6)):
        return False
    if not (second is None or (type(second) is tuple and len(second) == 2)):
        return False
    if jfacts is None:
        return te is not None
    cut = orjson.loads(jfacts)
    if type(cut) is not dict or cut.get("verdict") not in ("pass", "fail"):
        return False
    return type(cut.get("metrics")) is dict and judgement_problem(cut) is None


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

    def extend(self, rows: Sequence[Facts | None]) -> None:
        if not rows:
            return
        blank: Facts = (None, NAN, NAN, 0, 0, 0)  # type: ignore[assignment]
        # one transpose at C speed: the kinds and the five numeric columns of the chunk
        self.extend_columns(*zip(*[blank if f is None else f for f in rows], strict=True))

    def extend_columns(
        self,
        kinds: Sequence[Any],
        elapsed: Sequence[float],
        cost: Sequence[float],
        retries: Sequence[int],
        tin: Sequence[int],
        tout: Sequence[int],
    ) -> None:
        """The rows of a chunk, a column each: a kind (None: ODD, its numbers blank:
        NaN, NaN, 0, 0, 0) and the five numbers."""
        ids, kinds_seen = self.ids, self.kinds
        codes: list[Any] = list(map(ids.get, kinds))
        if None in codes:  # ODD rows and kinds not seen yet, numbered in row order
            for i, (k, code) in enumerate(zip(kinds, codes, strict=True)):
                if code is None:
                    if k is None:
                        codes[i] = ODD
                        continue
                    code = ids.get(k)
                    if code is None:
                        code = ids[k] = len(kinds_seen)
                        kinds_seen.append(k)
                    codes[i] = code
        # each column through an array of its own: array() reads a list at C speed,
        # extend() item by item
        for (_, col), values in zip(
            self.columns(), (codes, elapsed, cost, retries, tin, tout), strict=True
        ):
            col.extend(array(col.typecode, values))

    def to_head(self, end: int) -> dict[str, Any]:
        """The tables a sidecar keeps, for the lines before ``end``."""
        return {"kinds": self.kinds[1:], "odd": [x for x in self.odd if x[1] < end]}

    def problem(self, rows: int, end: int) -> str | None:
        """Why columns loaded from a sidecar cannot be counted, or None: kinds of the
        shape ``facts`` makes, codes in range, odd lines before ``end``."""
        if rows and max(self.kind) >= len(self.kinds):
            return "report kinds past the table"
        if not all(map(_kind_ok, self.kinds[1:])):
            return "a report kind of another shape"
        if not all(type(n) is int and type(o) is int and 0 <= o < end for n, o in self.odd):
            return "odd lines"
        return None

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
