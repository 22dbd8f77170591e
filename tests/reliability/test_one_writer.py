"""One writer per history: a second `toolstand run` on the same --output, or a --resume
while the first still writes, is refused at once, naming the holder's pid; the history
keeps one header and each attempt once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import orjson
import pytest

from tests.support.runs import config_data, sim
from toolstand.history.keep import IndexedWriter
from toolstand.history.lock import HistoryBusy, HistoryLock, lock_path
from toolstand.history.write import JsonlWriter, attempt_key


def wait_for_holder(history: Path, proc: subprocess.Popen[bytes]) -> None:
    """Until ``proc`` holds the history's lock and has written its header (there is no
    event to wait on in another process: poll the files)."""
    lock = lock_path(history)
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        held = lock.exists() and lock.read_text().strip() == str(proc.pid)
        if held and history.exists() and history.read_bytes().count(b"\n") >= 1:
            return
        time.sleep(0.01)
    raise AssertionError(f"the first run never held the lock (exit {proc.poll()})")


def test_a_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    # the first run holds the history until it is killed: every answer takes a minute,
    # so however slowly the machine starts the other three, it is still writing
    data = config_data(
        [sim("sim-careful", "openai-chat")],
        sim={"latency_s": 60},
        timeouts={"connect_s": 10, "read_s": 120},
    )
    cfg.write_bytes(orjson.dumps(data))
    out = tmp_path / "run.jsonl"
    cmd = [sys.executable, "-m", "toolstand", "run", "--config", str(cfg), "--output", str(out)]
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_holder(out, first)
        for extra in (["--resume"], [], ["--resume", "--resume-anyway"]):
            second = subprocess.run([*cmd, *extra], capture_output=True, text=True, timeout=60)
            assert second.returncode == 2, (extra, second.stderr)
            lines = second.stderr.strip().splitlines()
            assert len(lines) == 1, (extra, second.stderr)
            assert f"another toolstand (pid {first.pid}) is writing this history" in lines[0]
            assert lines[0].startswith(f"{out}: ")
        assert first.poll() is None  # refused while the holder was still writing
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    recs = [orjson.loads(x) for x in out.read_bytes().split(b"\n")[:-1]]
    assert [r["type"] for r in recs].count("run") == 1
    keys = Counter(attempt_key(r) for r in recs if r["type"] == "attempt")
    assert not keys or max(keys.values()) == 1
    # a killed holder leaves no lock behind: the next writer gets it at once
    with HistoryLock(out):
        pass


def test_writers_in_one_process_exclude_each_other_too(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    with JsonlWriter(path) as w:
        w.write({"type": "run", "run_id": "a"})
        with pytest.raises(HistoryBusy) as refused:
            IndexedWriter(path)
        assert refused.value.pid == str(os.getpid())
        assert lock_path(path).read_text() == f"{os.getpid()}\n"
    assert lock_path(path).read_text() == ""  # released, and says so
    with JsonlWriter(path) as w:  # free again
        w.write({"type": "run", "run_id": "b"})
    assert path.read_bytes().count(b"\n") == 2


def test_every_spelling_of_a_path_is_one_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    with HistoryLock(Path("runs/x.jsonl")), pytest.raises(HistoryBusy):
        HistoryLock(tmp_path / "runs" / ".." / "runs" / "x.jsonl").acquire()


async def test_the_tuis_live_appends_take_the_same_lock(tmp_path: Path) -> None:
    from toolstand.tui.model.live import LiveSession, live_path
    from toolstand.tui.model.project import load_project

    cfg = tmp_path / "config.json"
    cfg.write_bytes(orjson.dumps(config_data([sim("sim-careful", "openai-chat")])))
    project = load_project(tmp_path, str(cfg))
    session = LiveSession(project)
    try:
        case = project.casefile.by_id()["direct_lookup"]
        state = await session.first(0, case, "auto")
        target = live_path(project.runs_dir, session.today())
        with HistoryLock(target), pytest.raises(HistoryBusy):
            session.append(state)  # e.g. `toolstand run --output runs/live-<today>.jsonl`
        assert not target.exists() or b'"type":"attempt"' not in target.read_bytes()
        path, _ = session.append(state)
        assert path == target and target.read_bytes().count(b'"type":"attempt"') == 1
    finally:
        await session.close()
