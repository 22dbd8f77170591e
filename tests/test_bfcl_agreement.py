"""toolstand's verdict_normalized against BFCL's checker, on calls made by perturbing
BFCL's own answers (bfcl_agreement has the perturbations and the classes).

On the test's own BFCL-format files against the transcription of BFCL's checker; when
BFCL's wheel is in the cache (``make bfcl-wheel`` fetches it with pip, nothing installed),
against the real ``ast_checker`` too, over a sample of the real data (every entry:
bench/bench_bfcl_agreement.py). Every disagreement must fall in a class the README
names, on purpose; the test prints the agreement figure.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support import bfcl as fx
from tests.support.bfcl_agreement import (
    CACHE,
    ON_PURPOSE,
    WHEEL_NAME,
    compare,
    entries_from_fixtures,
    real_checker,
    real_entries,
    toolstand_pass,
)
from tests.support.bfcl_rules import bfcl_valid
from toolstand.importers.bfcl import to_case
from toolstand.spec.cases import Case


def wheel_path() -> Path | None:
    given = os.environ.get("TOOLSTAND_BFCL_WHEEL")
    path = Path(given) if given else CACHE / WHEEL_NAME
    return path if path.is_file() else None


def test_verdict_normalized_agrees_with_bfcls_rules_but_where_it_says_why() -> None:
    got = compare(entries_from_fixtures())
    print(
        f"\nagreement with BFCL's rules: {got.agreed}/{got.total}; on purpose: {dict(got.classes)}"
    )
    assert got.unexplained == []
    assert got.total >= 170
    assert set(got.classes) <= set(ON_PURPOSE)
    # both irrelevance categories credit an undecodable call; "10" for an integer fails
    # both (a BFCL integer declares no normalizer, so the normalized verdict does not
    # repair it); BFCL's own answers (None for a default-None parameter among them,
    # live_multiple_1-5-0) and the enum's case or spacing ("CELSIUS") agree
    assert got.classes == {"undecodable": 2}


def test_greedy_parallel_matching_is_a_named_disagreement() -> None:
    """Answers that overlap: BFCL pairs answer 0 with the first output that fits it and
    then finds nothing for answer 1; toolstand's best assignment pairs both."""
    entry: dict[str, Any] = {
        "id": "parallel_9",
        "question": [[{"role": "user", "content": "x"}]],
        "function": [fx.FACTORIAL],
    }
    answers = [{"math.factorial": {"number": [5, 6]}}, {"math.factorial": {"number": [5]}}]
    output = [{"math_factorial": {"number": 5}}, {"math_factorial": {"number": 6}}]
    case = Case.model_validate(to_case("parallel", entry, answers))
    assert toolstand_pass(case, output)[0] is True
    assert bfcl_valid("parallel", entry["function"], output, answers) is False


def test_the_transcription_and_toolstand_against_bfcls_own_ast_checker() -> None:
    wheel = wheel_path()
    if wheel is None:
        pytest.skip(
            f"BFCL's wheel is not in {CACHE} (run `make bfcl-wheel`, which fetches it with "
            "pip download --no-deps, or set TOOLSTAND_BFCL_WHEEL)"
        )
    got = compare(real_entries(wheel, 40), real_checker(wheel))
    assert got.transcription_off == [], got.transcription_off[:5]
    assert got.unexplained == [], got.unexplained[:5]
    print(
        f"\nagreement with BFCL's ast_checker: {got.agreed}/{got.total} calls; "
        f"on purpose: {dict(got.classes)}"
    )
    assert got.total > 1000
    assert set(got.classes) <= set(ON_PURPOSE)
