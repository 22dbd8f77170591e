"""The repair metrics of one feedback arm (design.md, Metrics), counted from the
records' ``repair`` summaries (repair_turns.summary) alone.

An attempt "needed repair" when its turn 1 had a call whose arguments did not parse or
failed the schema; one whose repair loop ended on a transport failure leaves every
denominator here (counted apart), as transport failures do everywhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolstand.reporting.stats import Rate, mcnemar_exact

MAX_REPAIRS = 3  # config repair.max_repairs allows 0..3: the curve has three points
# the rates compare tests per case (first_attempt_validity is raw_schema_validity again)
PAIRED_REPAIR_METRICS: tuple[str, ...] = (
    "repair_success_rate",
    *(f"repair_success_after_{k}" for k in range(1, MAX_REPAIRS + 1)),
    "fallback_rate",
)
REPAIR_METRICS: tuple[str, ...] = ("first_attempt_validity", *PAIRED_REPAIR_METRICS)


@dataclass
class RepairTally:
    """Counters of one provider × model × mode × feedback arm."""

    feedback: str
    needed: int = 0
    transport_errors: Counter[str] = field(default_factory=Counter)
    passed_after: Counter[int] = field(default_factory=Counter)  # repair k -> attempts
    valid: int = 0  # reached a schema-valid call (correct or not)
    repair_turns_of_successes: int = 0
    overhead_tokens: int = 0  # input + output tokens of the repair turns counted
    # case id -> [needed, valid, passed after 1, after 2, after 3]: for paired compare
    per_case: dict[str, list[int]] = field(default_factory=dict)
    # (case id, repetition) -> repaired within the budget, for each attempt that needed
    # repair: the arms of one repetition share turn 1, so they pair on the same failures
    paired: dict[tuple[str, int], bool] = field(default_factory=dict)

    def add(self, summary: Mapping[str, Any], case_id: str = "", attempt: int = 0) -> None:
        """One scored attempt's ``repair`` summary (``attempt``: its repetition)."""
        if not summary.get("needed"):
            return
        te = summary.get("transport_error")
        if te:
            self.transport_errors[str(te)] += 1
            return
        case = self.per_case.setdefault(case_id, [0] * (2 + MAX_REPAIRS))
        self.needed += 1
        case[0] += 1
        self.overhead_tokens += int(summary.get("input_tokens") or 0)
        self.overhead_tokens += int(summary.get("output_tokens") or 0)
        if summary.get("valid_after") is not None:
            self.valid += 1
            case[1] += 1
        k = summary.get("passed_after")
        self.paired[(case_id, attempt)] = isinstance(k, int) and k >= 1
        if isinstance(k, int) and k >= 1:
            self.passed_after[k] += 1
            self.repair_turns_of_successes += k
            for i in range(k, MAX_REPAIRS + 1):
                case[1 + i] += 1

    def case_counts(self, case_id: str) -> dict[str, tuple[int, int]]:
        """(numerator, denominator) of each paired repair rate over one case alone."""
        c = self.per_case.get(case_id) or [0] * (2 + MAX_REPAIRS)
        n = c[0]
        out = {"repair_success_rate": (c[1 + MAX_REPAIRS], n)}
        for k in range(1, MAX_REPAIRS + 1):
            out[f"repair_success_after_{k}"] = (c[1 + k], n)
        out["fallback_rate"] = (n - c[1], n)
        return out

    @property
    def successes(self) -> int:
        return sum(self.passed_after.values())

    def rates(self, first_attempt_validity: Rate) -> dict[str, Rate]:
        """Every repair rate; ``first_attempt_validity`` is the arm's turn-1 raw schema
        validity, named here for the repair report."""
        n = self.needed
        out = {"first_attempt_validity": first_attempt_validity}
        out["repair_success_rate"] = Rate(self.successes, n)
        for k in range(1, MAX_REPAIRS + 1):
            within = sum(c for i, c in self.passed_after.items() if i <= k)
            out[f"repair_success_after_{k}"] = Rate(within, n)
        out["fallback_rate"] = Rate(n - self.valid, n)
        return out

    def repairs_per_success(self) -> float | None:
        return self.repair_turns_of_successes / self.successes if self.successes else None

    def overhead_per_attempt(self) -> float | None:
        """Tokens of repair turns per attempt that needed repair."""
        return self.overhead_tokens / self.needed if self.needed else None

    def to_json(self, first_attempt_validity: Rate) -> dict[str, Any]:
        """The keys a results[] entry gains: each rate at the top level, as every metric."""
        out: dict[str, Any] = {
            name: r.to_dict() for name, r in self.rates(first_attempt_validity).items()
        }
        out["repairs_per_success"] = self.repairs_per_success()
        out["repair_overhead_tokens"] = self.overhead_per_attempt()
        out["repair"] = {
            "needed": self.needed,
            "transport_errors": dict(sorted(self.transport_errors.items())),
        }
        return out

    def lines(self, first_attempt_validity: Rate, fmt: Any) -> list[str]:
        """The text report's repair block; ``fmt`` renders a Rate as the table does."""
        out = [f"  repair turns · feedback {self.feedback} · {self.needed} attempts needed repair"]
        for name, rate in self.rates(first_attempt_validity).items():
            out.append(f"  {name:<30} {fmt(rate)}")
        rps, tok = self.repairs_per_success(), self.overhead_per_attempt()
        out.append(
            "  repairs per success "
            + ("–" if rps is None else f"{rps:.2f}")
            + " · repair overhead tokens "
            + ("–" if tok is None else f"{tok:,.1f}")
            + " per attempt that needed repair"
        )
        if self.transport_errors:
            detail = ", ".join(f"{k} {v}" for k, v in sorted(self.transport_errors.items()))
            out.append(f"  repair loops ended by a transport error (not counted): {detail}")
        return out


