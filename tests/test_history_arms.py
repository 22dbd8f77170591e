"""The arms (stream, feedback) and the case's category as facets of the History index
(issues 25 and 30): read the same cold, from the writer's sidecar and from a saved one,
in any key order, and each narrows a query to its rows."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support import bfcl as fx
from tests.support.records import attempt, header, lead_order
from tests.support.runs import make_inputs, read, sim
from toolstand.cli import main
from toolstand.history import sidecar
from toolstand.history.index import HistoryIndex
from toolstand.history.query import Query, run_query
from toolstand.history.read import in_key_order
from toolstand.run.runner import run

ARMS = ("stream", "feedback", "category")


@pytest.fixture(autouse=True)
def small_sidecars(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sidecars for histories of any size, so the writer keeps one here too."""
    monkeypatch.setattr(sidecar, "MIN_ROWS", 1)


def arms(ix: HistoryIndex) -> list[tuple[Any, ...]]:
    return [tuple(ix.value(f, r) for f in ARMS) for r in range(ix.rows)]


def recorded(attempts: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(a.get(f) for f in ARMS) for a in attempts]


def three_ways(path: Path) -> list[HistoryIndex]:
    """The writer's sidecar, a cold index, and the sidecar that cold index saved."""
    kept = HistoryIndex(path)
    assert sidecar.load(kept), "the runner's writer keeps a sidecar"
    sidecar.sidecar_path(path).unlink()
    cold = HistoryIndex(path)
    cold.update()
    assert sidecar.save(cold) is not None
    saved = HistoryIndex(path)
    assert sidecar.load(saved)
    return [kept, cold, saved]


def run_into(out: Path, runs: list[dict[str, Any]], only: set[str], **extra: Any) -> None:
    asyncio.run(run(make_inputs(runs, **extra), out, only=only, progress_out=None))


def test_a_stream_both_history_filters_to_one_arm(tmp_path: Path) -> None:
    out = tmp_path / "both.jsonl"
    runs = [sim("sim-careful", "openai-chat"), sim("sim-streambug", "anthropic")]
    run_into(out, runs, {"direct_lookup", "missing_id"}, stream="both", repetitions=2)
    attempts = read(out)[1]
    assert Counter(a["stream"] for a in attempts) == {True: 8, False: 8}
    for ix in three_ways(out):
        assert arms(ix) == recorded(attempts)
        result = run_query(ix, Query(stream=frozenset({"true"})))
        assert [attempts[r]["stream"] for r in result.rows] == [True] * 8
        # counts over the other filters: the arm left out still shows its number
        assert result.counts["stream"] == Counter({"true": 8, "false": 8})
        both = run_query(ix, Query(stream=frozenset({"false"}), model=frozenset({"sim-streambug"})))
        assert {(attempts[r]["model"], attempts[r]["stream"]) for r in both.rows} == {
            ("sim-streambug", False)
        }
        assert len(both.rows) == 4


def test_a_repair_history_filters_to_one_feedback_arm(tmp_path: Path) -> None:
    out = tmp_path / "repair.jsonl"
    arms_ = {"max_repairs": 2, "feedback": ["allowed", "traceback"]}
    run_into(out, [sim("sim-sloppy", "openai-chat")], {"direct_lookup", "quote_complete"},
             repair=arms_)  # fmt: skip
    attempts = read(out)[1]
    want = Counter(a["feedback"] for a in attempts)
    assert set(want) == {"allowed", "traceback"}
    for ix in three_ways(out):
        assert arms(ix) == recorded(attempts)
        result = run_query(ix, Query(feedback=frozenset({"traceback"})))
        assert [attempts[r]["feedback"] for r in result.rows] == ["traceback"] * want["traceback"]
        assert result.counts["feedback"] == Counter(want)


def test_a_bfcl_history_has_its_categories_as_a_facet(tmp_path: Path) -> None:
    out = tmp_path / "bfcl"
    assert main(["import", "bfcl", str(fx.write_wheel(tmp_path)), "--out", str(out)]) == 0
    history = tmp_path / "run.jsonl"
    assert main(["run", "--config", str(out / "config.json"), "--output", str(history)]) == 0
    attempts = read(history)[1]
    categories = Counter(a["category"] for a in attempts)
    assert len(categories) > 1 and None not in categories  # BFCL's own categories
    one = sorted(categories)[0]
    for ix in three_ways(history):
        assert arms(ix) == recorded(attempts)
        result = run_query(ix, Query(category=frozenset({one})))
        assert [attempts[r]["category"] for r in result.rows] == [one] * categories[one]
        assert result.counts["category"] == Counter(categories)


@pytest.mark.parametrize("order", [in_key_order, lead_order], ids=["runner", "lead"])
def test_arms_read_the_same_on_the_fast_and_the_slow_path(tmp_path: Path, order: Any) -> None:
    """Lines in the runner's order are read in slices, others whole: same facets; a
    record from before streaming and repair turns has neither arm ("?")."""
    recs = []
    for i, (stream, feedback) in enumerate([(True, None), (False, "allowed"), (None, None)]):
        rec = attempt("direct_lookup", i + 1)
        rec["category"] = ["positive", "boundary", None][i]
        if stream is not None:
            rec["stream"] = stream
        if feedback is not None:
            rec["feedback"] = feedback
        recs.append(rec)
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(), *map(order, recs)]))
    ix = HistoryIndex(path)
    ix.update()
    assert arms(ix) == [(True, None, "positive"), (False, "allowed", "boundary"), (None,) * 3]
    counts = run_query(ix, Query()).counts
    assert counts["stream"] == Counter({"true": 1, "false": 1, "?": 1})
    assert counts["feedback"] == Counter({"allowed": 1, "?": 2})
    assert counts["category"] == Counter({"positive": 1, "boundary": 1, "?": 1})
