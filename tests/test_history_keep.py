"""IndexedWriter: the sidecar index kept by the writer is the index a cold read builds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, err, header, judgement, second_turn, transport
from toolstand.history import keep as history_keep
from toolstand.history import sidecar as history_sidecar
from toolstand.history.index import HistoryIndex
from toolstand.history.keep import IndexedWriter
from toolstand.history.read import in_key_order


@pytest.fixture(autouse=True)
def small_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1)  # the real floor is 20,000 rows
    monkeypatch.setattr(history_keep, "_BATCH", 4)  # cross batch edges in small files


def records(n: int, run: str = "r1") -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        kw: dict[str, Any] = {}
        if i % 5 == 1:
            kw["j"] = judgement(errors=[err("invalid_arguments", "pattern"), err("unsafe_call")])
        elif i % 5 == 2:
            kw["transport_error"] = transport("rate_limited", status=429)
        elif i % 5 == 3:
            kw["st"] = second_turn(passed=False, errors=[err("false_success")])
        case = ("direct_lookup", "cancel_implicit", "missing_id")[i % 3]
        rec = attempt(case, 1 + i % 3, model=("good", "bad")[i % 2], **kw)
        rec["run_id"] = run
        rec["started_at"] = f"2026-11-{27 + i % 2}T10:{i % 60:02d}:05.123+00:00"
        rec["elapsed_ms"] = float(i)
        rec["user"] = f"message {i % 4} for {case}"
        out.append(in_key_order(rec))
    return out


def snapshot(ix: HistoryIndex) -> tuple[Any, ...]:
    """Everything the History screen reads from an index, by value (not by code)."""
    rows = [
        (
            ix.offsets[r],
            ix.verdict_of(r),
            ix.errors_of(r),
            *(ix.value(name, r) for name in ix.facets),
            ix.attempt[r],
            repr(ix.latency[r]),
            repr(ix.times[r]),
        )
        for r in range(ix.rows)
    ]
    runs, cases = ix.facets["run"].values, ix.facets["case"].values
    users = {(runs[r], cases[c]): t for (r, c), t in ix.user_text.items()}
    warnings = [(w.line, w.message) for w in ix.all_warnings()]
    return rows, users, ix.headers, ix.simulated, ix.lines, ix.end, warnings


def cold(path: Path) -> tuple[Any, ...]:
    ix = HistoryIndex(path)
    ix.update()
    return snapshot(ix)


def reopened(path: Path) -> tuple[HistoryIndex, int]:
    """What the History screen does: load the sidecar, then read the tail; and the rows
    the sidecar held."""
    ix = HistoryIndex(path)
    assert history_sidecar.load(ix), "no usable sidecar"
    held = ix.rows
    ix.update()
    return ix, held


def test_the_kept_index_is_the_cold_index(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with IndexedWriter(path, save_every=7) as w:
        w.write(header())
        for rec in records(30):
            w.write(rec)
    ix, held = reopened(path)
    assert held == 30 and ix.end == path.stat().st_size
    assert snapshot(ix) == cold(path)


def test_a_killed_writer_leaves_the_sidecar_of_its_last_save(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    w = IndexedWriter(path, save_every=10)
    w.write(header())
    for rec in records(25):
        w.write(rec)
    # killed here: never closed, but every line was flushed as it was written
    ix, held = reopened(path)
    assert held == 20  # saved after 10 and 20 attempts
    assert ix.rows == 25 and snapshot(ix) == cold(path)


def test_lines_another_process_appends_in_between_are_read_from_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    recs = records(20)
    with IndexedWriter(path, save_every=100) as w:
        w.write(header())
        for rec in recs[:6]:
            w.write(rec)
        with open(path, "ab") as other:  # e.g. a second toolstand on the same file
            other.write(orjson.dumps(header(run_id="other")) + b"\n")
            for rec in records(3, run="other"):
                other.write(orjson.dumps(rec) + b"\n")
        for rec in recs[6:]:
            w.write(rec)
    ix, held = reopened(path)
    assert held == 23
    assert {ix.value("run", r) for r in range(ix.rows)} == {"r1", "other"}
    assert snapshot(ix) == cold(path)


@pytest.mark.parametrize("earlier_sidecar", [False, True])
def test_appending_to_an_existing_history_covers_the_whole_file(
    tmp_path: Path, earlier_sidecar: bool
) -> None:
    path = tmp_path / "run.jsonl"
    with open(path, "wb") as fh:  # written elsewhere, or by an older toolstand
        fh.write(orjson.dumps(header(run_id="old")) + b"\n")
        for rec in records(9, run="old"):
            fh.write(orjson.dumps(rec) + b"\n")
    if earlier_sidecar:
        first = HistoryIndex(path)
        first.update()
        assert history_sidecar.save(first) is not None
    with IndexedWriter(path) as w:  # e.g. toolstand run --resume
        for rec in records(11):
            w.write(rec)
    ix, held = reopened(path)
    assert held == 20
    assert snapshot(ix) == cold(path)


def test_a_torn_line_before_the_writer_is_read_as_the_cold_index_reads_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    with open(path, "wb") as fh:
        fh.write(orjson.dumps(header()) + b"\n")
        for rec in records(3):
            fh.write(orjson.dumps(rec) + b"\n")
        fh.write(b'{"type":"attempt","provider":"cut off')  # a killed writer's last line
    with IndexedWriter(path) as w:
        for rec in records(5, run="r2"):
            w.write(rec)
    ix, held = reopened(path)
    want = cold(path)
    assert snapshot(ix) == want
    assert held == 3 + 4  # the torn line swallowed the first new one: a malformed line
    assert want[-1][0][1].startswith("malformed line")


def test_a_small_history_is_not_indexed_just_to_find_it_small(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1000)
    path = tmp_path / "run.jsonl"
    with IndexedWriter(path) as w:
        w.write(header())
        for rec in records(2):  # fewer lines than _BATCH: no row became a column
            w.write(rec)
    assert w.index is None
    assert not history_sidecar.sidecar_path(path).exists()


def test_a_failing_index_never_costs_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.jsonl"

    def broken(*_: Any) -> int:
        raise OSError("the disk went away")

    monkeypatch.setattr(HistoryIndex, "add_written", broken)
    recs = records(9)
    with IndexedWriter(path, save_every=3) as w:
        w.write(header())
        for rec in recs:
            w.write(rec)
    assert w.index_error == "OSError: the disk went away"
    assert [orjson.loads(x) for x in path.read_bytes().splitlines()] == [header(), *recs]
    assert not history_sidecar.sidecar_path(path).exists()
