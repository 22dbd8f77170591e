"""Baseline comparison for CI: fail only on a drop that the counts make significant.

Seed 001: 92% → 91% over ten cases is noise, 99% → 98% over a thousand repetitions may
not be. So every metric of every provider × model × mode gets a one-sided test:

* paired, when the same case ran on both sides as many times: each case is good when
  *all* its scored attempts were good for that metric (none unsafe for
  unsafe_call_rate), and the exact McNemar test weighs the cases that went good → bad
  against bad → good. All attempts rather than a majority, because a case that passed
  10/10 and now passes 7/10 has regressed and a majority rule would not see it;
  flakiness on both sides shows up as discordance in both directions and cancels out.
  Cases scored a different number of times are left out: more repetitions make "all
  good" rarer without any regression;
* unpaired otherwise (no such case, or a report without per-case counts): a pooled
  two-proportion z-test on the totals.

The totals are tested too, beside the paired test: a drop that the paired cases do not
show (the cases that regressed are the ones left out of the pairing) still fails.

A group is a provider × model × mode (and arms) of one run: two runs that send other
requests (api, base URL, options, settings: their ``run_identity``) are never pooled.
Groups that read alike pair by run identity; where one is left on each side (a report
older than run identities, or a gate on a change of options) they pair, with a note.

Besides the drops, things fail the gate whatever the tests say, each with its reason: a
baseline group missing from the current run (a model that stopped answering is not a
model without regressions); a current group whose transport failures exceed
``max_transport_errors`` of its attempts (100% 429s leave no scored attempt to test, so
no test could ever fail); and every baseline case that the current run does not account
for: missing from it, with no scored attempt (all lost to transport errors), or, at the
same repetitions, with fewer attempts recorded (crashed, never written). A regression
hides best in the cases that drop out of the comparison.

No correction for testing nine metrics by default (the exact tests are conservative on
small suites, and the metrics move together); ``correction="holm"`` is there for
gates over many models.

Both sides are JSON reports (``report.to_json``); a JSONL history is turned into one.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from toolstand.reporting.compare_groups import Key, entries, group_label, match
from toolstand.reporting.compare_parity import METRIC as PARITY
from toolstand.reporting.compare_parity import parity_entries
from toolstand.reporting.formats import pack
from toolstand.reporting.metrics import LOWER_IS_BETTER, METRICS
from toolstand.reporting.repairs import PAIRED_REPAIR_METRICS
from toolstand.reporting.report_file import load_report as load_report
from toolstand.reporting.report_file import report_problem as report_problem
from toolstand.reporting.stats import holm, mcnemar_exact, two_proportion_drop
from toolstand.util.printable import visible

Counts = tuple[int, int]
PerCase = dict[str, tuple[Counts, int]]  # case -> (counts for a metric, scored attempts)
MAX_TRANSPORT_ERRORS = 0.2  # the share of a group's attempts; above it the gate fails


@dataclass
class CaseChange:
    """A case that went from good to bad in a paired comparison."""

    case_id: str
    baseline: Counts
    current: Counts


@dataclass
class Check:
    """One metric of one provider × model × mode, tested for a drop."""

    provider: str
    model: str
    mode: str
    feedback: str | None  # the repair arm, None for a run without repair turns
    stream: bool | None  # the stream arm, None for a report without streamed entries
    run: str | None  # what tells the run from another that reads alike (report's "run")
    metric: str
    test: Literal["mcnemar", "two_proportion"]
    baseline: Counts
    current: Counts
    p_value: float
    p_adjusted: float = 1.0
    significant: bool = False
    worse: int = 0  # paired: cases good → bad
    better: int = 0  # paired: cases bad → good
    paired_cases: int = 0
    cases: list[CaseChange] = field(default_factory=list)

    @property
    def baseline_value(self) -> float | None:
        n, d = self.baseline
        return n / d if d else None

    @property
    def current_value(self) -> float | None:
        n, d = self.current
        return n / d if d else None

    @property
    def delta(self) -> float | None:
        """current - baseline rate (positive is worse for unsafe_call_rate)."""
        b, c = self.baseline_value, self.current_value
        return None if b is None or c is None else c - b

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            baseline_value=self.baseline_value, current_value=self.current_value, delta=self.delta
        )
        return d


@dataclass
class CompareResult:
    alpha: float
    checks: list[Check]
    notes: list[str]
    correction: str = "none"
    failures: list[str] = field(default_factory=list)  # gate failures, each its reason
    max_transport_errors: float = MAX_TRANSPORT_ERRORS

    @property
    def drops(self) -> list[Check]:
        return [c for c in self.checks if c.significant]

    @property
    def exit_code(self) -> int:
        return 1 if self.drops or self.failures else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "correction": self.correction,
            "max_transport_errors": self.max_transport_errors,
            "passed": self.exit_code == 0,
            "regression": bool(self.drops),
            "failures": self.failures,
            "drops": [c.to_dict() for c in self.drops],
            "checks": [c.to_dict() for c in self.checks],
            "notes": self.notes,
        }


def _counts(entry: Mapping[str, Any], metric: str) -> Counts | None:
    m = entry.get(metric)
    if isinstance(m, dict) and isinstance(m.get("denominator"), int):
        return (int(m.get("numerator") or 0), int(m["denominator"]))
    return None


def _case_good(metric: str, counts: Counts) -> bool:
    n, d = counts
    return n == 0 if metric in LOWER_IS_BETTER else n == d


def _per_case(entry: Mapping[str, Any], metric: str) -> PerCase:
    """case -> (its counts for the metric, its scored attempts), for cases with evidence."""
    out: dict[str, tuple[Counts, int]] = {}
    for cid, case in (entry.get("per_case") or {}).items():
        nd = (case.get("counts") or {}).get(metric)
        if nd and nd[1] > 0:
            out[cid] = ((int(nd[0]), int(nd[1])), int(case.get("scored") or 0))
    return out


def _check(key: Key, metric: str, base: Mapping[str, Any], cur: Mapping[str, Any]) -> Check | None:
    b_tot, c_tot = _counts(base, metric), _counts(cur, metric)
    if b_tot is None or c_tot is None or not b_tot[1] or not c_tot[1]:
        return None
    b_cases, c_cases = _per_case(base, metric), _per_case(cur, metric)
    # "all attempts good" is harder with more repetitions: 3 → 10 repetitions must not
    # look like a regression, so only cases scored alike are paired (``_paired``)
    shared = _paired(base, cur, b_cases, c_cases)
    if shared:
        changes, better = [], 0
        for cid in shared:
            (b_nd, _), (c_nd, _) = b_cases[cid], c_cases[cid]
            was, now = _case_good(metric, b_nd), _case_good(metric, c_nd)
            if was and not now:
                changes.append(CaseChange(cid, b_nd, c_nd))
            elif now and not was:
                better += 1
        p = mcnemar_exact(len(changes), better)
        return Check(
            *key,
            metric,
            "mcnemar",
            b_tot,
            c_tot,
            p,
            worse=len(changes),
            better=better,
            paired_cases=len(shared),
            cases=changes,
        )
    return _totals(key, metric, base, cur)


def _totals(key: Key, metric: str, base: Mapping[str, Any], cur: Mapping[str, Any]) -> Check:
    """The two-proportion test on the group's totals for one metric."""
    b_tot, c_tot = _counts(base, metric), _counts(cur, metric)
    assert b_tot is not None and c_tot is not None
    if metric in LOWER_IS_BETTER:  # test the drop of the good share
        _, p = two_proportion_drop(b_tot[1] - b_tot[0], b_tot[1], c_tot[1] - c_tot[0], c_tot[1])
    else:
        _, p = two_proportion_drop(b_tot[0], b_tot[1], c_tot[0], c_tot[1])
    return Check(*key, metric, "two_proportion", b_tot, c_tot, p)


