"""Issue 13, item 2 (the report's part): a group holding more attempts than the run
header's matrix plans (cases × repetitions per run and mode) is warned of, never
counted silently. A real run against the simulator writes the header."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import orjson
import pytest

from tests.support.runs import go, make_inputs, sim
from toolstand.reporting.commands import cmd_report
from toolstand.reporting.formats import WIDTH
from toolstand.reporting.metrics import compute_files


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """32 cases × 2 repetitions of one model in auto and no_tools: 64 slots a mode."""
    out = tmp_path_factory.mktemp("matrix") / "run.jsonl"
    inputs = make_inputs(
        [sim("sim-careful", "openai-chat")], repetitions=2, modes=["auto", "no_tools"]
    )
    go(inputs, out)
    return out


def test_a_whole_run_fits_its_matrix(history: Path) -> None:
    report = compute_files([history])
    assert [(g.mode, g.attempted, g.slots) for g in report.groups] == [
        ("auto", 64, 64),
        ("no_tools", 64, 64),
    ]
    assert report.warnings == []


def test_lines_written_twice_are_warned_of(history: Path, tmp_path: Path) -> None:
    lines = history.read_bytes().splitlines(keepends=True)
    auto = [ln for ln in lines if b'"mode":"auto"' in ln]
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_bytes(b"".join(lines) + b"".join(auto[:59]))  # a second writer's 59 lines
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cmd_report([str(doubled)], False, None, None, out=out) == 0
    message = (
        "sim/sim-careful/auto: 123 attempts (123 scored), but the run headers' matrix"
        " (cases × repetitions) plan 64; are some counted twice?"
    )
    assert f"warning: {doubled}: {message}" in err.getvalue().splitlines()
    text = out.getvalue()
    assert "  ! sim/sim-careful/auto: 123 attempts (123 scored), but the run headers'" in text
    # the summary line is cut to the report's width, wherever the test's files live
    assert text.splitlines()[2] == f"1 warning(s): {doubled}: {message}"[:WIDTH]
    report = orjson.loads(_json(doubled))
    assert [(r["mode"], r["attempted"], r["planned"]) for r in report["results"]] == [
        ("auto", 123, 64),
        ("no_tools", 64, 64),
    ]
    assert report["warnings"] == [f"{doubled}: {message}"]


def test_the_same_run_under_two_names_is_warned_of(history: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    shutil.copy(history, copy)
    report = compute_files([history, copy])
    assert [g.slots for g in report.groups] == [64, 64]  # one run_id: planned once
    assert len(report.warnings) == 2


def test_a_resumed_run_and_two_runs_are_not(history: Path, tmp_path: Path) -> None:
    lines = history.read_bytes().splitlines(keepends=True)
    head = orjson.loads(lines[0])
    resumed = tmp_path / "resumed.jsonl"
    resumed.write_bytes(b"".join(lines[:40]) + orjson.dumps({**head, "resumed": True}) + b"\n")
    resumed.write_bytes(resumed.read_bytes() + b"".join(lines[40:]))
    assert compute_files([resumed]).warnings == []
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"".join(ln.replace(head["run_id"].encode(), b"another-run") for ln in lines))
    report = compute_files([history, other])
    assert [(g.attempted, g.slots) for g in report.groups] == [(128, 128), (128, 128)]
    assert report.warnings == []


def test_a_file_without_a_header_is_held_to_no_matrix(history: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare.jsonl"
    bare.write_bytes(b"".join(history.read_bytes().splitlines(keepends=True)[1:]))
    report = compute_files([history, bare])
    assert [g.slots for g in report.groups] == [None, None]
    assert report.warnings == []


def _json(path: Path) -> str:
    out = io.StringIO()
    cmd_report([str(path)], True, None, None, out=out)
    return out.getvalue()
