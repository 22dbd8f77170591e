"""Reading histories: torn and malformed lines, reading levels, the key-order contract."""

from __future__ import annotations

from pathlib import Path

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
from toolstand.history.read import (
    HistoryWarning,
    decode_metrics,
    decode_metrics_errors,
    decode_summary,
    iter_records,
    load,
    read_record,
    scan,
    split_metrics,
)

BULKY = ("request", "response", "decision")


def _line(rec: dict) -> bytes:
    return orjson.dumps(rec) + b"\n"


def test_torn_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    recs = [header(), attempt("a", 1), attempt("a", 2)]
    torn = _line(attempt("a", 3))[:-40]  # killed mid-write: no newline, cut JSON
    path = write_jsonl(tmp_path / "run.jsonl", recs, tail=torn)
    for level in ("full", "summary", "metrics", "metrics+errors"):
        warnings: list[HistoryWarning] = []
        got = list(iter_records([path], level=level, warnings=warnings))
        assert [r["type"] for r in got] == ["run", "attempt", "attempt"]
        assert len(warnings) == 1
        assert warnings[0].line == 4 and "torn last line" in warnings[0].message
        assert str(warnings[0]).startswith(f"{path}:4: ")


def test_malformed_blank_and_unknown_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(
        _line(header())
        + b"\n"  # blank: skipped silently
        + b'{"type": "attempt", "provider": }\n'  # malformed, ends in }
        + b"not json at all\n"
        + b'{"type": "note", "text": "hi"}\n'  # unknown record type
        + b"[1, 2]\n"
        + _line(attempt("a"))
    )
    warnings: list[HistoryWarning] = []
    entries = list(scan(path, level="metrics", warnings=warnings))
    assert [e.line for e in entries] == [1, 7]
    assert [w.line for w in warnings] == [3, 4, 5, 6]
    assert "malformed line" in warnings[0].message
    assert "unknown record type 'note'" in warnings[2].message


def test_offsets_let_a_summary_scan_fetch_the_whole_record(tmp_path: Path) -> None:
    recs = [header(), attempt("a", 1), attempt("b", 2, st=second_turn())]
    path = write_jsonl(tmp_path / "run.jsonl", recs)
    entries = list(scan(path, level="summary"))
    assert all(k not in entries[2].record for k in BULKY)
    full = read_record(path, entries[2].offset)
    assert full == recs[2]


def test_summary_drops_the_bulky_tail_and_keeps_the_rest() -> None:
    rec = attempt("a", j=judgement(errors=[err("wrong_tool")]), st=second_turn())
    d = decode_summary(_line(rec))
    assert list(d) == [k for k in rec if k not in BULKY]
    assert d["judgement"] == rec["judgement"]  # errors and calls included
    assert d["second_turn"] == rec["second_turn"]  # before the top-level request: whole


def test_metrics_level_keeps_only_what_metrics_need() -> None:
    st = second_turn(passed=False)
    rec = attempt("a", j=judgement(errors=[err("false_success", turn=2)]), st=st)
    line = _line(rec)
    parts = split_metrics(line)
    assert parts is not None
    head, blob, small = parts
    assert "request" not in head and head["case_id"] == "a"
    assert blob is not None and orjson.loads(blob) == {
        k: rec["judgement"][k] for k in ("verdict", "metrics", "unsafe", "flags")
    }
    assert small == {k: st[k] for k in ("transport_error", "judgement", "elapsed_ms", "retries")}
    d = decode_metrics(line)
    assert "errors" not in d["judgement"]
    # the failing attempt gets its errors back at the metrics+errors level
    assert decode_metrics_errors(line)["judgement"]["errors"] == rec["judgement"]["errors"]
    ok = _line(attempt("b"))
    assert "errors" not in decode_metrics_errors(ok)["judgement"]


def test_transport_failure_splits_with_null_judgement() -> None:
    line = _line(attempt("a", transport_error=transport("timeout")))
    parts = split_metrics(line)
    assert parts is not None
    assert parts[1] is None and parts[2] is None
    assert parts[0]["transport_error"]["code"] == "timeout"


def test_out_of_order_line_is_decoded_slowly_but_right() -> None:
    rec = lead_order(attempt("a", j=judgement(errors=[err("wrong_tool")]), st=second_turn()))
    line = _line(rec)
    assert split_metrics(line) is None
    assert decode_summary(line) == rec  # no usable cut: decoded whole
    assert decode_metrics(line) == rec


def test_keys_named_like_the_cut_points_do_not_fool_the_slicer() -> None:
    # a model argument called "request", "errors" or "second_turn" sits in the judgement
    rec = attempt("a", j=judgement(errors=[err("argument_mismatch", actual={"x": 1})]))
    rec["judgement"]["errors"][0]["actual"] = {"x": 1, "request": 2, "errors": 3}
    rec["judgement"]["calls"][0]["repaired_arguments"] = {"y": 0, "second_turn": None}
    line = _line(rec)
    d = decode_summary(line)
    assert d["judgement"] == rec["judgement"] and "request" not in d
    assert decode_metrics(line)["judgement"]["metrics"] == rec["judgement"]["metrics"]


def test_load_splits_headers_and_attempts_and_reads_a_file_once(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "run.jsonl", [header(), attempt("a"), attempt("b")])
    warnings: list[HistoryWarning] = []
    recs = list(iter_records([path, tmp_path / "." / "run.jsonl"], warnings=warnings))
    assert len(recs) == 3
    assert "given twice" in warnings[0].message
    hist = load(path, level="summary")
    assert len(hist.headers) == 1 and [a["case_id"] for a in hist.attempts] == ["a", "b"]
    assert hist.warnings == []


def test_missing_file_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        list(iter_records([tmp_path / "nope.jsonl"]))


def test_in_key_order_makes_any_record_splittable() -> None:
    from toolstand.history.read import in_key_order

    rec = attempt("a", j=judgement(errors=[err("wrong_tool")]), st=second_turn(passed=False))
    shuffled = lead_order(rec)
    shuffled["judgement"] = dict(reversed(list(shuffled["judgement"].items())))
    shuffled["second_turn"] = dict(reversed(list(shuffled["second_turn"].items())))
    assert split_metrics(_line(shuffled)) is None
    fixed = in_key_order(shuffled)
    assert fixed == rec  # same content
    assert list(fixed) == list(rec)  # and the factory's order is the contract's
    assert list(fixed["judgement"]) == list(rec["judgement"])
    assert split_metrics(_line(fixed)) is not None
    assert split_metrics(_line(fixed), with_errors=True) is not None
    head = header()
    assert in_key_order(head) is head


def test_the_split_needs_a_run_id_wherever_the_writer_put_it() -> None:
    rec = attempt("a")
    front = {"type": "attempt", "run_id": "r-1", **{k: v for k, v in rec.items() if k != "run_id"}}
    parts = split_metrics(_line(front), run_id=True)
    assert parts is not None and parts[0]["run_id"] == "r-1"  # in the head
    assert decode_metrics(_line(rec))["run_id"] == "run-1"  # after the judgement
    del rec["run_id"]
    assert split_metrics(_line(rec)) is None  # none: the careful way names it
    front["run_id"] = None
    assert split_metrics(_line(front)) is None