def _left_out(metric: str, base: Mapping[str, Any], cur: Mapping[str, Any]) -> bool:
    """Whether the paired test of ``metric`` leaves out a case that has evidence on
    either side; when it leaves out none, the totals add nothing to it."""
    b_cases, c_cases = _per_case(base, metric), _per_case(cur, metric)
    return bool((set(b_cases) | set(c_cases)) - set(_paired(base, cur, b_cases, c_cases)))


def _paired(base: Mapping[str, Any], cur: Mapping[str, Any], b: PerCase, c: PerCase) -> list[str]:
    """The cases the paired test weighs: on both sides, and scored as often, or at the
    same repetitions (a case that lost attempts to transport errors is paired on what
    was scored: fewer attempts only make "all good" easier, never a false alarm)."""
    same_reps = _repetitions(base) == _repetitions(cur) is not None
    return [cid for cid in b if cid in c and (same_reps or b[cid][1] == c[cid][1])]


def _repetitions(entry: Mapping[str, Any]) -> int | None:
    """How many attempts a case of the group usually has (the most common count): the
    repetitions, whatever a few crashed or unrun cases lost."""
    counts: dict[int, int] = {}
    for case in (entry.get("per_case") or {}).values():
        n = case.get("attempted") if isinstance(case, dict) else None
        if isinstance(n, int) and n > 0:
            counts[n] = counts.get(n, 0) + 1
    return max(counts, key=lambda n: (counts[n], n)) if counts else None


