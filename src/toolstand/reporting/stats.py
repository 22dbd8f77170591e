"""Small-sample statistics for rates: Wilson intervals and the two regression tests.

Pure Python (math only): the report and the CI gate must run where scipy is absent,
and these few formulas are easy to check against published values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for k successes in n trials; None when n is 0.

    Wilson rather than the normal approximation because it stays inside [0, 1] and is
    honest at 0/n and n/n, which are the common cases for a healthy model.
    """
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"successes {k} outside 0..{n}")
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # at 0/n and n/n the bound is exactly 0 or 1; rounding would leave 5e-17
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return (low, high)


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def two_proportion_drop(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    """One-sided pooled z-test that rate 2 (current) is below rate 1 (baseline).

    Returns (z, p). With a pooled rate of 0 or 1 the samples cannot differ: p is 1.
    """
    if n1 <= 0 or n2 <= 0:
        raise ValueError("both samples need at least one trial")
    pooled = (k1 + k2) / (n1 + n2)
    var = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if var <= 0:
        return (0.0, 1.0)
    z = (k1 / n1 - k2 / n2) / math.sqrt(var)
    return (z, normal_sf(z))


def binom_sf_half(k: int, n: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2), exact in integers."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    tail = sum(math.comb(n, i) for i in range(k, n + 1))
    return tail / (1 << n)  # int / int division stays exact until the final rounding


def mcnemar_exact(worse: int, better: int, *, two_sided: bool = False) -> float:
    """Exact McNemar test on discordant pairs.

    ``worse``: pairs that went from good to bad; ``better``: bad to good. One-sided p is
    P(X >= worse) under X ~ Bin(worse + better, 1/2): the chance of seeing at least this
    many losses if a change was as likely to go either way.
    """
    n = worse + better
    if n == 0:
        return 1.0
    if not two_sided:
        return binom_sf_half(worse, n)
    extreme = max(worse, better)
    return min(1.0, 2 * binom_sf_half(extreme, n))


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default) of an already sorted sequence."""
    if not sorted_values:
        return None
    if not 0 <= q <= 100:
        raise ValueError("q must be within 0..100")
    pos = (len(sorted_values) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True, slots=True)
class Rate:
    """numerator / denominator with its 95% Wilson interval."""

    numerator: int
    denominator: int

    @property
    def value(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.numerator, self.denominator)

    def to_dict(self) -> dict[str, Any]:
        ci = self.interval
        return {
            "value": self.value,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "low": ci[0] if ci else None,
            "high": ci[1] if ci else None,
        }
