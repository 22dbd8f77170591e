"""Issue 31 M3: mutated records thrown at every reader (a hypothesis property test).

A history holds good attempts in the runner's layout and one attempt (or its run header)
with a field replaced by a value of another type, or removed. Whatever the value, no
reader raises: report in every format on the line path, the cold-index columns and the
sidecar; compare; rejudge; the History index and the TUI's attempt detail. The three
report paths agree byte for byte, and a line the report skips (with a warning naming
it) is not a History row either.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.readers import ROOT, every_reader, report_paths
from tests.support.records import attempt, err, header, judgement, second_turn, transport
from toolstand.history import in_key_order
from toolstand.history import sidecar as history_sidecar

ODD_VALUES: list[Any] = [
    *(None, True, False, 0, -1, 1, 3, 2**31, 2**32, 2**63 - 1, 2**64, -(2**63), 10**30),
    *(0.5, -0.5, 1e308, -1e308, 1e-300),
    *("", " ", "x", "1", "-1", "1e400", "pass", "fail", "null", "\x1b[2J"),
    *([], [1], ["x", 1, None], [{}], [{"code": 1}], [[]]),
    *({}, {"code": 1}, {"code": "x"}, {"verdict": "pass"}, {"x": []}, {"passed": "yes"}),
]
ODD = st.one_of(
    st.sampled_from(ODD_VALUES),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)


def _bases() -> list[dict[str, Any]]:
    """Good attempts of every outcome, in the runner's key order."""
    failing = judgement(errors=[err("invalid_arguments", "pattern"), err("unsafe_call")])
    recs = [
        attempt("direct_lookup", 1, st=second_turn(), cost_usd=0.001),
        attempt("missing_id", 1, j=failing),
        attempt("cancel_implicit", 1, transport_error=transport("rate_limited", status=429)),
        attempt("direct_lookup", 2, st=second_turn(passed=False, errors=[err("false_success")])),
    ]
    return [in_key_order(r) for r in recs]


def _header() -> dict[str, Any]:
    return {
        **header(),
        "contract": {"path": str(ROOT / "contracts/delivery_tools.json"), "hash": "c" * 64},
        "cases": {"path": str(ROOT / "cases/delivery.jsonl"), "hash": "d" * 64},
    }


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into a record, bulky request and response bodies left out below 3."""
    yield prefix
    if len(prefix) >= 3 and prefix[0] in ("request", "response"):
        return
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in items:
        yield from _paths(child, (*prefix, key))


def _mutated(
    rec: dict[str, Any], path: tuple[Any, ...], value: Any, delete: bool
) -> dict[str, Any]:
    rec = copy.deepcopy(rec)
    node: Any = rec
    for key in path[:-1]:
        node = node[key]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return rec


@st.composite
def odd_history(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int]:
    """(records, the line number of the mutated one)."""
    bases, hdr = _bases(), _header()
    which = draw(st.integers(min_value=-1, max_value=len(bases) - 1))  # -1: the header
    target = hdr if which < 0 else bases[which]
    paths = [p for p in _paths(target) if p]
    path = draw(st.sampled_from(paths))
    odd = _mutated(target, path, draw(ODD), draw(st.booleans()))
    if which < 0:
        return [odd, *bases, *bases], 1
    recs = [hdr, bases[0], bases[1], odd, *bases[2:], *bases]
    return recs, 4


def _write(path: Path, recs: list[dict[str, Any]]) -> Path:
    # the stdlib writes what orjson cannot (integers past 64 bits), compactly, as a runner
    lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in recs)
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.fixture(autouse=True)
def small_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1)  # every report path, sidecar too


SKIPPED = re.compile(r":(\d+): (?:attempt|run header) skipped")


@settings(
    derandomize=True,
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=odd_history())
def test_no_reader_fails_on_a_mutated_record(tmp_path: Path, case: Any) -> None:
    recs, line = case
    folder = tmp_path / "h"
    folder.mkdir(exist_ok=True)
    for stale in folder.iterdir():
        if stale.is_file():
            stale.unlink()
    path = _write(folder / "run.jsonl", recs)
    seen = every_reader(path, tmp_path)
    paths = report_paths(path)
    lines, cold, kept = (paths[k] for k in ("lines", "cold", "sidecar"))
    assert cold == lines and kept == lines  # the columns never change a result
    skipped = {int(m.group(1)) for w in seen["report"] for m in [SKIPPED.search(w)] if m}
    assert skipped <= {line}
    if line in skipped and recs[line - 1].get("type") == "attempt":
        offsets = [int(o) for o in seen["rows"]]
        start = sum(
            len(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()) + 1
            for r in recs[: line - 1]
        )
        assert start not in offsets, "a line the report skips is a History row"