def _unaccounted(label: str, base: Mapping[str, Any], cur: Mapping[str, Any]) -> list[str]:
    """A gate failure for the baseline cases the current run does not account for: each
    kind of loss is one failure naming its cases, so a whole suite renamed reads as one
    line, not a thousand."""
    b, c = base.get("per_case"), cur.get("per_case")
    if not isinstance(b, dict) or not isinstance(c, dict) or not b:
        return []
    same_reps = _repetitions(base) == _repetitions(cur) is not None
    missing, lost, short = [], [], []
    for cid, b_case in b.items():
        if not isinstance(b_case, dict) or not b_case.get("scored"):
            continue  # nothing to lose: the baseline scored it never
        c_case = c.get(cid)
        if not isinstance(c_case, dict):
            missing.append(cid)
        elif not c_case.get("scored"):
            lost.append(f"{cid} (0 of {c_case.get('attempted', 0)})")
        elif same_reps and int(c_case.get("attempted") or 0) < int(b_case.get("attempted") or 0):
            short.append(f"{cid} ({c_case.get('attempted')} of {b_case.get('attempted')})")
    failures = []
    for cases, what in (
        (missing, "in baseline, missing from current (not run, or crashed unrecorded)"),
        (lost, "no scored attempt in current (all lost to transport errors)"),
        (short, "fewer attempts recorded than in baseline at the same repetitions (crashed)"),
    ):
        if cases:
            shown = ", ".join(cases[:10]) + (
                f", … {len(cases) - 10} more" if len(cases) > 10 else ""
            )
            failures.append(f"{label}: {len(cases)} case(s) {what}: {shown}")
    return failures


def _notes(base: Mapping[str, Any], cur: Mapping[str, Any]) -> list[str]:
    notes = []
    for field_, label in (
        ("contract_hash", "contract hash"),
        ("cases_hash", "cases hash"),
        ("cases_version", "cases version"),
        ("prompt_hash", "prompt hash"),
        ("prompt_version", "prompt version"),
    ):
        b, c = base.get(field_), cur.get(field_)
        if b is not None and c is not None and b != c:
            notes.append(f"{label} differs: {b} → {c}")
    return notes


def _case_notes(label: str, base: Mapping[str, Any], cur: Mapping[str, Any]) -> list[str]:
    b, c = base.get("per_case") or {}, cur.get("per_case") or {}
    notes = []
    if b and c and set(b) != set(c):
        notes.append(
            f"{label}: {len(set(b) - set(c))} case(s) only in baseline, "
            f"{len(set(c) - set(b))} only in current; paired tests use shared cases"
        )
    uneven = [cid for cid in b if cid in c and b[cid].get("scored") != c[cid].get("scored")]
    if uneven and _repetitions(base) != _repetitions(cur):
        notes.append(
            f"{label}: {len(uneven)} shared case(s) scored a different number of times "
            "(repetitions or transport failures); left out of the paired tests"
        )
    return notes


def _metrics(key: Key) -> tuple[str, ...]:
    """The metrics compared: the repair rates too within a feedback arm (paired per case)."""
    return METRICS + (PAIRED_REPAIR_METRICS if key[3] is not None else ())


def _transport_failure(label: str, entry: Mapping[str, Any], limit: float) -> str | None:
    """The reason a group fails the gate on its transport errors, or None."""
    errors = entry.get("transport_errors")
    attempted = entry.get("attempted")
    if not isinstance(errors, dict) or not isinstance(attempted, int) or attempted <= 0:
        return None
    count = sum(n for n in errors.values() if isinstance(n, int))
    if count / attempted <= limit:
        return None
    codes = ", ".join(f"{code} {n}" for code, n in sorted(errors.items()))
    return (
        f"{label}: transport errors in {count} of {attempted} attempts ({count / attempted:.1%};"
        f" {codes}), above the {limit:.0%} allowed"
    )


