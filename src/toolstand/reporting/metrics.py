"""Metrics per provider × model × mode, recomputed from attempt records alone.

Every quality rate comes from ``judgement.metrics`` (first turn) and ``second_turn``
(error recovery) as docs/records.md fixes them; the judge decided, this module only
counts, so a re-judged history gives re-judged metrics. Modes are never pooled: auto,
forced, no_tools and reversed answer different questions (README). no_tools is a
control: the judge marks every case in it as expecting no call, so its tool-selection
and argument denominators are 0 and a text answer is a pass; a history judged before
that rule gets it from ``toolstand rejudge``.

compute_files is the fast path for big histories: lines are split, not decoded
(history.split_metrics), and a judgement is decoded once per distinct byte string,
because across repetitions most judgements are identical.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from toolstand.history import (
    HistoryWarning,
    RunMeta,
    decode_summary,
    field_problem,
    judgement_problem,
    open_indexed,
    outcome_problem,
    scan_with,
    sidecar_path,
    split_metrics,
    turn_types_problem,
    unique_paths,
)
from toolstand.reporting.categories import line_category
from toolstand.reporting.columnar import count_indexed
from toolstand.reporting.repairs import RepairTally
from toolstand.reporting.tally import (
    LOWER_IS_BETTER,
    METRICS,
    CaseTally,
    FailedAttempt,
    GroupStats,
    Outcome,
    Prices,
    Report,
    label_runs,
    outcome_vector,
    turn2_errors,
)

__all__ = [
    "LOWER_IS_BETTER",
    "METRICS",
    "CaseTally",
    "Collector",
    "FailedAttempt",
    "GroupStats",
    "Report",
    "compute",
    "compute_files",
    "outcome_vector",
]


def _slot_problem(rec: Mapping[str, Any]) -> str | None:
    for key in ("provider", "model", "mode", "case_id"):
        problem = field_problem(rec, key)
        if problem is not None:
            return problem
    return None


_BLOB_CACHE_LIMIT = 1 << 16
_GIVE_UP_SPLIT = 1000


class Collector:
    """Feeds on records (or raw lines) one at a time; ``report()`` freezes the result."""

    def __init__(self, *, collect_failures: bool = False) -> None:
        self.meta = RunMeta()
        self.groups: dict[tuple[Any, ...], GroupStats] = {}
        self.failures: list[FailedAttempt] = []
        self.collect_failures = collect_failures
        self._vectors: list[Outcome] = []
        self._vector_ids: dict[Outcome, int] = {}
        self._blob_ids: dict[bytes, int] = {}
        self._split_misses = 0
        self._split_works = False
        self.headerless = False  # a file without a run header: its matrix is unknown
        # a header said stream "both": each attempt's outcome is kept by repetition, for
        # the parity of the arms (reporting/parity.py)
        self.pair_streams = False
        # (provider, model, mode, case_id, api, feedback, stream, run identity) -> its group
        # and case: one lookup per attempt
        self._slots: dict[tuple[Any, ...], tuple[GroupStats, CaseTally]] = {}
        # case id -> the category of its first attempt line (reporting/categories.py)
        self.categories: dict[str, str | None] = {}

    def _new_slot(self, slot: tuple[Any, ...]) -> tuple[GroupStats, CaseTally]:
        """The group and case of a first-seen (provider, model, mode, case_id, api,
        feedback, stream, run identity), whose values the caller has checked. The
        identity of a record written before run identities is ``(run_id,)``: its
        headers settle it (spec/identity.HeaderRuns), or leave it None, unknown."""
        ident = slot[7]
        if type(ident) is tuple:
            ident = self.meta.runs.resolve(ident[0], slot[0], slot[1], slot[4])
        key = (*slot[:3], slot[5], slot[6], ident)
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = GroupStats(str(key[0]), str(key[1]), str(key[2]))
            if isinstance(slot[5], str):  # a feedback arm: reported apart, never mixed
                g.feedback, g.repair = slot[5], RepairTally(slot[5])
            g.stream = slot[6]  # the stream arm: reported apart too
            g.identity = ident  # a run of other requests: apart too (spec/identity.py)
        if slot[4] is not None and slot[4] not in g.apis:
            g.apis.append(str(slot[4]))  # the records of an unknown run may use two APIs
        case_id = str(slot[3])
        t = g.cases.get(case_id)
        if t is None:
            t = g.cases[case_id] = CaseTally(case_id)
        return (g, t)

    def _intern(self, vec: Outcome) -> int:
        vid = self._vector_ids.get(vec)
        if vid is None:
            vid = self._vector_ids[vec] = len(self._vectors)
            self._vectors.append(vec)
        return vid

    def add(self, rec: Mapping[str, Any]) -> str | None:
        """Count one decoded record (header or attempt, any reading level); for an
        attempt the stand cannot use, why (and nothing is counted)."""
        if rec.get("type") == "run":
            self.meta.add_header(rec)
            settings = rec.get("settings")
            if isinstance(settings, dict) and settings.get("stream") == "both":
                self.pair_streams = True
            return None
        j = rec.get("judgement")
        problem = outcome_problem(j, rec.get("transport_error")) or judgement_problem(j)
        if problem is not None:
            return problem
        vec = outcome_vector(j) if isinstance(j, dict) else None
        vid = None if vec is None else self._intern(vec)
        return self.count(rec, vid, j, rec.get("second_turn"))

    def decode_line(self, line: bytes) -> Any:
        """history.scan_with decoder: (head, vector id, None, second turn) for a line the
        fast path can count, else the decoded record for ``add``."""
        if not self._split_works and self._split_misses > _GIVE_UP_SPLIT:
            return orjson.loads(line)
        # the run_id too: a record older than run identities finds its run through it
        parts = split_metrics(line, run_id=True)
        if parts is None:
            # a history written in another key order: after enough misses and no hit,
            # stop paying for a split that never works and decode lines whole
            self._split_misses += 1
            return decode_summary(line)
        self._split_works = True
        head, blob, st = parts
        cid = head.get("case_id")
        if type(cid) is str and cid not in self.categories:
            self.categories[cid] = line_category(line)  # after the head: read once a case
        if blob is None:
            return (head, None, None, st)
        vid = self._blob_ids.get(blob)
        if vid is None:
            vid = self._blob_id(blob)
            if vid is None:
                return decode_summary(line)
        if self.collect_failures and not (
            self._vectors[vid].passed and not (st and st.get("transport_error"))
        ):
            return self._with_errors(line, head, vid, st)
        return (head, vid, None, st)

    def _with_errors(self, line: bytes, head: Any, vid: int, st: Any) -> Any:
        """A failing attempt as above, with its judgement's errors for the error table."""
        parts = split_metrics(line, with_errors=True, run_id=True)
        if parts is not None and parts[1] is not None:
            try:
                j = orjson.loads(parts[1])
            except orjson.JSONDecodeError:
                j = None  # "calls" was a key inside an error: decode the summary
            if isinstance(j, dict) and judgement_problem(j) is None:
                return (head, vid, j, st)
        return decode_summary(line)

    def _blob_id(self, blob: bytes) -> int | None:
        try:
            j = orjson.loads(blob)
        except orjson.JSONDecodeError:
            return None
        if outcome_problem(j, None) is not None or judgement_problem(j) is not None:
            return None  # read the careful way, whose check names the fault
        vec = outcome_vector(j) if isinstance(j, dict) else None
        if vec is None:
            return None
        if len(self._blob_ids) >= _BLOB_CACHE_LIMIT:
            self._blob_ids.clear()  # bounded: distinct judgements can be as many as lines
        vid = self._blob_ids[blob] = self._intern(vec)
        return vid

    def count(
        self,
        rec: Mapping[str, Any],
        vid: int | None,
        j: Mapping[str, Any] | None,
        st: Mapping[str, Any] | None,
    ) -> str | None:
        """Count one attempt: its top-level keys, its outcome vector id (None: not
        judged), its judgement (for the errors of a failure) and its second turn. An
        attempt without a field the stand needs is not counted: the problem is returned."""
        # the hot loop of a 1M-attempt report: local lookups, no helper calls per field
        get = rec.get
        number = get("attempt")
        if type(number) is not int or number < 1:
            return _slot_problem(rec) or field_problem(rec, "attempt")
        te = get("transport_error")
        if te is not None or (vid is None and j is None):
            # the rare outcomes; a judged one was checked when its judgement was decoded
            problem = outcome_problem(j, te)
            if problem is not None:
                return _slot_problem(rec) or problem
        problem = turn_types_problem(rec, st)
        if problem is not None:
            return _slot_problem(rec) or problem
        ident = get("run_identity")
        if ident is None:  # an older record's run is found through its run_id (_new_slot)
            rid = get("run_id")
            ident = (rid if type(rid) is str else None,)
        slot = (
            *(get("provider"), get("model"), get("mode"), get("case_id"), get("api")),
            *(get("feedback"), get("stream") is True, ident),
        )
        try:
            gt = self._slots.get(slot)
        except TypeError:  # a list or an object where a name belongs
            gt = None
        if gt is None:
            problem = _slot_problem(rec)  # checked once per distinct slot
            if problem is not None:
                return problem
            gt = self._slots[slot] = self._new_slot(slot)
            cid = gt[1].case_id
            if cid not in self.categories:  # a line decoded whole: its category is here
                category = get("category")
                self.categories[cid] = category if type(category) is str else None
        g, t = gt
        case_id = t.case_id
        if get("simulated"):
            g.simulated = True
        t.attempted += 1
        if number > g.repetitions:
            g.repetitions = number
        elapsed = get("elapsed_ms")
        if elapsed is not None:
            g.latencies.append(elapsed)
        if g.stream:
            g.add_stream_times(get("first_token_ms"), get("first_call_ms"))
        g.retries += get("retries") or 0
        usage = get("usage")
        if usage:
            tin, tout = usage.get("input_tokens"), usage.get("output_tokens")
            if tin is not None or tout is not None:
                g.usage_attempts += 1
                g.input_tokens += tin or 0
                g.output_tokens += tout or 0
        cost = get("cost_usd")
        if cost is not None:
            g.recorded_cost += cost
            g.recorded_cost_attempts += 1
        if st:
            g.retries += st.get("retries") or 0
            usage = st.get("usage")
            if usage:
                g.input_tokens += usage.get("input_tokens") or 0
                g.output_tokens += usage.get("output_tokens") or 0

        if te is not None:
            g.transport_errors[str(te.get("code"))] += 1
            if self.collect_failures:
                self.failures.append(
                    FailedAttempt(
                        *g.key,
                        case_id,
                        number,
                        [],
                        False,
                        te,
                        feedback=g.feedback,
                        identity=g.identity,
                        stream=g.stream,
                    )
                )
            return None
        if vid is None:
            g.unjudged += 1
            return None
        outcomes = t.outcomes
        outcomes[vid] = outcomes.get(vid, 0) + 1
        if self.pair_streams:
            g.reps[(case_id, number)] = vid
        if g.repair is not None:
            summary = get("repair")
            if isinstance(summary, dict):
                g.repair.add(summary, t.case_id, number)
        st_te = None
        if st:
            st_te = st.get("transport_error")
            if st_te:
                g.second_turn_transport_errors[str(st_te.get("code"))] += 1
            else:
                t.st_run += 1
                if (st.get("judgement") or {}).get("passed"):
                    t.st_passed += 1
        if self.collect_failures and j is not None:
            passed = self._vectors[vid].passed
            if passed and not st_te:
                return None
            errors = turn2_errors(j, st)
            self.failures.append(
                FailedAttempt(
                    *g.key,
                    case_id,
                    number,
                    errors,
                    not passed,
                    None,
                    st_te,
                    g.feedback,
                    identity=g.identity,
                    stream=g.stream,
                )
            )
        return None

    def report(
        self,
        files: list[str],
        warnings: list[HistoryWarning],
        prices: Prices | None = None,
    ) -> Report:
        where = ", ".join(files) or "<records>"
        for g in self.groups.values():
            if self.meta.simulated.get((g.provider, g.model)):
                g.simulated = True
            for t in g.cases.values():
                t.finalize(self._vectors)
            vectors = self._vectors
            g.reps = {k: (bool(vectors[v].passed), vectors[v].signature) for k, v in g.reps.items()}
            g.slots = None if self.headerless else self.meta.slots(g.key, g.identity)
            if g.slots is not None and g.attempted > g.slots:
                warnings.append(HistoryWarning(where, 0, g.over_matrix()))
        label_runs(self.groups.values(), self.meta.runs)
        return Report(
            files=files,
            meta=self.meta,
            groups=list(self.groups.values()),
            failures=self.failures,
            warnings=warnings,
            prices=dict(prices or {}),
            categories=self.categories,
        )


