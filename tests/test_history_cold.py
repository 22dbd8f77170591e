"""The cold index's quick ways give the index of the plain way, value for value (issue 28):
the quick path (history/quick.py: heads cut at their numbers, parts cached by bytes)
against ``_fast`` alone, and two processes (history/split.py) against one, with the cut
anywhere, hostile lines included."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
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
)
from toolstand.history import split
from toolstand.history.columns import Facet
from toolstand.history.index import HistoryIndex
from toolstand.history.read import in_key_order


def normal(i: int) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    if i % 7 == 1:
        kw["j"] = judgement(errors=[err("invalid_arguments", "pattern"), err("unsafe_call")])
    elif i % 7 == 2:
        kw["transport_error"] = transport("rate_limited", status=429)
    elif i % 7 == 3:
        kw["st"] = second_turn(passed=False, errors=[err("false_success")])
    elif i % 7 == 4:
        kw["usage"] = None
    case = ("direct_lookup", "cancel_implicit", "missing_id")[i % 3]
    rec = attempt(
        case,
        1 + i % 3,
        model=("good", "bad")[i % 2],
        elapsed_ms=[12.5, 3, 0.0][i % 3],
        retries=i % 2,
        cost_usd=None if i % 4 else 0.25,
        simulated=i % 5 != 0,
        run_id=f"run-{i // 20}",
        **kw,
    )
    rec["started_at"] = f"2026-11-{27 + i % 2}T10:{i % 60:02d}:05.123+00:00"
    rec["user"] = f"message {i % 4} for {case}"
    if i % 9 == 0:
        rec["usage"] = {"input_tokens": 100 + i, "output_tokens": i}
    return in_key_order(rec)


def hostile_lines() -> list[bytes]:
    """Lines no quick reader may misread, each different from its neighbours in one
    place: numbers of odd types, parts of odd shapes, foreign and broken lines."""
    base = normal(0)

    def odd(**change: Any) -> bytes:
        return orjson.dumps({**base, **change})

    dup = orjson.dumps(base).replace(b'"model":', b'"model":"shadow","model":', 1)
    extra = orjson.dumps(base).replace(b'"api":', b'"extra":1,"api":', 1)
    nested = orjson.dumps(base).replace(b'"provider":"sim"', b'"provider":{"attempt":1}', 1)
    spaced = orjson.dumps(base).replace(b',"attempt":', b', "attempt": ', 1)
    te = b'"transport_error":null'
    again = [  # a number again after the numbers: the last one counts
        orjson.dumps(base).replace(te, te + b',"elapsed_ms":"x"', 1),
        orjson.dumps(base).replace(te, te + b',"retries":-1', 1),
        orjson.dumps(base).replace(te, te + b',"elapsed_ms":5', 1),
        orjson.dumps(base).replace(te, te + b',"usage":{"input_tokens":1,"output_tokens":2}', 1),
        orjson.dumps(base).replace(b'"type":"attempt"', b'"type":"attempt","cost_usd":"x"', 1),
    ]
    return [
        odd(retries=2.0),
        odd(usage={"input_tokens": 1.5, "output_tokens": 2}),
        odd(usage=[1, 2]),
        odd(attempt=0),
        odd(attempt="1"),
        odd(attempt=True),
        odd(elapsed_ms=-1),
        odd(elapsed_ms="fast"),
        odd(cost_usd=-0.5),
        odd(provider=7),
        odd(case_id=',"attempt":1,"x":"'),
        odd(model="sim-\u00e9"),
        orjson.dumps(base).replace(b'"sim-careful"', b'"sim-\\u00e9"', 1),
        odd(stream=True),
        odd(run_identity=5),
        odd(transport_error={"message": "no code"}),
        odd(transport_error={"code": "timeout", "message": "t"}, judgement=None),
        odd(judgement=None),
        odd(simulated=None),
        dup,
        extra,
        nested,
        spaced,
        *again,
        orjson.dumps(lead_order(attempt("direct_lookup", 2, j=judgement(errors=[err("x")])))),
        orjson.dumps(in_key_order(attempt("direct_lookup", 1, run_id="w2", model="m2"))),
        b'{"type":"note","text":"a foreign record"}',
        b"not json at all",
        b"   ",
        b"[1, 2]",
        orjson.dumps(base) + b"\r",
        orjson.dumps(base)[:-1] + b" ",
        orjson.dumps(base)[:-40],
        orjson.dumps(header(run_id="second-header")),
    ]


def history(path: Path, *, torn: bool = True) -> Path:
    lines = [orjson.dumps(header(run_id="run-0"))]
    odd = hostile_lines()
    for i in range(120):
        lines.append(orjson.dumps(normal(i)))
        if i % 3 == 2 and odd:
            lines.append(odd.pop(0))
    lines += odd
    data = b"\n".join(lines) + b"\n"
    if torn:
        data += lines[5][:100]
    path.write_bytes(data)
    return path


def state(ix: HistoryIndex) -> dict[str, Any]:
    """Everything an index holds that a reader or a sidecar sees, by value and by code."""
    r = ix.report
    return {
        "rows": ix.rows,
        "lines": ix.lines,
        "end": ix.end,
        "columns": [c.tobytes() for c in (ix.offsets, ix.times, ix.latency, ix.attempt)],
        "facets": {n: (f.values, list(f.codes)) for n, f in ix.facets.items()},
        "verdict": list(ix.verdict.codes),
        "errors": (ix.errors.values, list(ix.errors.codes)),
        "report": (r.kinds, list(r.kind), r.odd),
        "numbers": [c.tobytes() for c in (r.elapsed, r.cost, r.retries, r.tin, r.tout)],
        "user_text": ix.user_text,
        "headers": ix.headers,
        "simulated": ix.simulated,
        "warnings": ix.warnings,
        "tail": ix.tail,
        "too_long": ix.too_long,
    }


def plain(path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The index one process builds without the quick path."""
    with monkeypatch.context() as m:
        m.setattr(HistoryIndex, "_learn_template", lambda self, row: None)
        ix = HistoryIndex(path)
        ix.update()
    assert ix._quick is None
    return state(ix)


