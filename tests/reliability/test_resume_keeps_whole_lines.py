"""Issue 31, M15: --resume never cuts a complete record that only lacks its newline,
and resuming a header-only file keeps its header and run_id."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.support.runs import go, make_inputs, read, sim
from toolstand.history.write import repair_tail

ONLY = {"direct_lookup", "missing_id"}


def _inputs() -> object:
    return make_inputs([sim("sim-careful", "openai-chat")], repetitions=2, modes=["auto"])


def test_a_last_record_without_its_newline_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    inputs = _inputs()
    first = go(inputs, out, only=ONLY)  # type: ignore[arg-type]
    assert first.written == 4
    whole = out.read_bytes()
    out.write_bytes(whole[:-1])  # the last record, complete, without its "\n"
    again = go(inputs, out, only=ONLY, resume=True)  # type: ignore[arg-type]
    assert (again.written, again.skipped) == (0, 4)
    assert out.read_bytes().startswith(whole)  # every byte of it kept
    headers, attempts = read(out)
    assert len(attempts) == 4 and len({h["run_id"] for h in headers}) == 1


def test_a_header_only_file_keeps_its_header_and_run_id(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    inputs = _inputs()
    go(inputs, out, only={"direct_lookup"})  # type: ignore[arg-type]
    header = out.read_bytes().split(b"\n")[0]
    out.write_bytes(header)  # just the header, no newline
    go(inputs, out, only={"direct_lookup"}, resume=True)  # type: ignore[arg-type]
    headers, attempts = read(out)
    assert out.read_bytes().startswith(header + b"\n")
    assert {h["run_id"] for h in headers} == {orjson.loads(header)["run_id"]}
    assert len(attempts) == 2


def test_a_torn_last_line_is_still_cut(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'{"type": "run"}\n{"type": "attempt", "case')
    assert repair_tail(path) is True
    assert path.read_bytes() == b'{"type": "run"}\n'
    path.write_bytes(b'{"type": "run"}\n[1, 2]')  # JSON, but no record: cut
    assert repair_tail(path) is True and path.read_bytes() == b'{"type": "run"}\n'
