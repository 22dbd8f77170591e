"""Issue 31, H5, M12 and L6: the one-writer lock is the file's, however its path is
spelled; only a regular file (or a new one) is a history; the output path is shown
with its control characters spelled out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.runs import go, make_inputs, sim
from toolstand.history.lock import HistoryBusy, HistoryLock
from toolstand.history.sidecar import sidecar_path
from toolstand.util.problems import LoadError


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "real" / "run.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"")
    return path


def _spellings(history: Path, tmp_path: Path) -> list[Path]:
    (tmp_path / "sym.jsonl").symlink_to(history)
    os.link(history, tmp_path / "hard.jsonl")
    (tmp_path / "dirlink").symlink_to(history.parent)
    return [
        tmp_path / "sym.jsonl",
        tmp_path / "hard.jsonl",
        tmp_path / "dirlink" / "run.jsonl",
        tmp_path / "real" / ".." / "real" / "run.jsonl",
    ]


def test_every_spelling_of_a_history_meets_one_lock(history: Path, tmp_path: Path) -> None:
    others = _spellings(history, tmp_path)
    with HistoryLock(history):
        for other in others:
            with pytest.raises(HistoryBusy):
                HistoryLock(other).acquire()
    for other in others:  # and each spelling, held, keeps the real name out too
        with HistoryLock(other), pytest.raises(HistoryBusy):
            HistoryLock(history).acquire()
    with HistoryLock(history):  # released every time: it can be taken again
        pass


def test_a_hard_link_is_named_as_such(history: Path, tmp_path: Path) -> None:
    os.link(history, tmp_path / "hard.jsonl")
    with HistoryLock(history), pytest.raises(HistoryBusy) as info:
        HistoryLock(tmp_path / "hard.jsonl").acquire()
    assert "another name of the same file" in str(info.value.problems[0])


def test_the_sidecar_of_a_symlinked_history_is_the_real_files(
    history: Path, tmp_path: Path
) -> None:
    (tmp_path / "sym.jsonl").symlink_to(history)
    assert sidecar_path(tmp_path / "sym.jsonl") == sidecar_path(history)
    assert sidecar_path(history).parent == history.parent / ".index"


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_only_a_regular_file_is_a_history(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        target = tmp_path / "pipe"
        os.mkfifo(target)
        said = "is a FIFO; a history is a regular file"
    elif kind == "folder":
        target = tmp_path
        said = "is a folder; give the history a file name"
    else:
        target = Path("/dev/null")
        said = "is a device; a history is a regular file"
    with pytest.raises(LoadError) as info:
        HistoryLock(target).acquire()
    assert said in str(info.value.problems[0])
    assert not Path("/dev/.index").exists()
    # and `run` refuses it the same way, at once (a FIFO would hang in open())
    inputs = make_inputs([sim("sim-careful", "openai-chat")])
    with pytest.raises(LoadError) as info:
        go(inputs, target, only={"direct_lookup"})
    assert said in str(info.value.problems[0])


def test_the_run_summary_spells_an_odd_output_name(tmp_path: Path) -> None:
    out = tmp_path / "odd\x1b[31mname.jsonl"
    summary = go(make_inputs([sim("sim-careful", "openai-chat")]), out, only={"direct_lookup"})
    line = summary.line()
    assert "\x1b" not in line and "odd\\x1b[31mname.jsonl" in line
