"""Issue 31 M3: a history field of the wrong type (a number as text, usage as a list, a
second turn or its judgement as a string, a header's runs as a string) never takes a
reader down: the record is skipped with a warning naming its line, by report (every
format, the line path and the sidecar-columns path), compare, rejudge, the History
index and the TUI's attempt detail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.readers import every_reader, report_paths
from tests.support.records import (
    attempt,
    err,
    header,
    judgement,
    second_turn,
    write_jsonl,
)
from toolstand.history import in_key_order, read_record
from toolstand.history.index import HistoryIndex
from toolstand.history.quick import QuickPath
from toolstand.reporting.compare import load_report
from toolstand.reporting.formats import render_table
from toolstand.reporting.metrics import compute_files

ROOT = Path(__file__).resolve().parents[2]


def _failing() -> dict[str, Any]:
    j = judgement(errors=[err("wrong_tool")])
    return attempt("b", st=second_turn()) | {"judgement": j}


def _set(rec: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    node = rec
    parts = dotted.split(".")
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = value
    return rec


ATTEMPT_ODD = {
    "elapsed_ms": ("fast", "field elapsed_ms is a string, not a non-negative number"),
    "usage": ([1, 2], "field usage is an array, not an object"),
    "usage.input_tokens": (
        "many",
        "field usage.input_tokens is a string, not a non-negative integer",
    ),
    "cost_usd": ("free", "field cost_usd is a string, not a non-negative number"),
    "retries": ("2", "field retries is a string, not a non-negative integer"),
    "second_turn": ("oops", "field second_turn is a string, not an object"),
    "second_turn.judgement": ("x", "field second_turn.judgement is a string, not an object"),
    "judgement.metrics.exact_denominator": (
        -3,
        "field judgement.metrics.exact_denominator is a number, not a non-negative integer",
    ),
}


def _odd_attempt(dotted: str) -> dict[str, Any]:
    rec = _failing()
    rec.setdefault("usage", {"input_tokens": 1, "output_tokens": 1})
    rec["cost_usd"] = 0.0
    return _set(rec, dotted, ATTEMPT_ODD[dotted][0])


def _history(tmp_path: Path, odd: dict[str, Any], hdr: dict[str, Any] | None = None) -> Path:
    good = [attempt("a", 1), attempt("a", 2), attempt("c", 1)]
    recs = [hdr or _header(), good[0], odd, *good[1:]]
    return write_jsonl(tmp_path / "run.jsonl", [in_key_order(r) for r in recs])


def _header() -> dict[str, Any]:
    return {
        **header(),
        "contract": {"path": str(ROOT / "contracts/delivery_tools.json"), "hash": "c" * 64},
        "cases": {"path": str(ROOT / "cases/delivery.jsonl"), "hash": "d" * 64},
    }


@pytest.mark.parametrize("dotted", sorted(ATTEMPT_ODD))
def test_a_field_of_the_wrong_type_is_skipped_by_every_reader(tmp_path: Path, dotted: str) -> None:
    path = _history(tmp_path, _odd_attempt(dotted))
    message = ATTEMPT_ODD[dotted][1]
    seen = every_reader(path, tmp_path)
    want = f"{path}:3: attempt skipped: {message}"
    # the report's readers never decode a judgement's calls (nor need them)
    readers = ("report", "compare") if dotted != "judgement.calls" else ()
    for reader in readers:
        assert want in seen[reader], reader
    assert f"warning: {want}; kept as is" in seen["rejudge"]
    assert any(message in m for m in seen.get("detail", [])) or want in seen["index"]
    report = compute_files([path], index=False)
    assert sum(g.attempted for g in report.groups) == 3  # the good lines are all counted


HEADER_ODD = {
    "runs": ("x", "field runs is a string, not an array"),
    "runs.items": ([1, "a"], "field runs holds an item that is not an object"),
    "run_id": (5, "field run_id is a number, not a string"),
    "contract": ("x", "field contract is a string, not an object"),
}


@pytest.mark.parametrize("key", sorted(HEADER_ODD))
def test_a_header_of_the_wrong_shape_is_skipped(tmp_path: Path, key: str) -> None:
    value, message = HEADER_ODD[key]
    hdr = {**_header(), key.split(".")[0]: value}
    path = _history(tmp_path, attempt("b"), hdr)
    report = compute_files([path])
    render_table(report)
    assert f"{path}:1: run header skipped: {message}" in [str(w) for w in report.warnings]
    assert sum(g.attempted for g in report.groups) == 4
    assert f"{path}:1: run header skipped: {message}" in load_report(path)["warnings"]


def test_the_tui_detail_refuses_a_record_it_cannot_show(tmp_path: Path) -> None:
    path = _history(tmp_path, _set(_failing(), "judgement.errors", ["x", 1, None]))
    offset = len(path.read_bytes().split(b"\n")[0]) + 1
    offset += len(path.read_bytes().split(b"\n")[1]) + 1
    with pytest.raises(ValueError, match=r"judgement\.errors holds an item that is not an object"):
        read_record(str(path), offset)


# the fields a History facet holds (index.FACET_NAMES): an object or a list there is no
# value to filter by, so the line is skipped and named like any other field problem
NAMES = ("run_id", "provider", "model", "case_id", "mode", "feedback", "category")
FACET_FIELDS = {**dict.fromkeys(NAMES, "a string"), "stream": "true or false"}
HOSTILE = {"object": {"a": [1]}, "array": [1, {"b": 2}]}


def _facet_history(tmp_path: Path, key: str, kind: str) -> Path:
    odd = attempt("b") | {"stream": False, "feedback": "hint"}
    odd[key] = HOSTILE[kind]
    return _history(tmp_path, odd)


@pytest.mark.parametrize("kind", sorted(HOSTILE))
@pytest.mark.parametrize("key", sorted(FACET_FIELDS))
def test_a_facet_field_that_is_an_object_or_a_list_is_skipped_by_every_reader(
    tmp_path: Path, key: str, kind: str
) -> None:
    path = _facet_history(tmp_path, key, kind)
    want = f"{path}:3: attempt skipped: field {key} is an {kind}, not {FACET_FIELDS[key]}"
    seen = every_reader(path, tmp_path)
    for reader in ("report", "compare", "index"):
        assert want in seen[reader], reader
    assert f"warning: {want}; kept as is" in seen["rejudge"]
    for name, (_, warned) in report_paths(path).items():  # the line, cold and sidecar ways
        assert want in warned, name
    report = compute_files([path], index=True)
    assert sum(g.attempted for g in report.groups) == 3
    out = subprocess.run(
        [sys.executable, "-m", "toolstand", "report", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert f"warning: {want}" in out.stderr.splitlines()


def _spy(m: pytest.MonkeyPatch, owner: type, name: str, read: set[int]) -> None:
    """Note the line of each row ``owner.name`` gives."""
    way = getattr(owner, name)

    def spy(self: Any, *a: Any) -> Any:
        row = way(self, *a)
        if row is not None:
            read.add(row[5])
        return row

    m.setattr(owner, name, spy)


def _index_by(
    path: Path, way: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[HistoryIndex, set[int]]:
    """The index of ``path`` built the ``way`` given (quick, fast or slow) and the lines
    that way read."""
    read: set[int] = set()
    with monkeypatch.context() as m:
        if way == "slow":
            m.setattr(HistoryIndex, "_fast", lambda *a: None)
            m.setattr(HistoryIndex, "_learn_template", lambda self, row: None)
            slow = HistoryIndex._slow

            def spy_slow(self: HistoryIndex, line: bytes, pos: int) -> Any:
                row = slow(self, line, pos)
                read.add(self.lines)
                return row

            m.setattr(HistoryIndex, "_slow", spy_slow)
        elif way == "fast":
            m.setattr(HistoryIndex, "_learn_template", lambda self, row: None)
            _spy(m, HistoryIndex, "_fast", read)
        else:
            _spy(m, QuickPath, "row", read)
        ix = HistoryIndex(path)
        ix.update()
    return ix, read


@pytest.mark.parametrize("way", ["quick", "fast", "slow"])
@pytest.mark.parametrize("kind", sorted(HOSTILE))
@pytest.mark.parametrize("key", ["category", "stream", "feedback", "run_id"])
def test_every_way_of_the_index_skips_a_facet_field_of_the_wrong_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, kind: str, way: str
) -> None:
    # line 2 teaches the index its layout, line 3 the quick path its template: line 5
    # is read the way asked for
    recs = [header(), *(attempt("a", n) | {"stream": False} for n in (1, 2, 3, 4))]
    odd = recs[4] | {key: HOSTILE[kind]}
    lines = [orjson.dumps(in_key_order(r)) for r in (*recs[:4], odd, recs[4])]
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    ix, read = _index_by(path, way, monkeypatch)
    want = f"field {key} is an {kind}, not {FACET_FIELDS[key]}"
    assert [(w.line, w.message) for w in ix.warnings] == [(5, f"attempt skipped: {want}")]
    if key != "feedback":  # a feedback of the wrong type sends the line the slow way
        assert 5 in read, f"the {way} way did not read the line"
    assert ix.rows == 4 and ix.value("category", 3) == "positive"
    assert (5, sum(len(x) + 1 for x in lines[:4])) in ix.report.odd  # the report reads it