def compute(
    records: Iterable[Mapping[str, Any]],
    *,
    prices: Prices | None = None,
    collect_failures: bool = False,
) -> Report:
    """A report from records already in memory (headers and attempts)."""
    c = Collector(collect_failures=collect_failures)
    for rec in records:
        c.add(rec)
    return c.report([], [], prices)


BUILD_BYTES = 32 << 20  # a file this big without a sidecar is indexed (and one saved)


def compute_files(
    paths: Iterable[str | os.PathLike[str]],
    *,
    prices: Prices | None = None,
    collect_failures: bool = False,
    index: bool | None = None,
) -> Report:
    """A report straight from JSONL files, decoding only what the metrics need.

    A file's index (history.open_indexed) is used when its sidecar is valid, or, for a
    file of at least BUILD_BYTES or with a stale sidecar, built once and saved: its report columns then give
    the counts (reporting.columnar), the same as reading every line would.
    ``index`` True uses the index for every file, False for none.

    Raises OSError when a file cannot be opened; bad lines become warnings.
    """
    warnings: list[HistoryWarning] = []
    names = unique_paths(paths, warnings)
    c = Collector(collect_failures=collect_failures)
    add, count, decode = c.add, c.count, c.decode_line
    for name in names:
        headers = c.meta.headers
        ix = None
        if index is not False:
            build = (
                index is True
                or os.path.getsize(name) >= BUILD_BYTES
                or sidecar_path(name).exists()  # stale: it had one, it gets one again
            )
            ix = open_indexed(name, build=build)
        if ix is None or not count_indexed(c, ix, name, warnings):
            for number, _, rec in scan_with(name, decode, warnings):
                problem = count(*rec) if type(rec) is tuple else add(rec)
                if problem is not None:
                    warnings.append(HistoryWarning(name, number, f"attempt skipped: {problem}"))
        c.headerless |= c.meta.headers == headers
    return c.report(names, warnings, prices)
