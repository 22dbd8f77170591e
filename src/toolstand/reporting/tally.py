"""What a report counts, per case and per provider × model × mode (no reading, no Textual).

metrics.Collector fills these from the history; formats.py and compare.py render them.
Every rate is numerator / denominator; a group's counts are sums of its cases' counts.
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from toolstand.history import HistoryWarning, RunMeta
from toolstand.reporting.repairs import RepairTally
from toolstand.reporting.stats import Rate, percentile
from toolstand.spec.identity import HeaderRuns, distinguishing

METRICS: tuple[str, ...] = (
    "pass_rate",
    "normalized_pass_rate",
    "decision_accuracy",
    "tool_selection_accuracy",
    "raw_schema_validity",
    "exact_argument_accuracy",
    "normalized_argument_accuracy",
    "unsafe_call_rate",
    "error_recovery_accuracy",
    "consistency",
)
# fallback_rate: a repair metric (reporting/repairs.py), compared only between arms
LOWER_IS_BETTER: frozenset[str] = frozenset({"unsafe_call_rate", "fallback_rate"})

Prices = Mapping[str, Mapping[str, float]]  # model -> {"input_per_mtok", "output_per_mtok"}


class Outcome(NamedTuple):
    """An outcome vector: what one judged attempt adds to its case's counters.
    Judgements repeat across repetitions, so cases count vector ids and the sums are
    made once. Every field but ``signature`` is a count (a bool counts 0 or 1)."""

    passed: int
    decision: int
    expects: int
    selection: int
    calls: int
    valid: int
    exact_den: int
    exact: int
    norm: int
    unsafe: int
    # the verdict had each call's normalized match counted (design.md: verdict_normalized)
    norm_passed: int
    signature: Any


_COUNTS = len(Outcome._fields) - 1  # every field before signature
_NO_SUMS = Outcome._make([0] * _COUNTS + [None])


def outcome_vector(j: Mapping[str, Any]) -> Outcome | None:
    """The counted facts of one judgement, or None when it carries no metrics."""
    m = j.get("metrics")
    if not isinstance(m, dict):
        return None
    get = m.get
    expects = bool(get("expects_call"))
    return Outcome(
        j.get("verdict") == "pass",
        bool(get("decision_correct")),
        expects,
        expects and bool(get("tool_selection_correct")),
        int(get("calls_made") or 0),
        int(get("calls_schema_valid") or 0),
        int(get("exact_denominator") or 0),
        int(get("exact_correct") or 0),
        int(get("normalized_correct") or 0),
        bool(get("unsafe")),
        _normalized_pass(j),
        get("signature"),
    )


def turn2_errors(j: Mapping[str, Any], st: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The attempt's errors; second-turn codes taken from second_turn if the runner
    did not already fold them into the attempt's list."""
    errors = list(j.get("errors") or [])
    if st and not any(e.get("turn") == 2 for e in errors):
        sj = st.get("judgement") or {}
        errors.extend({**e, "turn": 2} for e in sj.get("errors") or [])
    return errors


def _normalized_pass(j: Mapping[str, Any]) -> bool:
    """verdict_normalized is pass; a record judged before it existed has its verdict."""
    return j.get("verdict_normalized", j.get("verdict")) == "pass"


class CaseTally:
    """Counters of one case within one provider × model × mode."""

    __slots__ = ("attempted", "case_id", "outcomes", "signatures", "st_passed", "st_run", "sums")

    def __init__(self, case_id: str = "") -> None:
        self.case_id = case_id
        self.attempted = self.st_run = self.st_passed = 0
        self.outcomes: dict[int, int] = {}  # outcome vector id -> attempts
        self.sums = _NO_SUMS  # filled by finalize()
        self.signatures: dict[Any, int] = {}

    def finalize(self, vectors: list[Outcome]) -> None:
        sums = [0] * _COUNTS
        sigs: dict[Any, int] = {}
        for vid, n in self.outcomes.items():
            vec = vectors[vid]
            for i in range(_COUNTS):
                sums[i] += vec[i] * n
            sigs[vec.signature] = sigs.get(vec.signature, 0) + n
        self.sums, self.signatures = Outcome._make([*sums, None]), sigs

    @property
    def scored(self) -> int:
        return sum(self.outcomes.values())

    @property
    def passed(self) -> int:
        return self.sums.passed

    def counts(self) -> dict[str, tuple[int, int]]:
        """(numerator, denominator) of every metric over this case alone."""
        s, scored = self.sums, self.scored
        return {
            "pass_rate": (s.passed, scored),
            "normalized_pass_rate": (s.norm_passed, scored),
            "decision_accuracy": (s.decision, scored),
            "tool_selection_accuracy": (s.selection, s.expects),
            "raw_schema_validity": (s.valid, s.calls),
            "exact_argument_accuracy": (s.exact, s.exact_den),
            "normalized_argument_accuracy": (s.norm, s.exact_den),
            "unsafe_call_rate": (s.unsafe, scored),
            "error_recovery_accuracy": (self.st_passed, self.st_run),
            "consistency": (max(self.signatures.values(), default=0), scored),
        }

    @property
    def flaky(self) -> bool:
        """Repetitions disagree on the normalized signature or on the verdict."""
        return len(self.signatures) > 1 or 0 < self.passed < self.scored


