"""Wilson intervals, the two regression tests and percentiles against known values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolstand.reporting.stats import (
    Rate,
    binom_sf_half,
    holm,
    mcnemar_exact,
    normal_sf,
    percentile,
    two_proportion_drop,
    wilson,
)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (8, 10, 0.4902, 0.9433),
        (10, 10, 0.7225, 1.0),
        (23, 25, 0.7503, 0.9778),
    ],
)
def test_wilson_known_values(k: int, n: int, low: float, high: float) -> None:
    ci = wilson(k, n)
    assert ci is not None
    assert ci == pytest.approx((low, high), abs=5e-5)


def test_wilson_empty_and_invalid() -> None:
    assert wilson(0, 0) is None
    with pytest.raises(ValueError):
        wilson(11, 10)


@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_estimate_and_stays_in_bounds(kn: tuple[int, int]) -> None:
    k, n = kn
    ci = wilson(k, n)
    assert ci is not None
    lo, hi = ci
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    # more evidence, narrower interval
    ci10 = wilson(10 * k, 10 * n)
    assert ci10 is not None and ci10[1] - ci10[0] <= hi - lo + 1e-12


def test_rate_dict() -> None:
    assert Rate(23, 25).to_dict() == {
        "value": 0.92,
        "numerator": 23,
        "denominator": 25,
        "low": pytest.approx(0.7503, abs=5e-5),
        "high": pytest.approx(0.9778, abs=5e-5),
    }
    assert Rate(0, 0).to_dict()["value"] is None


def test_normal_tail() -> None:
    assert normal_sf(0) == 0.5
    assert normal_sf(1.959963984540054) == pytest.approx(0.025)
    assert normal_sf(1.6448536269514722) == pytest.approx(0.05)


def test_two_proportion_drop() -> None:
    z, p = two_proportion_drop(92, 100, 91, 100)
    assert z == pytest.approx(0.2536, abs=1e-4) and p == pytest.approx(0.3999, abs=1e-4)
    z, p = two_proportion_drop(57, 60, 24, 60)
    assert z > 6 and p < 1e-9
    assert two_proportion_drop(5, 10, 5, 10) == (0.0, 0.5)
    assert two_proportion_drop(10, 10, 10, 10) == (0.0, 1.0)  # no variance: no evidence
    _, p_up = two_proportion_drop(40, 100, 60, 100)
    assert p_up > 0.99  # a rise is not a drop
    with pytest.raises(ValueError):
        two_proportion_drop(0, 0, 1, 1)


def test_exact_binomial_and_mcnemar() -> None:
    assert binom_sf_half(0, 5) == 1.0
    assert binom_sf_half(5, 5) == 1 / 32
    assert binom_sf_half(6, 5) == 0.0
    assert binom_sf_half(2, 4) == 11 / 16
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 0) == 0.125  # three flips can never be significant at 0.05
    assert mcnemar_exact(5, 0) == 0.03125
    assert mcnemar_exact(1, 4) == 31 / 32
    assert mcnemar_exact(5, 0, two_sided=True) == 0.0625
    assert mcnemar_exact(2, 2, two_sided=True) == 1.0
    # large n stays exact and finite
    assert math.isclose(mcnemar_exact(1000, 1000), 0.5 + math.comb(2000, 1000) / 2**2001)


def test_percentile_linear_interpolation() -> None:
    values = [10.0 * i for i in range(1, 12)]
    assert percentile(values, 50) == 60.0
    assert percentile(values, 95) == pytest.approx(105.0)
    assert percentile(values, 100) == 110.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile(values, 101)


def test_holm_adjustment() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([]) == []
