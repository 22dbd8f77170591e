"""The History screen's file layer: offsets, summary columns, follow, filters and counts."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from array import array
from datetime import UTC, date
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import (
    attempt,
    err,
    header,
    judgement,
    lead_order,
    second_turn,
    transport,
    write_jsonl,
)
from toolstand.history import sidecar
from toolstand.history.columns import Facet
from toolstand.history.files import describe_run_file, list_run_files
from toolstand.history.index import HistoryIndex
from toolstand.history.query import Query, day_range, run_query
from toolstand.history.read import read_record

DAYS = ("2026-11-27", "2026-11-28")


def runner_order(rec: dict[str, Any]) -> dict[str, Any]:
    """The key order attempt.record() writes today: scalars, decision, judgement, ...,
    user, request, response, second_turn last."""
    first = ["type", "schema_version", "run_id", "provider", "api", "model", "simulated",
             "case_id", "category", "mode", "attempt", "started_at", "elapsed_ms",
             "latency_ms", "retries", "transport_error", "decision", "judgement", "usage",
             "cost_usd", "adapter_version", "offered_tools", "blocked_tools", "user",
             "tries", "request_hash", "request", "response", "second_turn"]  # fmt: skip
    return {k: rec.get(k) for k in first} | {k: v for k, v in rec.items() if k not in first}


def records() -> list[dict[str, Any]]:
    """Two models over two days, three cases three times each (36); the bad model fails some."""
    out = []
    i = 0
    for day in DAYS:
        for model in ("good", "bad"):
            for case in ("direct_lookup", "cancel_implicit", "missing_id"):
                for n in (1, 2, 3):
                    i += 1
                    kw: dict[str, Any] = {}
                    if model == "bad" and case == "cancel_implicit":
                        kw["j"] = judgement(errors=[err("unexpected_call"), err("unsafe_call")])
                    elif model == "bad" and case == "missing_id" and n == 2:
                        kw["transport_error"] = transport("rate_limited", status=429)
                    elif model == "bad" and case == "direct_lookup" and n == 3:
                        e = err("invalid_arguments", "pattern", path="$.order_id")
                        kw["j"] = judgement(errors=[e, err("argument_mismatch")])
                        kw["st"] = second_turn(passed=False, errors=[err("false_success")])
                    rec = attempt(case, n, model=model, mode="auto" if n < 3 else "forced", **kw)
                    rec["started_at"] = f"{day}T{10 + n:02d}:00:{i % 60:02d}.123+00:00"
                    rec["user"] = f"message for {case}"
                    rec["elapsed_ms"] = float(i)
                    out.append(rec)
    return out


def write(path: Path, recs: list[dict[str, Any]], order: Any = runner_order) -> list[int]:
    """Write a header and the records; the byte offset of each record's line."""
    offsets = []
    with open(path, "wb") as fh:
        fh.write(orjson.dumps(header()) + b"\n")
        for r in recs:
            offsets.append(fh.tell())
            fh.write(orjson.dumps(order(r)) + b"\n")
    return offsets


@pytest.fixture(params=["runner order", "metrics order", "lead order"])
def history(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, list[int]]:
    order = {
        "runner order": runner_order,
        "metrics order": lambda r: r,  # record_factory's own order (history/read.py's contract)
        "lead order": lead_order,
    }[request.param]
    path = tmp_path / "h.jsonl"
    return path, write(path, records(), order)


def indexed(path: Path) -> HistoryIndex:
    ix = HistoryIndex(path, tz=UTC)
    ix.update()
    return ix


def test_offsets_point_at_their_records(history: tuple[Path, list[int]]) -> None:
    path, offsets = history
    ix = indexed(path)
    recs = records()
    assert ix.rows == len(recs) == 36
    assert list(ix.offsets) == offsets
    for row in (0, 17, 20, 35):
        rec = read_record(path, ix.offsets[row])
        assert rec["case_id"] == ix.value("case", row) == recs[row]["case_id"]
        assert rec["model"] == ix.value("model", row)
        assert ix.attempt[row] == rec["attempt"]
        assert ix.latency[row] == rec["elapsed_ms"]
    assert ix.warnings == [] and ix.tail is None