@pytest.mark.parametrize("torn", [False, True])
def test_the_quick_path_gives_the_fast_paths_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, torn: bool
) -> None:
    path = history(tmp_path / "h.jsonl", torn=torn)
    ix = HistoryIndex(path)
    ix.update()
    assert ix._quick is not None and ix._quick._parts, "the quick path was not taken"
    assert state(ix) == plain(path, monkeypatch)
    assert any("malformed line" in w.message for w in ix.warnings)


def test_the_quick_path_over_small_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = history(tmp_path / "h.jsonl")
    ix = HistoryIndex(path)
    while ix.update(max_bytes=3000):
        pass
    ix.update()
    assert state(ix) == plain(path, monkeypatch)


def built(path: Path) -> HistoryIndex:
    """The index one process builds of ``path``, whole."""
    ix = HistoryIndex(path)
    ix.update()
    return ix


def line_starts(path: Path) -> list[int]:
    data = path.read_bytes()
    starts = [0]
    while (nl := data.find(b"\n", starts[-1])) >= 0:
        starts.append(nl + 1)
    return starts


def test_two_processes_give_the_index_of_one_wherever_the_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = history(tmp_path / "h.jsonl")
    one = built(path)
    want = state(one)
    assert want == plain(path, monkeypatch)
    starts = line_starts(path)
    # the first line, a header's end, inside the hostile lines, the last whole line, the end
    for cut in sorted({starts[1], starts[2], *starts[150:175:4], starts[-2], starts[-1]}):
        ix = HistoryIndex(path)
        assert split.update_in_two(ix, cut) == one.rows
        assert state(ix) == want, f"cut at {cut}"
        ix.update()  # and it follows the file on as one process would
        assert state(ix) == want


def test_a_failed_child_leaves_its_half_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = history(tmp_path / "h.jsonl")
    one = built(path)

    def broken(ix: HistoryIndex) -> dict[str, Any]:
        raise OSError("the child cannot say")

    monkeypatch.setattr(split, "_state", broken)  # the forked child inherits it
    ix = HistoryIndex(path)
    assert split.update_in_two(ix, line_starts(path)[60]) == one.rows
    assert state(ix) == state(one)


