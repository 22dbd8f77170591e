"""A history the OS refuses to write (read-only, a full disk, a file-size limit) ends the
run with one line naming the file and the OS error, exit 2, never a traceback; every
line already written stays, and --resume completes the run."""

from __future__ import annotations

import errno
import io
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.runs import assert_exact_matrix, config_data, read, sim
from toolstand.cli import main
from toolstand.run.runner import load_inputs
from toolstand.spec.config import load_config


def write_config(tmp_path: Path, **extra: Any) -> Path:
    cfg = tmp_path / "config.json"
    cfg.write_bytes(orjson.dumps(config_data([sim("sim-careful", "openai-chat")], **extra)))
    return cfg


class FullDisk(io.BytesIO):
    """A file on a full disk: every flush is ENOSPC (/dev/full is a device, which is
    no history: issue 31, M12)."""

    def flush(self) -> None:
        if self.getbuffer().nbytes:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run.jsonl"
    real_open = Path.open

    def open_(self: Path, mode: str = "r", *args: Any, **kw: Any) -> Any:
        return FullDisk() if self == out and mode == "ab" else real_open(self, mode, *args, **kw)

    monkeypatch.setattr(Path, "open", open_)
    assert main(["run", "--config", str(write_config(tmp_path)), "--output", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"{out}: $: cannot write: ENOSPC: No space left on device; the lines already written "
        "are kept"
    ]


def test_a_read_only_output_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run.jsonl"
    real_open = Path.open

    def read_only(self: Path, mode: str = "r", *args: Any, **kw: Any) -> Any:
        if self == out and "a" in mode:  # tests run as root, where chmod would not bite
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_open(self, mode, *args, **kw)

    monkeypatch.setattr(Path, "open", read_only)
    assert main(["run", "--config", str(write_config(tmp_path)), "--output", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"{out}: $: cannot write: EACCES: Permission denied; the lines already written are kept"
    ]


def limit_file_size() -> None:
    """In the child: files may not grow past 40 kB, and passing it is an error, not a kill."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))


def test_a_file_size_limit_mid_run_keeps_every_line_and_resume_completes(
    tmp_path: Path,
) -> None:
    cfg = write_config(tmp_path, repetitions=3, parallelism=4)
    out = tmp_path / "run.jsonl"
    cmd = [sys.executable, "-m", "toolstand", "run", "--config", str(cfg), "--output", str(out)]
    first = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, preexec_fn=limit_file_size
    )
    assert first.returncode == 2, first.stderr
    assert "Traceback" not in first.stderr
    assert first.stderr.strip().splitlines()[-1] == (
        f"{out}: $: cannot write: EFBIG: File too large; the lines already written are kept "
        "(make room or fix the file, then --resume completes the run)"
    )
    data = out.read_bytes()
    whole = data[: data.rfind(b"\n") + 1]
    kept = [orjson.loads(line) for line in whole.splitlines()]  # every whole line parses
    assert 0 < sum(r["type"] == "attempt" for r in kept) < 3 * 32

    again = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert out.read_bytes().startswith(whole)  # nothing written before was touched
    _, attempts = read(out)
    assert_exact_matrix(load_inputs(load_config(cfg), str(cfg)), attempts)