def test_summary_columns(history: tuple[Path, list[int]]) -> None:
    ix = indexed(history[0])
    recs = records()
    for row, rec in enumerate(recs):
        te, j = rec["transport_error"], rec["judgement"]
        want = "error" if te else j["verdict"]
        assert ix.verdict_of(row) == want
        if te:
            assert ix.errors_of(row) == ("rate_limited",)
        else:
            codes = [
                f"{e['code']}.{e['subcode']}" if e.get("subcode") else e["code"]
                for e in j["errors"]
            ]
            assert list(ix.errors_of(row)) == codes
    bad = recs.index(
        next(
            r
            for r in recs
            if r["model"] == "bad" and r["attempt"] == 3 and r["case_id"] == "direct_lookup"
        )
    )
    assert ix.errors_of(bad) == ("invalid_arguments.pattern", "argument_mismatch")
    t = ix.local_time(0)
    assert t is not None and t.isoformat() == "2026-11-27T11:00:01.123000+00:00"
    assert ix.value("day", 0) == date(2026, 11, 27) and ix.value("day", 35) == date(2026, 11, 28)


def test_a_torn_last_line_is_skipped_with_a_warning_then_read_once_whole(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write(path, records()[:5])
    line = orjson.dumps(runner_order(records()[5])) + b"\n"
    with open(path, "ab") as fh:
        fh.write(line[:100])  # a killed writer
    ix = indexed(path)
    assert ix.rows == 5
    assert ix.tail is not None and "torn last line" in ix.tail.message and ix.tail.line == 7
    assert ix.all_warnings() == [ix.tail]
    with open(path, "ab") as fh:
        fh.write(line[100:])  # the writer finishes it after all
    assert ix.update() == 1
    assert ix.rows == 6 and ix.tail is None
    assert read_record(path, ix.offsets[5])["case_id"] == records()[5]["case_id"]


def test_following_a_growing_file_indexes_only_the_new_tail(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    recs = records()
    write(path, recs[:10])
    ix = indexed(path)
    end = ix.end
    with open(path, "ab") as fh:
        for r in recs[10:30]:
            fh.write(orjson.dumps(runner_order(r)) + b"\n")
    assert ix.update() == 20
    assert ix.rows == 30 and ix.end == os.path.getsize(path) > end
    assert [ix.value("case", i) for i in range(30)] == [r["case_id"] for r in recs[:30]]
    assert ix.update() == 0


def test_small_chunks_give_the_same_index(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write(path, records())
    whole = indexed(path)
    bits = HistoryIndex(path, tz=UTC)
    while True:  # a call may add no attempt (a header, half a line): go on while it moves
        before = bits.end
        bits.update(max_bytes=700, chunk=700)
        if bits.end == before:
            break
    assert bits.rows == whole.rows
    assert list(bits.offsets) == list(whole.offsets)
    assert bytes(bits.verdict.codes) == bytes(whole.verdict.codes)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_per_chunk_and_left_as_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, enabled: bool
) -> None:
    """A chunk's rows hold no cycles: the cyclic collector is off while a chunk is read
    (its passes over those rows were a tenth of the cold index) and as it was after."""
    path = tmp_path / "h.jsonl"
    write(path, records())
    seen: list[bool] = []

    def spy(name: str) -> Any:
        real = getattr(HistoryIndex, name)

        def read(self: HistoryIndex, *args: Any) -> Any:
            seen.append(gc.isenabled())
            return real(self, *args)

        return read

    for name in ("_fast", "_slow"):  # a line is read one way or the other
        monkeypatch.setattr(HistoryIndex, name, spy(name))
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        ix = HistoryIndex(path, tz=UTC)
        ix.update(chunk=4096)
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert ix.rows == len(records())
    assert seen and not any(seen)
    assert after is enabled


def test_a_facet_widens_its_codes_between_chunks_without_losing_rows(tmp_path: Path) -> None:
    # 300 distinct case ids (a BFCL import has thousands) arriving a few lines at a time:
    # the codes move from one byte a row to two in the middle of the file
    path = write_jsonl(tmp_path / "h.jsonl", [header()] + [attempt(f"c{i}") for i in range(300)])
    bits = HistoryIndex(path, tz=UTC)
    while bits.update(max_bytes=4096, chunk=4096):
        assert [bits.value("case", r) for r in range(bits.rows)] == [
            f"c{r}" for r in range(bits.rows)
        ]
    codes = bits.facets["case"].codes
    assert bits.rows == 300 and isinstance(codes, array) and codes.typecode == "H"
    assert run_query(bits, Query(text="c299")).rows.tolist() == [299]


def test_a_facet_past_65536_values_keeps_four_bytes_a_row() -> None:
    facet = Facet("case")
    facet.extend(str(i) for i in range(200))
    facet.extend(str(i) for i in range(200, 70_000))
    assert isinstance(facet.codes, array) and facet.codes.typecode == "I"
    assert [facet.value(r) for r in (0, 255, 256, 65_536, 69_999)] == [
        "0", "255", "256", "65536", "69999"
    ]  # fmt: skip


def test_bad_lines_become_warnings(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write(path, records()[:3])
    with open(path, "ab") as fh:
        fh.write(b'{"type":"attempt", broken\n{"type":"mystery"}\n')
        fh.write(orjson.dumps(runner_order(records()[3])) + b"\n")
    ix = indexed(path)
    assert ix.rows == 4
    assert [w.line for w in ix.warnings] == [5, 6]
    assert "malformed" in ix.warnings[0].message and "mystery" in ix.warnings[1].message


# --- filters ---------------------------------------------------------------------------


def rows_where(pred: Any) -> list[int]:
    return [i for i, r in enumerate(records()) if pred(r)]


def test_each_filter_and_their_combination(history: tuple[Path, list[int]]) -> None:
    ix = indexed(history[0])
    fails = run_query(ix, Query(verdict=frozenset({"fail"})))
    assert list(fails.rows) == rows_where(
        lambda r: r["judgement"] and r["judgement"]["verdict"] == "fail"
    )
    bad = run_query(ix, Query(model=frozenset({"bad"})))
    assert list(bad.rows) == rows_where(lambda r: r["model"] == "bad")
    forced = run_query(ix, Query(mode=frozenset({"forced"})))
    assert len(forced.rows) == 12
    unsafe = run_query(ix, Query(error=frozenset({"unsafe_call"})))
    assert len(unsafe.rows) == 6
    limited = run_query(ix, Query(error=frozenset({"rate_limited"})))
    assert list(limited.rows) == rows_where(lambda r: r["transport_error"] is not None)
    case = run_query(ix, Query(case=frozenset({"missing_id", "direct_lookup"})))
    assert len(case.rows) == 24
    assert len(run_query(ix, Query(provider=frozenset({"sim"}))).rows) == 36
    assert len(run_query(ix, Query(run=frozenset({"run-1"}))).rows) == 36
    both = run_query(
        ix,
        Query(
            verdict=frozenset({"fail"}),
            model=frozenset({"bad"}),
            days=day_range("yesterday", date(2026, 11, 28)),
            mode=frozenset({"auto"}),
        ),
    )
    assert list(both.rows) == rows_where(
        lambda r: (
            r["model"] == "bad"
            and r["mode"] == "auto"
            and r["started_at"].startswith(DAYS[0])
            and r["judgement"] is not None
            and r["judgement"]["verdict"] == "fail"
        )
    )
    assert len(both.rows) == 2  # cancel_implicit #1 and #2 on the 27th


def test_counts_cover_the_other_filters(history: tuple[Path, list[int]]) -> None:
    ix = indexed(history[0])
    r = run_query(ix, Query(verdict=frozenset({"fail"}), model=frozenset({"bad"})))
    # the verdict facet counts the bad model's rows of every verdict
    assert r.counts["verdict"] == {"pass": 8, "fail": 8, "error": 2}
    # the model facet counts failures of every model
    assert r.counts["model"] == {"bad": 8}
    assert r.counts["error"]["unsafe_call"] == 6 and r.counts["error"]["false_success"] == 0
    assert r.counts["day"] == {date(2026, 11, 27): 4, date(2026, 11, 28): 4}
    everything = run_query(ix, Query())
    assert len(everything.rows) == 36
    assert everything.counts["model"] == {"good": 18, "bad": 18}
    assert everything.counts["error"]["rate_limited"] == 2


def test_time_filters_with_a_fixed_today(history: tuple[Path, list[int]]) -> None:
    ix = indexed(history[0])
    today = date(2026, 11, 28)
    assert len(run_query(ix, Query(days=day_range("today", today))).rows) == 18
    assert len(run_query(ix, Query(days=day_range("yesterday", today))).rows) == 18
    assert len(run_query(ix, Query(days=day_range("last 7 days", today))).rows) == 36
    assert len(run_query(ix, Query(days=day_range("today", date(2026, 12, 5)))).rows) == 0
    assert len(run_query(ix, Query(days=(date(2026, 11, 28), None))).rows) == 18
    assert day_range("any", today) is None


def test_free_text_matches_case_ids_and_user_messages(history: tuple[Path, list[int]]) -> None:
    ix = indexed(history[0])
    assert len(run_query(ix, Query(text="CANCEL")).rows) == 12
    assert len(run_query(ix, Query(text="message for missing")).rows) == 12
    assert len(run_query(ix, Query(text="nothing like it")).rows) == 0


def test_a_query_over_new_rows_extends_the_old_result(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    recs = records()
    write(path, recs[:20])
    ix = indexed(path)
    q = Query(verdict=frozenset({"fail"}))
    result = run_query(ix, q)
    with open(path, "ab") as fh:
        for r in recs[20:]:
            fh.write(orjson.dumps(runner_order(r)) + b"\n")
    ix.update()
    result.extend(run_query(ix, q, start=result.end))
    whole = run_query(ix, q)
    assert list(result.rows) == list(whole.rows) and result.counts == whole.counts


def test_run_files_are_described_cheaply(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", records())
    (tmp_path / "notes.txt").write_text("not a history")
    (files,) = list_run_files(tmp_path)
    assert files.attempts == 36 and files.exact
    big = describe_run_file(tmp_path / "a.jsonl", sample=2000)
    assert (
        not big.exact and big.attempts is not None and 20 < big.attempts < 55
    )  # an estimate from a sample


# --- the sidecar -----------------------------------------------------------------------


def test_a_sidecar_restores_the_index_and_the_tail_is_read_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sidecar, "MIN_ROWS", 1)
    path = tmp_path / "h.jsonl"
    recs = records()
    write(path, recs[:30])
    first = indexed(path)
    saved = sidecar.save(first)
    assert saved == tmp_path / ".index" / "h.jsonl.idx"
    assert (tmp_path / ".index" / ".gitignore").read_text() == "*\n"
    with open(path, "ab") as fh:
        for r in recs[30:]:
            fh.write(orjson.dumps(runner_order(r)) + b"\n")
    again = HistoryIndex(path, tz=UTC)
    assert sidecar.load(again) and again.rows == 30
    assert again.update() == len(recs) - 30
    whole = indexed(path)
    assert list(again.offsets) == list(whole.offsets)
    q = Query(verdict=frozenset({"fail"}), text="message for cancel")
    assert run_query(again, q).rows == run_query(whole, q).rows
    assert run_query(again, Query()).counts == run_query(whole, Query()).counts
    assert again.headers == whole.headers


def test_a_sidecar_of_a_rewritten_file_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sidecar, "MIN_ROWS", 1)
    path = tmp_path / "h.jsonl"
    write(path, records())
    assert sidecar.save(indexed(path)) is not None
    write(path, list(reversed(records())))  # same size, other bytes
    assert not sidecar.load(HistoryIndex(path, tz=UTC))
    path.write_bytes(path.read_bytes()[:500])  # truncated
    assert not sidecar.load(HistoryIndex(path, tz=UTC))
    assert not sidecar.load(HistoryIndex(path))  # another time zone: days differ


def test_a_sidecar_cut_short_is_ignored_and_saves_leave_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sidecar, "MIN_ROWS", 1)
    path = tmp_path / "h.jsonl"
    write(path, records())
    saved = sidecar.save(indexed(path))
    assert saved is not None
    assert sorted(p.name for p in saved.parent.iterdir()) == [".gitignore", "h.jsonl.idx"]
    whole = saved.read_bytes()
    saved.write_bytes(whole[:-1])  # e.g. a disk that filled up
    assert not sidecar.load(HistoryIndex(path, tz=UTC))
    saved.write_bytes(whole)
    assert sidecar.load(HistoryIndex(path, tz=UTC))


def test_small_histories_get_no_sidecar(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    write(path, records())
    assert sidecar.save(indexed(path)) is None
    assert not (tmp_path / ".index").exists()


def test_the_history_file_layer_imports_no_textual() -> None:
    probe = (
        "import toolstand.history.index, toolstand.history.query, toolstand.history.sidecar, "
        "toolstand.history.files, toolstand.history.shape; import sys; "
        "print(any(m.startswith('textual') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_second_turn_lines_stay_on_the_fast_path(tmp_path: Path) -> None:
    """In the runner's order the second turn (with a judgement of its own) comes before
    the attempt's judgement: the index must read the attempt's, quickly."""
    from toolstand.history.read import in_key_order

    recs = []
    for n in range(1, 41):
        if n % 4 == 0:  # first turn failed, second turn passed
            st = second_turn(passed=True)
            j = judgement(errors=[err("argument_mismatch")])
        elif n % 4 == 1:  # the second turn was lost to a transport error
            st = second_turn(transport_error=transport("timeout"))
            j = judgement()
        elif n % 4 == 2:  # both failed
            st = second_turn(passed=False, errors=[err("false_success", turn=2)])
            j = judgement(errors=[err("false_success", turn=2)])
        else:
            st, j = second_turn(passed=True), judgement()
        recs.append(in_key_order(attempt("recovery_not_found", n, j=j, st=st)))
    path = tmp_path / "st.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    ix = HistoryIndex(path)
    ix.update()
    assert ix.rows == 40
    assert ix.slow_lines <= 1  # the line the key order is learned from
    for i, r in enumerate(recs):
        assert ix.verdict_of(i) == r["judgement"]["verdict"], i
        assert set(ix.errors_of(i)) == {e["code"] for e in r["judgement"]["errors"]}, i


def test_history_and_report_show_the_same_latency(tmp_path: Path) -> None:
    """Issue 14 item 2: the History list's latency is the network time of the attempt's
    turns, the figure the report's p50 is taken over (not turn 1's answering try)."""
    from toolstand.reporting.metrics import compute_files

    rec = attempt("recovery_lookup_ok", 1, elapsed_ms=42.0, st=second_turn())
    rec["latency_ms"] = 7.0  # turn 1's answering try alone
    path = tmp_path / "h.jsonl"
    write(path, [rec])
    (group,) = compute_files([path]).groups
    assert indexed(path).latency[0] == 42.0 == group.latency()["p50"]