def test_update_splits_only_a_large_file_from_its_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = history(tmp_path / "h.jsonl", torn=False)
    size = path.stat().st_size
    one = built(path)
    calls: list[int] = []
    real = split.update_in_two

    def spy(ix: HistoryIndex, cut: int) -> int:
        calls.append(cut)
        return real(ix, cut)

    monkeypatch.setattr(split, "update_in_two", spy)
    monkeypatch.setattr(split.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(split.threading, "active_count", lambda: 1)  # a test runner's threads
    monkeypatch.setattr(split, "MIN_BYTES", size + 1)
    ix = built(path)
    assert calls == []
    monkeypatch.setattr(split, "MIN_BYTES", size)
    ix = HistoryIndex(path)
    ix.update(max_bytes=size // 3)  # a budget: one process
    assert calls == []
    ix.update()  # the rest: not from the start
    assert calls == [] and state(ix) == state(one)
    ix = built(path)
    assert len(calls) == 1 and state(ix) == state(one)
    assert path.read_bytes()[calls[0] - 1 : calls[0]] == b"\n"


def test_no_split_with_another_thread_alive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = history(tmp_path / "h.jsonl", torn=False)
    monkeypatch.setattr(split, "MIN_BYTES", 0)
    monkeypatch.setattr(split.os, "cpu_count", lambda: 2)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not split.can_split(HistoryIndex(path), path.stat().st_size)
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr(split.os, "cpu_count", lambda: 1)
    assert not split.can_split(HistoryIndex(path), path.stat().st_size)


def test_a_line_half_written_at_the_split_is_read_whole_once_its_writer_ends_it(
    tmp_path: Path,
) -> None:
    # a second writer is appending while the file is indexed in two: its last line is
    # torn when the child reads it, then finished; the index then equals one process's
    path = history(tmp_path / "h.jsonl", torn=False)
    data = path.read_bytes()
    more = orjson.dumps(normal(500)) + b"\n"
    path.write_bytes(data + more[:150])  # the writer's line, half written
    ix = HistoryIndex(path)
    split.update_in_two(ix, line_starts(path)[100])
    assert ix.tail is not None  # the torn end is seen as the tail, not as a line
    with path.open("ab") as fh:
        fh.write(more[150:] + orjson.dumps(normal(501)) + b"\n")
    ix.update()
    assert state(ix) == state(built(path))


# --- the scan (history/scan.py): a chunk's lines a column at a time -----------------------


def scanned(path: Path, chunk: int) -> HistoryIndex:
    """The index one process builds reading ``chunk`` bytes at a time (the scan reads
    every chunk after the one the layout is learned in)."""
    ix = HistoryIndex(path)
    while ix.update(max_bytes=1 << 40, chunk=chunk):
        pass
    return ix


def plain_in(path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> dict[str, Any]:
    """The index one process builds without the quick path, ``chunk`` bytes at a time
    (a chunk's times are parsed together: chunks of the same size compare)."""
    with monkeypatch.context() as m:
        m.setattr(HistoryIndex, "_learn_template", lambda self, row: None)
        ix = scanned(path, chunk)
    assert ix._quick is None and ix._scan is None
    return state(ix)


@pytest.mark.parametrize("chunk", [2500, 9000, 40_000])
def test_the_scan_gives_the_fast_paths_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    path = history(tmp_path / "h.jsonl")
    ix = scanned(path, chunk)
    scan = ix._scan
    assert scan is not None and scan.rows > 60 and scan.turns > 5, "the scan was not taken"
    assert state(ix) == plain_in(path, monkeypatch, chunk)


def test_the_scan_in_two_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = history(tmp_path / "h.jsonl")
    want = plain(path, monkeypatch)
    monkeypatch.setattr(split, "cut_point", lambda p, size: line_starts(path)[150])
    monkeypatch.setattr(split, "can_split", lambda ix, size: ix.end == 0 and ix.rows == 0)
    real = HistoryIndex.update

    def small(self: HistoryIndex, max_bytes: int = 1 << 62, chunk: int = 9000) -> int:
        return real(self, max_bytes, min(chunk, 9000))

    monkeypatch.setattr(HistoryIndex, "update", small)
    ix = HistoryIndex(path)
    ix.update()
    assert ix._scan is not None and ix._scan.rows > 0
    assert state(ix) == want


def scan_lines() -> list[bytes]:
    """Runs of lines the scan reads, with one line in each run that differs from the
    others in one place the scan must notice (it then leaves the line to the index)."""
    base = normal(0)
    raw = orjson.dumps(base)
    te = b'"transport_error":null'
    lines = []
    for i in range(40):
        rec = normal(3 * i)  # no transport error, no second turn: the scan's own lines
        lines.append(orjson.dumps(rec))
    turn = normal(3)
    odd = [
        orjson.dumps(turn),  # a second turn
        orjson.dumps({**turn, "second_turn": {**turn["second_turn"], "elapsed_ms": "x"}}),
        orjson.dumps({**turn, "second_turn": {**turn["second_turn"], "usage": [1]}}),
        raw.replace(b'"type":"attempt"', b'"type":"Attempt"', 1),
        orjson.dumps(normal(2)),  # a transport error
        raw.replace(b'"usage":{', b'"usage":{"second_turn":1,', 1),
        raw.replace(b'"simulated":true', b'"simulated":{"a":1,"second_turn":2}', 1),
        raw.replace(b'"attempt":1', b'"attempt":1.0', 1),
        raw.replace(b'"retries":0', b'"retries":4294967296', 1),
        raw.replace(b'"elapsed_ms":12.5', b'"elapsed_ms":1e400', 1),
        raw.replace(b'"elapsed_ms":12.5', b'"elapsed_ms":4294967296', 1),
        raw.replace(b'"elapsed_ms":12.5', b'"elapsed_ms":4294967296.5', 1),
        raw.replace(b'"stream":false', b'"stream":0', 1),
        raw.replace(b'"simulated":true', b'"simulated":1', 1),
        raw.replace(
            b'"simulated":true,"elapsed_ms":12.5', b'"elapsed_ms":12.5,"simulated":true', 1
        ),
        raw.replace(te, b'"transport_error":false', 1),
        raw.replace(b',"run_id":', b',"run_id":7,"x":', 1),
        raw.replace(b'"started_at":"', b'"started_at":"[', 1),
        raw.replace(b'"category":', b'"category":"c","c2":', 1),
        raw.replace(b'"run_id":"run-0"', b'"run_id":"run-\\u0030"', 1),
        raw.replace(b'"run_id":"run-0"', b'"run_id":"run-\xff"', 1),
        raw.replace(b',"errors":[]', b',"errors":[],"errors":[]', 1),
        raw.replace(b'"verdict":"pass"', b'"verdict":"fail"', 1),
        raw[:-1] + b"]",
        b"",
        b"}",
    ]
    out = []
    for i, line in enumerate(odd):
        out += lines[i % 7 : i % 7 + 9]
        out.append(line)
    return [header_line(), *out, *lines]


def header_line() -> bytes:
    return orjson.dumps(header(run_id="run-0"))


@pytest.mark.parametrize("chunk", [3000, 20_000])
def test_the_scan_leaves_each_odd_line_to_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"\n".join(scan_lines()) + b"\n")
    ix = scanned(path, chunk)
    assert ix._scan is not None and ix._scan.rows > 150
    assert state(ix) == plain_in(path, monkeypatch, chunk)


def test_bulk_decodes_each_body_as_alone() -> None:
    from toolstand.history.scan import _BAD, bulk

    bodies = [
        b'"a":1',
        b'"a":[{"b":1',  # an array left open would swallow the next bodies
        b'"c":2}]',
        b'"x":1},{"y":2',  # two objects in one body
        b'"s":"}\\n,{"',
        b'"u":"\xff"',
        b'"n":{"m":{}}',
        b"",
    ]
    alone = [bulk([b])[0] for b in bodies]
    assert alone[1] is _BAD and alone[3] is _BAD and alone[5] is _BAD
    for k in range(len(bodies)):
        for j in range(k + 1, len(bodies) + 1):
            assert bulk(bodies[k:j]) == alone[k:j]
    good = [b'"a":1', b'"n":{"m":{}}', b'"s":"}\\n,{"']
    assert bulk(good) == [orjson.loads(b"{" + b + b"}") for b in good]


def streamed_turns(i: int) -> dict[str, Any]:
    """A record whose head holds the stream arm and a run identity after the numbers,
    with a second turn that has retries and usage of its own every other time."""
    rec = normal(i)
    rec["stream"] = False
    rec["run_identity"] = f"ident-{i % 2}"
    if i % 2:
        turn = second_turn(passed=i % 4 == 1, retries=2)
        turn["usage"] = {"input_tokens": 40 + i, "output_tokens": i % 5}
        rec["second_turn"] = turn
    return in_key_order(rec)


@pytest.mark.parametrize("chunk", [4000, 30_000])
def test_the_scan_reads_second_turns_as_fast_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    path = tmp_path / "h.jsonl"
    lines = [header_line(), *(orjson.dumps(streamed_turns(i)) for i in range(160))]
    path.write_bytes(b"\n".join(lines) + b"\n")
    ix = scanned(path, chunk)
    assert ix._scan is not None and ix._scan.turns > 40
    assert state(ix) == plain_in(path, monkeypatch, chunk)
    assert set(ix.facets["stream"].values) == {False}


# what the runner writes (attempt.plan: milliseconds, +00:00; its header: seconds), and
# other ISO-8601 forms: a fraction or none, Z, another zone, no zone (read as UTC)
STAMPS = (
    "2026-11-29T19:56:05.123+00:00",
    "2026-11-29T19:56:05+00:00",
    "2026-11-29T19:56:05.999+00:00",
    "2026-11-29T19:56:05Z",
    "2026-11-29T19:56:05.5Z",
    "2026-11-29T19:56:05.123456",
    "2026-11-29T19:56:05",
    "2026-11-29T23:59:59.999-05:30",
    "2026-11-30T00:00:00.25+05:45",
    "2026-11-29 19:56:05.1+01:00",
)


def _stamped(path: Path, stamps: Sequence[str]) -> HistoryIndex:
    lines = [orjson.dumps(header(run_id="run-0"))]
    for i, stamp in enumerate(stamps):
        rec = normal(i)
        rec["started_at"] = stamp
        lines.append(orjson.dumps(rec))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return built(path)


def test_a_stamps_time_is_its_own_whatever_its_neighbours(tmp_path: Path) -> None:
    alone = _stamped(tmp_path / "alone.jsonl", STAMPS)
    beside = _stamped(tmp_path / "beside.jsonl", [*STAMPS[:3], "not a time", *STAMPS[3:]])
    assert alone.rows == len(STAMPS) and beside.rows == len(STAMPS) + 1
    assert beside.times[3] != beside.times[3]  # NaN: the stamp that is no time
    rows = [*range(3), *range(4, len(STAMPS) + 1)]
    for i, stamp in enumerate(STAMPS):
        dt = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        want = (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()
        day = datetime.fromtimestamp(want, alone.tz).date()
        assert (alone.times[i], alone.value("day", i)) == (want, day), stamp
        assert (beside.times[rows[i]], beside.value("day", rows[i])) == (want, day), stamp


# one change to a second turn's small keys each: what the scan's column checks of second
# turns (scan.Scan._turn_facts) must leave to second_turn_problem and second_facts
ODD_TURNS: tuple[dict[str, Any], ...] = (
    {"transport_error": {"code": "timeout", "message": "t"}, "judgement": None},
    {"transport_error": {"message": "no code"}},
    {"transport_error": False},
    {"judgement": 5},
    {"judgement": None},
    {"judgement": {"verdict": "fail", "errors": [], "passed": False}},
    {"judgement": {"verdict": "pass", "errors": "none", "passed": True}},
    {"judgement": {"verdict": "pass", "errors": [1], "passed": True}},
    {"judgement": {"verdict": "pass", "metrics": {"calls_made": -1}, "passed": True}},
    {"judgement": {"metrics": {"exact_correct": 2, "exact_denominator": 1}, "passed": 1}},
    {"judgement": {"metrics": {"called": 1}, "passed": True}},
    {"elapsed_ms": 4294967296.5},  # past the column check's bound, within _turn_problem's
    {"elapsed_ms": -1},
    {"elapsed_ms": True},
    {"elapsed_ms": "x"},
    {"cost_usd": 0.5},
    {"latency_ms": -2},
    {"first_token_ms": 3},
    {"retries": True},
    {"retries": -1},
    {"retries": 2.0},
    {"retries": 4294967295},
    {"retries": 4294967296},
    {"usage": {}},
    {"usage": {"input_tokens": 5}},
    {"usage": {"input_tokens": 7, "output_tokens": 4294967295}},
    {"usage": 0},
    {"usage": []},
    {"usage": {"input_tokens": 1.5}},
)


def test_the_scan_reads_odd_second_turns_as_fast_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [header_line()]
    for i, change in enumerate(ODD_TURNS):
        lines += [orjson.dumps(streamed_turns(k)) for k in range(4 * i, 4 * i + 4)]
        rec = streamed_turns(1)
        rec["second_turn"] = {**rec["second_turn"], **change}
        lines.append(orjson.dumps(in_key_order(rec)))
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    ix = scanned(path, 6000)
    assert ix._scan is not None and ix._scan.turns > 60
    assert state(ix) == plain_in(path, monkeypatch, 6000)


@pytest.mark.parametrize(("first", "second"), [(3, 5), (250, 20), (200, 100), (300, 10), (9, 400)])
def test_a_facet_extended_from_another_holds_the_codes_of_its_rows(first: int, second: int) -> None:
    """Facet.extend_from (the two processes' merge) against extend, row by row: values
    the other facet shares and new ones, met in another order, past 256 values or not."""
    ours = [f"v{(7 * i) % first}" for i in range(2 * first)]
    theirs = [f"v{(first + second - 1 - 5 * i) % (first + second)}" for i in range(3 * second)]
    other = Facet("x")
    other.extend(theirs)
    want, got = Facet("x"), Facet("x")
    for f in (want, got):
        f.extend(ours)
    want.extend(theirs)
    got.extend_from(other.values, other.codes)
    assert got.values == want.values
    assert (type(got.codes), list(got.codes)) == (type(want.codes), list(want.codes))
