"""The report of a history from its index's report columns (history.report_rows).

metrics.Collector counts an attempt line by line; here the same counts come from the
columns the History index keeps per row: a Counter over the kind column, one pass over
the numbers that vary, and the old per-line code for exactly the lines the columns do
not stand for (history.ReportRows.odd: headers, foreign or torn lines, attempts out of
the runner's layout), in file order. The failures of the error CSV and JUnit are read
from their own lines by offset. The result is the Collector's, field for field.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter
from itertools import compress, filterfalse
from math import isnan
from typing import IO, Any

import orjson

from toolstand.history import (
    ODD,
    HistoryIndex,
    HistoryWarning,
    bounded_lines,
    decode_summary,
    read_line,
)
from toolstand.reporting.categories import line_category
from toolstand.reporting.tally import FailedAttempt, outcome_vector, turn2_errors

_GIVE_UP_SPLIT = 1000  # metrics.Collector's: past this many misses it decodes lines whole


def count_indexed(c: Any, ix: HistoryIndex, name: str, warnings: list[HistoryWarning]) -> bool:
    """Count the history ``ix`` indexes into the Collector ``c``; False (nothing counted)
    when the per-line reading would differ from the columns' (the Collector would have
    given up splitting lines before the first row the columns hold)."""
    rep = ix.report
    odd = sorted(rep.odd, key=lambda x: x[1])
    rows = ix.rows
    kinds = rep.kind
    if not c._split_works and any(kinds):
        first = ix.offsets[next(i for i, k in enumerate(kinds) if k != ODD)]
        before = sum(1 for _, off in odd if off < first)
        if c._split_misses + before > _GIVE_UP_SPLIT:
            return False
    older = _older_runs(c, ix)
    if older is None:
        return False
    cache: dict[int, _Kind] = {}  # the file's kinds, as this Collector counts them
    with open(name, "rb") as fh:
        start = 0
        for number, off in odd:
            stop = bisect_left(ix.offsets, off, start, rows)
            _bulk(c, ix, fh, cache, start, stop, older)
            start = stop
            fh.seek(off)
            _line(c, name, number, fh.readline(), warnings)
        _bulk(c, ix, fh, cache, start, rows, older)
        fh.seek(ix.end)
        # a torn last line, or lines written since the index was read
        for number, raw in enumerate(bounded_lines(fh, name, warnings, ix.lines + 1), ix.lines + 1):
            _line(c, name, number, raw, warnings)
    return True


Older = dict[tuple[Any, Any, Any], str | None]


def _older_runs(c: Any, ix: HistoryIndex) -> Older | None:
    """The run identity of each (provider, model, api) whose rows were written before run
    identities, as the Collector would find it through each row's run_id; None when the
    run_ids of the file do not agree on one, or a header of one lists two such runs
    (then the lines are counted one by one, the Collector's way)."""
    older = {(k[0], k[1], k[4]) for k in ix.report.kinds[1:] if k is not None and k[13] is None}
    if not older:
        return {}
    runs = c.meta.runs.merged(ix.headers)
    run_ids = ix.facets["run"].values
    out: Older = {}
    for provider, model, api in older:
        found = set()
        for rid in run_ids:
            candidates = runs.candidates(rid, provider, model, api)
            if len(candidates) > 1:
                return None
            found.add(candidates[0] if candidates else None)
        if len(found) != 1:
            return None
        out[(provider, model, api)] = found.pop()
    return out


def _line(c: Any, name: str, number: int, raw: bytes, warnings: list[HistoryWarning]) -> None:
    """One line the old way (metrics.compute_files's loop body)."""
    rec = read_line(name, number, raw, c.decode_line, warnings)
    if rec is None:
        return
    problem = c.count(*rec) if type(rec) is tuple else c.add(rec)
    if problem is not None:
        warnings.append(HistoryWarning(name, number, f"attempt skipped: {problem}"))


class _Kind:
    """What one kind of row adds: its group and case, and its outcome."""

    __slots__ = ("failing", "g", "key", "t", "vid")

    def __init__(self, c: Any, key: tuple[Any, ...], older: Older) -> None:
        ident = key[13] if key[13] is not None else older[(key[0], key[1], key[4])]
        slot = (*key[:6], False, ident)  # a streamed row is read from its line (report_rows)
        gt = c._slots.get(slot)
        if gt is None:
            gt = c._slots[slot] = c._new_slot(slot)
        self.key = key
        self.g, self.t = gt
        self.vid = None
        te_code, jfacts, second = key[7], key[8], key[10]
        if te_code is None:
            vec = outcome_vector(orjson.loads(jfacts))
            assert vec is not None  # report_rows keeps only judgements with metrics
            self.vid = c._intern(vec)
            self.failing = not vec.passed or bool(second and second[0])
        else:
            self.failing = True


def _bulk(
    c: Any, ix: HistoryIndex, fh: IO[bytes], cache: dict[int, _Kind], a: int, b: int, older: Older
) -> None:
    """Count rows a..b-1 whose kind is not ODD, as Collector.count would one by one."""
    if a >= b:
        return
    rep = ix.report
    kinds = rep.kind[a:b]
    counts = Counter(kinds)
    counts.pop(ODD, None)
    if not counts:
        return
    c._split_works = True  # these lines split: the Collector would have learned so
    groups: dict[int, int] = {}  # id(group) -> ordinal in ``stats``
    stats: list[Any] = []
    ordinal: list[int] = [-1] * len(rep.kinds)
    order = list(dict.fromkeys(kinds))  # first seen first: groups and cases in file order
    _categories(c, ix, fh, kinds, order, a)
    for k in order:
        if k == ODD:
            continue
        kd = cache.get(k)
        if kd is None:
            kd = cache[k] = _Kind(c, rep.kinds[k], older)  # type: ignore[arg-type]
        ordinal[k] = groups.setdefault(id(kd.g), len(groups))
        if ordinal[k] == len(stats):
            stats.append(kd.g)
        _add_kind(kd, counts[k])
    attempts = ix.attempt[a:b]
    _repairs(cache, kinds, attempts)
    if c.pair_streams:
        _reps(cache, kinds, attempts)
    _numbers(stats, ordinal, rep, kinds, attempts, a, b)
    if c.collect_failures:
        failing = {k for k in counts if cache[k].failing}
        if failing:
            rows = compress(range(a, b), map(failing.__contains__, kinds))
            for i in rows:
                _failure(c, cache[rep.kind[i]], ix, fh, i)


def _categories(
    c: Any, ix: HistoryIndex, fh: IO[bytes], kinds: Any, order: list[int], a: int
) -> None:
    """The category of each case these rows show first, from the line of its first row,
    as Collector.decode_line reads it (kinds in ``order`` first occur in rising rows)."""
    pos, keys = 0, ix.report.kinds
    for k in order:
        key = keys[k]  # None only for ODD
        if key is None or key[3] in c.categories:
            continue
        cid = key[3]
        pos = kinds.index(k, pos)
        fh.seek(ix.offsets[a + pos])
        c.categories[cid] = line_category(fh.readline())


def _add_kind(kd: _Kind, n: int) -> None:
    key, g, t = kd.key, kd.g, kd.t
    if key[6]:
        g.simulated = True
    t.attempted += n
    if key[11]:
        g.usage_attempts += n
    if key[7] is not None:
        g.transport_errors[key[7]] += n
        return
    outcomes = t.outcomes
    outcomes[kd.vid] = outcomes.get(kd.vid, 0) + n
    second = key[10]
    if second is not None:
        if second[0]:
            g.second_turn_transport_errors[second[0]] += n
        else:
            t.st_run += n
            if second[1]:
                t.st_passed += n


def _repairs(cache: dict[int, _Kind], kinds: Any, attempts: Any) -> None:
    """The repair summaries of the rows in a repair arm, row by row: the report pairs
    the arms per (case, repetition), so each needs its attempt number."""
    summaries: dict[int, dict[str, Any] | None] = {}
    for k, number in zip(kinds, attempts, strict=True):
        if k == ODD:
            continue
        kd = cache[k]
        if k not in summaries:
            summaries[k] = _summary(kd)
        summary = summaries[k]
        if summary is not None and kd.g.repair is not None:
            kd.g.repair.add(summary, kd.t.case_id, int(number))


def _reps(cache: dict[int, _Kind], kinds: Any, attempts: Any) -> None:
    """Each judged row's outcome by (case, repetition), as Collector.count keeps it for a
    run with stream "both" (the arms pair on it: reporting/parity.py)."""
    for k, number in zip(kinds, attempts, strict=True):
        if k == ODD:
            continue
        kd = cache[k]
        if kd.vid is not None:
            kd.g.reps[(kd.t.case_id, int(number))] = kd.vid


def _summary(kd: _Kind) -> dict[str, Any] | None:
    """The repair summary a row of this kind carried (None: none, or a transport error)."""
    if kd.key[7] is not None or kd.key[9] is None or kd.g.repair is None:
        return None
    needed, te, tin, tout, valid, k = kd.key[9]
    return {"needed": needed, "transport_error": te, "input_tokens": tin,
            "output_tokens": tout, "valid_after": 1 if valid else None,
            "passed_after": k}  # fmt: skip


def _numbers(
    stats: list[Any], ordinal: list[int], rep: Any, kinds: Any, attempts: Any, a: int, b: int
) -> None:
    """Latencies, retries, tokens, cost and repetitions of the rows, per group."""
    elapsed, cost = rep.elapsed[a:b], rep.cost[a:b]
    retries, tin, tout = rep.retries[a:b], rep.tin[a:b], rep.tout[a:b]
    if len(stats) == 1:
        (g,) = stats
        g.latencies.extend(array("d", filterfalse(isnan, elapsed)))
        g.retries += sum(retries)
        g.input_tokens += sum(tin)
        g.output_tokens += sum(tout)
        g.repetitions = max(g.repetitions, max(compress(attempts, kinds)))
        for x in filterfalse(isnan, cost):
            g.recorded_cost += x
            g.recorded_cost_attempts += 1
        return
    n = len(stats)
    lat = [array("d") for _ in range(n)]
    add = [x.append for x in lat]
    sums = [[0, 0, 0, 0] for _ in range(n)]
    gcodes = list(map(ordinal.__getitem__, kinds))
    for gi, e, r, i, o, at in zip(gcodes, elapsed, retries, tin, tout, attempts, strict=True):
        if gi < 0:
            continue
        if e == e:
            add[gi](e)
        s = sums[gi]
        s[0] += r
        s[1] += i
        s[2] += o
        if at > s[3]:
            s[3] = at
    for g, lt, s in zip(stats, lat, sums, strict=True):
        g.latencies.extend(lt)
        g.retries += s[0]
        g.input_tokens += s[1]
        g.output_tokens += s[2]
        g.repetitions = max(g.repetitions, s[3])
    for i in compress(range(len(cost)), map(_is_number, cost)):
        g = stats[gcodes[i]]
        g.recorded_cost += cost[i]
        g.recorded_cost_attempts += 1


def _is_number(x: float) -> bool:
    return x == x  # not NaN, the column's "no value"


def _failure(c: Any, kd: _Kind, ix: HistoryIndex, fh: IO[bytes], i: int) -> None:
    """The FailedAttempt of row i, from its own line (the error table needs its errors)."""
    fh.seek(ix.offsets[i])
    rec = decode_summary(fh.readline())
    g = kd.g
    head = (g.provider, g.model, g.mode, kd.t.case_id, ix.attempt[i])
    if kd.key[7] is not None:
        te = rec.get("transport_error")
        c.failures.append(
            FailedAttempt(
                *head, [], False, te, feedback=g.feedback, identity=g.identity, stream=g.stream
            )
        )
        return
    j, st = rec.get("judgement") or {}, rec.get("second_turn")
    st_te = st.get("transport_error") if st else None
    passed = c._vectors[kd.vid].passed
    errors = turn2_errors(j, st)
    failed = FailedAttempt(
        *head, errors, not passed, None, st_te, g.feedback, identity=g.identity, stream=g.stream
    )
    c.failures.append(failed)