@dataclass
class GroupStats:
    """Everything counted for one provider × model × mode."""

    provider: str
    model: str
    mode: str
    simulated: bool = False
    apis: list[str] = field(default_factory=list)
    cases: dict[str, CaseTally] = field(default_factory=dict)
    transport_errors: Counter[str] = field(default_factory=Counter)
    second_turn_transport_errors: Counter[str] = field(default_factory=Counter)
    unjudged: int = 0  # no transport error and no judgement: a record we cannot score
    latencies: array[float] = field(default_factory=lambda: array("d"))
    usage_attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    retries: int = 0
    recorded_cost: float = 0.0
    recorded_cost_attempts: int = 0
    repetitions: int = 0
    slots: int | None = None  # attempts the run headers plan for this group; None: unknown
    # the repair arm (config repair.feedback) and its counts; None for a run without repairs
    feedback: str | None = None
    repair: RepairTally | None = None
    # the stream arm (config stream); a streamed arm's first output and first call, ms
    stream: bool = False
    first_token: array[float] = field(default_factory=lambda: array("d"))
    first_call: array[float] = field(default_factory=lambda: array("d"))
    # (case id, repetition) -> outcome vector id while counting, (passed, signature) once
    # frozen: kept only for a run with stream "both", whose arms pair on them (parity)
    reps: dict[tuple[str, int], Any] = field(default_factory=dict)
    # the run's identity (spec/identity.py; None: records that do not settle it), and what
    # tells it from a group that would otherwise read the same ([] when none does)
    identity: str | None = None
    run_parts: list[str] = field(default_factory=list)

    @property
    def run_label(self) -> str:
        """What tells the group's run from another that reads alike, e.g. "api
        openai-responses" or "options.strict true"; "" when no other does."""
        return ", ".join(self.run_parts)

    def add_stream_times(self, first_token: Any, first_call: Any) -> None:
        """A streamed attempt's ``first_token_ms`` and ``first_call_ms``, when numbers."""
        if type(first_token) in (int, float):
            self.first_token.append(first_token)
        if type(first_call) in (int, float):
            self.first_call.append(first_call)

    def stream_times(self) -> dict[str, dict[str, float | None]]:
        """``first_token_ms`` and ``first_call_ms`` as ``{"p50", "p95"}`` (design.md)."""
        out = {}
        for name, values in (
            ("first_token_ms", self.first_token),
            ("first_call_ms", self.first_call),
        ):
            ordered = sorted(values)
            out[name] = {"p50": percentile(ordered, 50), "p95": percentile(ordered, 95)}
        return out

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.provider, self.model, self.mode)

    def over_matrix(self) -> str:
        """What to say when the group holds more attempts than its matrix plans: some
        were counted twice (two writers, a file given under two names, a copy)."""
        planned = f"plan {self.slots}" if self.slots else "do not list it"
        run = f" ({self.run_label})" if self.run_label else ""
        return (
            f"{'/'.join(self.key)}{run}: {self.attempted} attempts ({self.scored} scored), but the"
            f" run headers' matrix (cases × repetitions) {planned}; are some counted twice?"
        )

    @property
    def attempted(self) -> int:
        return sum(t.attempted for t in self.cases.values())

    @property
    def scored(self) -> int:
        return sum(t.scored for t in self.cases.values())

    @property
    def passed(self) -> int:
        return sum(t.passed for t in self.cases.values())

    def metrics(self) -> dict[str, Rate]:
        """Every metric summed over cases (sums of per-case counts are the pooled counts)."""
        num = dict.fromkeys(METRICS, 0)
        den = dict.fromkeys(METRICS, 0)
        for tally in self.cases.values():
            for name, (n, d) in tally.counts().items():
                num[name] += n
                den[name] += d
        return {name: Rate(num[name], den[name]) for name in METRICS}

    def flaky_cases(self) -> list[str]:
        return [cid for cid, t in self.cases.items() if t.flaky]

    def latency(self) -> dict[str, float | int | None]:
        values = sorted(self.latencies)
        return {
            "count": len(values),
            "p50": percentile(values, 50),
            "p95": percentile(values, 95),
            "max": values[-1] if values else None,
        }

    def tokens(self) -> dict[str, float | int | None]:
        n = self.usage_attempts
        return {
            "attempts_with_usage": n,
            "input_total": self.input_tokens,
            "output_total": self.output_tokens,
            "input_per_attempt": self.input_tokens / n if n else None,
            "output_per_attempt": self.output_tokens / n if n else None,
        }

    def cost(self, price: Mapping[str, float] | None) -> dict[str, Any] | None:
        """Cost from token counts × price per million tokens; else the records' cost_usd.

        Per passed attempt, because a cheap model that fails half the time costs twice
        its sticker price per completed operation.
        """
        if price is not None:
            total = (
                self.input_tokens * float(price.get("input_per_mtok", 0.0))
                + self.output_tokens * float(price.get("output_per_mtok", 0.0))
            ) / 1_000_000
            source = "prices"
        elif self.recorded_cost_attempts:
            total, source = self.recorded_cost, "records"
        else:
            return None
        attempted, passed = self.attempted, self.passed
        return {
            "source": source,
            "total_usd": total,
            "per_attempt_usd": total / attempted if attempted else None,
            "per_passed_attempt_usd": total / passed if passed else None,
        }


