"""The stream faults a server declares (reporting/declared_faults.py) read from hostile
histories: whatever the lines hold, the reader skips what is not a streamed attempt with
a string header, never raises, and the text never carries a control character raw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from toolstand.reporting import declared_faults
from toolstand.reporting.declared_faults import HEADER, FaultRow

GROUP = ("sim-chat", "sim-streambug", "auto", None)


def attempt(case_id: str, number: int, faults: Any, **extra: Any) -> dict[str, Any]:
    rec = {
        "type": "attempt", "provider": "sim-chat", "model": "sim-streambug", "mode": "auto",
        "case_id": case_id, "attempt": number, "stream": True, "run_identity": "r1",
        "response": {"status": 200, "headers": {HEADER: faults}},
    }  # fmt: skip
    rec.update(extra)
    return rec


def write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def test_only_streamed_attempts_with_a_string_header_declare(tmp_path: Path) -> None:
    good = attempt("a", 1, "value_coerced, args_lost,,value_coerced")
    lines = [
        orjson.dumps(good) + b"\n",
        orjson.dumps(attempt("b", 1, "x", stream=False)) + b"\n",  # not streamed
        orjson.dumps(attempt("c", 1, ["x"])) + b"\n",  # a list where a string belongs
        orjson.dumps(attempt("d", True, "x")) + b"\n",  # a bool attempt number
        orjson.dumps(attempt("e", 1, "x", response={"headers": "nope"})) + b"\n",
        orjson.dumps(attempt("f", 1, "x", response=None)) + b"\n",
        orjson.dumps({**attempt("g", 1, "x"), "case_id": 7}) + b"\n",
        orjson.dumps(attempt("h", 1, "x", feedback=3)) + b"\n",
        orjson.dumps(attempt("i", 1, "")) + b"\n",  # declares nothing
        b"[1, 2, " + HEADER.encode() + b"]\n",  # the name in a line that is no record
        b"\xff\xfe " + HEADER.encode() + b"\n",  # not UTF-8
        orjson.dumps(attempt("j", 1, "torn"))[:-9],  # a second writer's torn last line
    ]
    declared = declared_faults.read([str(write(tmp_path / "h.jsonl", lines)), "missing.jsonl"])
    assert declared == {
        ("sim-chat", "sim-streambug", "auto", None, "a", 1): [
            ("r1", ("args_lost", "value_coerced"), ())
        ],
        ("sim-chat", "sim-streambug", "auto", None, "i", 1): [("r1", (), ())],
    }


def test_rows_pair_each_stream_with_its_run_and_count_what_it_cost(tmp_path: Path) -> None:
    lines = [
        orjson.dumps(attempt("a", 1, "value_coerced,json_padding")) + b"\n",
        orjson.dumps(attempt("a", 2, "json_padding")) + b"\n",
        # another run of the same names, written between (a second process): not counted
        orjson.dumps(attempt("a", 1, "call_lost", run_identity="r2")) + b"\n",
        # an older record without an identity, alone at its key: counted
        orjson.dumps(attempt("b", 1, "args_lost", run_identity=None)) + b"\n",
    ]
    declared = declared_faults.read([str(write(tmp_path / "h.jsonl", lines))])
    plain = {("a", 1): (True, "s1"), ("a", 2): (True, "s2"), ("b", 1): (True, "s3")}
    streamed = {("a", 1): (False, "other"), ("a", 2): (True, "s2"), ("b", 1): (True, "s3")}
    got = declared_faults.rows(declared, GROUP, "r1", plain, streamed)
    assert got == [
        FaultRow("json_padding", streams=2, differing=1, failed_only_streamed=1),
        FaultRow("value_coerced", streams=1, differing=1, failed_only_streamed=1),
        FaultRow("args_lost", streams=1, differing=0, failed_only_streamed=0),
    ]
    assert got[0].to_dict() == {
        "fault": "json_padding", "streams": 2, "differing": 1, "failed_only_streamed": 1,
        "retried": 0,
    }  # fmt: skip


def retried_try(faults: str) -> dict[str, Any]:
    return {"status": 200, "error_code": "stream_interrupted", "waited_s": 0.01,
            "headers": {HEADER: faults}}  # fmt: skip


def test_a_class_declared_on_a_retried_try_is_declared_for_the_attempt(tmp_path: Path) -> None:
    """A transient fault fails its try and the transport retries: the record keeps that
    try's headers in tries[] and the final try's in the response. The class counts for
    the attempt (streams, retried), but not as reading differently: the stream that was
    judged did not carry it."""
    final = {"status": 200, "error_code": None, "waited_s": None}
    lines = [
        orjson.dumps(attempt("a", 1, "value_coerced", tries=[
            retried_try("no_terminal,value_coerced"), retried_try("error_inband"), final,
        ])) + b"\n",
        # the final try declared nothing (no header), a retried one did
        orjson.dumps({**attempt("b", 1, "x", tries=[retried_try("no_terminal"), final]),
                      "response": {"status": 200, "headers": {}}}) + b"\n",
        # the last entry is the final try: its headers would be the response's, not read
        orjson.dumps(attempt("c", 1, "json_padding", tries=[retried_try("error_inband")])) + b"\n",
        orjson.dumps(attempt("d", 1, "json_padding", tries="nope")) + b"\n",
        orjson.dumps(attempt("e", 1, "json_padding", tries=[7, {"headers": [1]}, {}])) + b"\n",
    ]  # fmt: skip
    declared = declared_faults.read([str(write(tmp_path / "h.jsonl", lines))])
    assert declared[(*GROUP, "a", 1)] == [
        ("r1", ("value_coerced",), ("error_inband", "no_terminal", "value_coerced"))
    ]
    assert declared[(*GROUP, "b", 1)] == [("r1", (), ("no_terminal",))]
    for cid in "cde":
        assert declared[(*GROUP, cid, 1)] == [("r1", ("json_padding",), ())]
    keys = [("a", 1), ("b", 1)]
    plain = {k: (True, "same") for k in keys}
    streamed = {("a", 1): (False, "other"), ("b", 1): (True, "same")}
    got = declared_faults.rows(declared, GROUP, "r1", plain, streamed)
    assert got == [
        FaultRow("value_coerced", streams=1, differing=1, failed_only_streamed=1, retried=1),
        FaultRow("no_terminal", streams=2, differing=0, failed_only_streamed=0, retried=2),
        FaultRow("error_inband", streams=1, differing=0, failed_only_streamed=0, retried=1),
    ]
    text = "\n".join(declared_faults.lines(got))
    assert f"    {'no_terminal':<24} {2:>7} {0:>17} {0:>21} {2:>8}" in text


def test_the_text_spells_control_characters_and_cuts_long_names(tmp_path: Path) -> None:
    from tests.support.runs import go, make_inputs, sim
    from toolstand.reporting.formats import render_table
    from toolstand.reporting.metrics import compute_files

    out = tmp_path / "run.jsonl"
    go(make_inputs([sim("sim-careful", "openai-chat")], stream="both"), out, only={"direct_lookup"})
    recs = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    hostile = "\x1b[31mred\x07," + "x" * 5000
    for rec in recs:
        if rec.get("type") == "attempt" and rec["stream"]:
            rec["response"]["headers"][HEADER] = hostile
    out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    text = render_table(compute_files([out], index=False))
    table = text.split(f"declared stream faults ({HEADER})")[1]
    assert "\x1b" not in table and "\x07" not in table
    assert "x" * 24 in table and "x" * 25 not in table  # a name is cut to its column
