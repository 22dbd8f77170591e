"""verdict_normalized against BFCL's own ast_checker over every entry of the eleven
imported categories, each answer perturbed as tests/test_bfcl_agreement.py does (that
test runs 40 entries per category; this runs them all, about 42,000 calls, ~30 s). Not
a test: it prints what it measured, and exits 1 when a disagreement falls in no class.

    .venv/bin/python bench/bench_bfcl_agreement.py [WHEEL]   # default: .cache/bfcl/
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.support: the perturbations and classes the test uses

from tests.support.bfcl_agreement import (  # noqa: E402
    CACHE,
    ON_PURPOSE,
    WHEEL_NAME,
    compare,
    real_checker,
    real_entries,
)


def pct(part: int, whole: int) -> str:
    return f"{part:,}/{whole:,} = {100 * part / whole:.2f}%" if whole else "0/0"


def main() -> int:
    wheel = Path(sys.argv[1]) if len(sys.argv) > 1 else CACHE / WHEEL_NAME
    if not wheel.is_file():
        sys.exit(f"no wheel at {wheel}: run `make bfcl-wheel` or give its path")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average {load} at start")
    start = time.perf_counter()
    got = compare(real_entries(wheel), real_checker(wheel))
    wall = time.perf_counter() - start
    print(f"{got.total:,} calls in {wall:.0f} s")
    print(f"agreement, all calls:                    {pct(got.agreed, got.total)}")
    judged = got.checked_by_ast
    # the measure: the calls BFCL's ast_checker judges (irrelevance and relevance
    # are judged by whether anything decoded, not by ast_checker)
    print(f"agreement, calls ast_checker judged:     {pct(judged - got.disagreed_by_ast, judged)}")
    print("disagreements by class (count, first example):")
    for name, count in got.classes.most_common():
        case_id, label = got.examples[name]
        print(f"  {name:<22} {count:6,}  {case_id} ({label})")
        print(f"  {'':<22}         {ON_PURPOSE[name]}")
    left = got.total - got.classes["undecodable"]
    print(f"agreement without undecodable:           {pct(got.agreed, left)}")
    if got.transcription_off:
        print(f"the transcription differs from ast_checker on {len(got.transcription_off)} calls")
    if got.unexplained:
        print(f"{len(got.unexplained)} disagreements in no class, first: {got.unexplained[:3]}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