def compare(
    baseline: Mapping[str, Any],
    current: Mapping[str, Any],
    *,
    alpha: float = 0.05,
    correction: Literal["none", "holm"] = "none",
    max_transport_errors: float = MAX_TRANSPORT_ERRORS,
) -> CompareResult:
    """Test every shared metric for a significant drop from baseline to current, and
    fail the gate on a baseline group missing from current or a current group with
    more than ``max_transport_errors`` of its attempts lost to transport failures.

    ``correction="holm"`` adjusts for testing many metrics at once; the default leaves
    p-values raw because the exact tests are already conservative on small suites.
    """
    notes = _notes(baseline, current)
    matched = match(entries(baseline), entries(current), notes)
    checks: list[Check] = []
    failures = [
        f"{group_label(key)}: in baseline, missing from current"
        for key, _, c_entry in matched
        if c_entry is None
    ]
    for key, b_entry, c_entry in matched:
        if c_entry is None:
            continue
        failure = _transport_failure(group_label(key), c_entry, max_transport_errors)
        if failure is not None:
            failures.append(failure)
        if b_entry is None:
            notes.append(f"{group_label(key)}: not in baseline, not compared")
            continue
        notes += _case_notes(group_label(key), b_entry, c_entry)
        failures += _unaccounted(group_label(key), b_entry, c_entry)
        for metric in _metrics(key):
            checks += _checks(key, metric, b_entry, c_entry, notes)
    # the stream arms' parity, one metric per group (compare_parity says what is tested)
    # (a change of run identity is noted once, with the results)
    for key, b_entry, c_entry in match(parity_entries(baseline), parity_entries(current), []):
        if c_entry is None:
            failures.append(_parity_gone(key))
        elif b_entry is None:
            notes.append(f"{group_label(key)}: stream parity not in baseline, not compared")
        else:
            checks += _checks(key, PARITY, b_entry, c_entry, notes)
    adjusted = holm([c.p_value for c in checks]) if correction == "holm" else None
    for i, c in enumerate(checks):
        c.p_adjusted = adjusted[i] if adjusted else c.p_value
        c.significant = c.p_adjusted < alpha
    return CompareResult(alpha, checks, notes, correction, failures, max_transport_errors)


def _parity_gone(key: Key) -> str:
    return f"{group_label(key)}: stream parity in baseline, missing from current"


def _checks(
    key: Key, metric: str, base: Mapping[str, Any], cur: Mapping[str, Any], notes: list[str]
) -> list[Check]:
    """The test of one metric of one group, and the totals' beside a paired test that
    left cases out (a regression hides best in those)."""
    check = _check(key, metric, base, cur)
    if check is None:
        if _counts(base, metric) is None or _counts(cur, metric) is None:
            notes.append(f"{group_label(key)}: {metric} has no counts, not compared")
        return []
    if check.test == "mcnemar" and _left_out(metric, base, cur):
        return [check, _totals(key, metric, base, cur)]
    return [check]


def _pct(counts: Counts) -> str:
    n, d = counts
    return f"{n / d:.1%} ({n}/{d})" if d else f"— ({n}/{d})"


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] + "…" if len(text) == 64 else text  # a sha256 reads as its prefix


def render(result: CompareResult, baseline: str = "baseline", current: str = "current") -> str:
    """A CI log within 100 columns: notes, gate failures, then each group's checks, drops
    marked with the cases that went from good to bad; the last line is the verdict.

    Names come from histories: every line is shown with its control characters spelled
    out (printable.visible), so a provider or case id cannot drive the CI's terminal.
    """
    lines = [
        f"compare (one-sided tests, alpha {result.alpha}, correction {result.correction})",
        f"  baseline {baseline}",
        f"  current  {current}",
    ]
    for note in result.notes:
        words = [_short(w) for w in visible(note).split(" ")]
        lines += textwrap.wrap("note: " + " ".join(words), 100, subsequent_indent="      ")
    for failure in result.failures:
        lines += textwrap.wrap("FAIL " + visible(failure), 100, subsequent_indent="      ")
    group: Key | None = None
    for c in result.checks:
        if (c.provider, c.model, c.mode, c.feedback, c.stream, c.run) != group:
            group = (c.provider, c.model, c.mode, c.feedback, c.stream, c.run)
            lines.append(group_label(group))
        delta = "" if c.delta is None else f" {c.delta * 100:+.1f} pp"
        lines.append(
            f"  {'DROP' if c.significant else 'ok  '} {c.metric:<28} {_pct(c.baseline)} → "
            f"{_pct(c.current)}{delta}  p={c.p_adjusted:.3g}"
        )
        if not c.significant:
            continue
        if c.test == "mcnemar":
            lines.append(
                f"       McNemar over {c.paired_cases} paired cases: {c.worse} got worse, "
                f"{c.better} got better"
            )
            changes = [
                f"{ch.case_id} {ch.baseline[0]}/{ch.baseline[1]}→{ch.current[0]}/{ch.current[1]}"
                for ch in c.cases
            ]
            lines += pack(changes, "       cases:", 14)
        else:
            lines.append("       two-proportion z-test on the totals")
    drops = result.drops
    verdict = (
        f"{len(drops)} significant drop(s) in {len(result.checks)} checks"
        if drops
        else f"no significant drop in {len(result.checks)} checks"
    )
    if result.failures:
        verdict = f"gate FAILED: {len(result.failures)} failure(s) above; {verdict}"
    lines.append(verdict)
    return "\n".join(map(visible, lines)) + "\n"