def comparison_lines(arms: list[tuple[str, RepairTally, Rate]], fmt: Any) -> list[str]:
    """One line per (group label, arm, its first_attempt_validity): the repair success
    rate with its interval and the curve after 1, 2, 3 repairs, side by side."""
    if not arms:
        return []
    out = ["", "repair by feedback style (success within the budget; after 1 / 2 / 3 repairs)"]
    last = None
    for label, tally, validity in arms:
        rates = tally.rates(validity)
        curve = " / ".join(
            _pct(rates[f"repair_success_after_{k}"]) for k in range(1, MAX_REPAIRS + 1)
        )
        if label != last:
            out.append(f"  {label}")
            last = label
        out.append(f"    {tally.feedback:<14} {fmt(rates['repair_success_rate'])}  curve {curve}")
    return out + paired_lines(arms)


def paired_lines(arms: list[tuple[str, RepairTally, Rate]]) -> list[str]:
    """Each two arms of one group compared on the same failures: the arms of a
    (case, repetition) share turn 1, so an attempt one arm repaired and the other did
    not is a discordant pair; the exact two-sided McNemar p over those pairs."""
    by_label: dict[str, list[RepairTally]] = {}
    for label, tally, _ in arms:
        by_label.setdefault(label, []).append(tally)
    out: list[str] = []
    for label, tallies in by_label.items():
        if len(tallies) < 2:
            continue
        out += [
            "",
            "repair arms paired on the same failures (one turn 1 per case and repetition)",
            "  pairs · repaired by the first arm only vs the second only · exact McNemar p",
            f"  {label}",
        ]
        for i, a in enumerate(tallies):
            for b in tallies[i + 1 :]:
                both = a.paired.keys() & b.paired.keys()
                only_a = sum(1 for k in both if a.paired[k] and not b.paired[k])
                only_b = sum(1 for k in both if b.paired[k] and not a.paired[k])
                p = mcnemar_exact(only_a, only_b, two_sided=True)
                pair = f"{a.feedback} vs {b.feedback}"
                out.append(f"    {pair:<28} {len(both)} pairs · {only_a} vs {only_b} · p {p:.2g}")
    return out


def _pct(rate: Rate) -> str:
    v = rate.value
    return "–" if v is None else f"{v:.0%}"
