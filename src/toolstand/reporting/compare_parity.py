"""What ``compare`` tests of stream parity: the JSON report's ``stream_parity`` entries as
the results[] entries the gate already knows how to test.

Each entry becomes one metric, ``stream_parity``: pairs of the two stream arms (one case,
one repetition) whose normalized signature is the same, over the pairs. Baseline parity
is tested against current parity with the gate's own tests (compare._check): paired per
case by the exact one-sided McNemar test, a case being good when every one of its
repetitions read the same in both arms, and the pooled two-proportion z-test on the
totals beside it when the pairing leaves a case out. Why this and not the McNemar
between the arms of one run: that one says whether streaming changes the answers in a
run (the report shows it); the gate asks whether the stack got worse at streaming since
the baseline, which is a question about the parity of two runs, and the per-case pairing
is what makes a handful of cases that newly break under streaming significant while
flakiness on both sides cancels out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

METRIC = "stream_parity"
Key = tuple[str, str, str, str | None, bool | None]


def parity_entries(report: Mapping[str, Any]) -> list[tuple[Key, dict[str, Any]]]:
    """stream_parity entries with their (provider, model, mode, feedback, None), each
    shaped as a results[] entry with the one metric ``stream_parity``, its per-case counts
    and its run (``run_identity``, ``run``)."""
    out: list[tuple[Key, dict[str, Any]]] = []
    entries = report.get("stream_parity")
    for e in entries if isinstance(entries, list) else []:
        if not isinstance(e, dict):
            continue
        rate, per_case = e.get("parity"), e.get("per_case")
        if not isinstance(rate, dict) or not isinstance(per_case, dict):
            continue
        fb = e.get("feedback")
        key: Key = (
            *(str(e.get("provider")), str(e.get("model")), str(e.get("mode", "auto"))),
            str(fb) if fb is not None else None,
            None,
        )
        cases = {
            str(cid): {"attempted": v[1], "scored": v[1], "counts": {METRIC: list(v)}}
            for cid, v in per_case.items()
            if isinstance(v, list) and len(v) == 2 and all(type(x) is int for x in v)
        }
        run = {k: e[k] for k in ("run_identity", "run") if isinstance(e.get(k), str)}
        out.append((key, {METRIC: rate, "per_case": cases, **run}))
    return out
