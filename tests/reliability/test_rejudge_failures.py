"""`toolstand rejudge` on odd or failing input: one-line errors, exit 2, and never a
partial output (it is written to a temp file and renamed only when complete)."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.runs import config_data, sim
from toolstand.cli import main
from toolstand.history.lock import HistoryLock


@pytest.fixture
def history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    cfg = tmp_path / "config.json"
    cfg.write_bytes(orjson.dumps(config_data([sim("sim-careful", "openai-chat")])))
    out = tmp_path / "runs" / "run.jsonl"
    args = ["run", "--config", str(cfg), "--output", str(out), "--only", "direct_lookup,missing_id"]
    assert main(args) == 0
    capsys.readouterr()
    return out


def err_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


def test_a_second_bare_run_line_is_kept_not_fatal(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with history.open("ab") as fh:
        fh.write(b'{"type":"run"}\n')
    new = tmp_path / "new.jsonl"
    assert main(["rejudge", str(history), "--output", str(new)]) == 0
    recs = [orjson.loads(x) for x in new.read_bytes().splitlines()]
    assert [r["type"] for r in recs] == ["run", "attempt", "attempt", "run"]
    assert set(recs[-1]["contract"]) == {"hash_now"}
    assert recs[0]["contract"]["hash_now"] == recs[0]["contract"]["hash"]


def test_a_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = tmp_path / "new.jsonl"
    assert main(["rejudge", str(tmp_path), "--output", str(new)]) == 2
    assert err_lines(capsys) == [f"{tmp_path}: $: cannot read: EISDIR: Is a directory"]
    assert not new.exists()


def test_a_header_naming_no_contract_asks_for_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "bare.jsonl"
    source.write_bytes(b'{"type":"run","run_id":"r"}\n')
    new = tmp_path / "new.jsonl"
    assert main(["rejudge", str(source), "--output", str(new)]) == 2
    assert err_lines(capsys) == [
        f"{source}: $.contract.path: the run header names no file; give --tools"
    ]
    assert not new.exists()


def test_a_failed_write_leaves_no_partial_output(history: Path, tmp_path: Path) -> None:
    limit = history.stat().st_size // 2  # the new file cannot grow past half the old one

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out_dir = tmp_path / "out"
    out_dir.mkdir()
    new = out_dir / "new.jsonl"
    cmd = [sys.executable, "-m", "toolstand", "rejudge", str(history), "--output", str(new)]
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=60, preexec_fn=limit_file_size
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"{new}: $: cannot write: EFBIG: File too large; nothing was written"
    ]
    assert sorted(p.name for p in out_dir.iterdir()) == [".index"]  # no output, no temp file


def test_an_output_another_writer_holds_is_refused(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "new.jsonl"
    with HistoryLock(new):
        assert main(["rejudge", str(history), "--output", str(new)]) == 2
    (line,) = err_lines(capsys)
    assert "is writing this history" in line
    assert not new.exists()


def test_an_attempt_it_cannot_read_is_kept_with_a_warning(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare: dict[str, Any] = {"type": "attempt", "case_id": "direct_lookup", "response": {}}
    # every field a reader needs, but a stored response no adapter can re-parse
    first = next(
        orjson.loads(x) for x in history.read_bytes().splitlines() if b'"attempt"' in x[:20]
    )
    odd = {**first, "response": "not a response"}
    with history.open("ab") as fh:
        fh.write(orjson.dumps(bare) + b"\n" + orjson.dumps(odd) + b"\n")
    new = tmp_path / "new.jsonl"
    assert main(["rejudge", str(history), "--output", str(new)]) == 0
    kept = [orjson.loads(x) for x in new.read_bytes().splitlines()[-2:]]
    assert kept == [bare, odd]
    err = capsys.readouterr().err
    assert "attempt skipped: missing field" in err
    assert "an attempt toolstand cannot re-judge (" in err