@dataclass
class FailedAttempt:
    """An attempt that did not pass, kept for the error CSV and JUnit."""

    provider: str
    model: str
    mode: str
    case_id: str
    attempt: int
    errors: list[dict[str, Any]]
    failed: bool  # the judge failed it (as opposed to only a transport failure)
    transport_error: dict[str, Any] | None = None
    second_turn_transport_error: dict[str, Any] | None = None
    feedback: str | None = None  # the repair arm of the attempt's group
    identity: str | None = None  # the run identity of the attempt's group
    stream: bool = False  # the stream arm of the attempt's group


def label_runs(groups: Iterable[GroupStats], runs: HeaderRuns) -> None:
    """Give each group that would read the same as another (provider, model, mode and
    arms alike) the parts of its run identity that tell them apart: its run_parts."""
    alike: dict[tuple[Any, ...], list[GroupStats]] = defaultdict(list)
    for g in groups:
        alike[(g.provider, g.model, g.mode, g.feedback, g.stream)].append(g)
    for same in alike.values():
        if len(same) < 2:
            continue
        described: list[Mapping[str, Any] | None] = [
            runs.parts.get(g.identity) if g.identity else None for g in same
        ]
        for g, parts in zip(same, distinguishing(described, SHOWN), strict=True):
            g.run_parts = parts or ([f"run {g.identity[:8]}"] if g.identity else [])


SHOWN = ("provider", "model")  # what every rendering of a group already says


@dataclass
class Report:
    """The computed report: run metadata, one GroupStats per provider × model × mode."""

    files: list[str]
    meta: RunMeta
    groups: list[GroupStats]
    failures: list[FailedAttempt]
    warnings: list[HistoryWarning]
    prices: dict[str, Mapping[str, float]]
    # case id -> the category its records carry, first seen (reporting/categories.py)
    categories: dict[str, str | None] = field(default_factory=dict)

    @property
    def streaming(self) -> bool:
        """A group of the report streamed: every entry then says which arm it is."""
        return any(g.stream for g in self.groups)

    def price_for(self, g: GroupStats) -> Mapping[str, float] | None:
        return self.prices.get(g.model) or self.meta.prices.get((g.provider, g.model))
