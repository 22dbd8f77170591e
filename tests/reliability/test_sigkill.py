"""`toolstand run` killed with SIGKILL at random points, eight wide, several personas
(flaky among them), then completed with --resume: exactly the matrix, no duplicate,
no torn line, one run_id, and every line that was on disk at a kill still there."""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from tests.support.runs import (
    assert_exact_matrix,
    complete_lines,
    config_data,
    make_inputs,
    read,
    sim,
    wait_for_lines,
)
from toolstand.run.runner import load_inputs, plan, run
from toolstand.spec.config import load_config
from toolstand.types import AttemptRecord

SEED = 20261130
RUNS = [
    sim("sim-careful", "openai-chat"),
    sim("sim-flaky", "anthropic"),
    sim("sim-eager", "gemini"),
    sim("sim-sloppy", "openai-responses"),
    sim("sim-flaky", "openai-chat"),
]


def test_sigkill_at_random_points_then_resume(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    cfg = tmp_path / "config.json"
    data = config_data(
        RUNS,
        repetitions=3,  # 480 attempts: more than eight kills can see written
        parallelism=8,
        modes=["auto"],
        retry={"max_retries": 2, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 5},
        timeouts={"connect_s": 2, "read_s": 0.3},
        sim={"seed": 3, "latency_s": 0.02, "retry_after_s": 0.01},
    )
    cfg.write_bytes(orjson.dumps(data))
    inputs = load_inputs(load_config(cfg), str(cfg))
    out = tmp_path / "run.jsonl"
    cmd = [sys.executable, "-m", "toolstand", "run", "--config", str(cfg), "--output", str(out)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")

    on_disk: list[bytes] = []  # every whole line seen after a kill
    mid_run_kills = 0
    for trial in range(8):
        before = len(complete_lines(out))
        args = cmd + (["--resume"] if out.exists() else [])
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        wait_for_lines(out, before + rng.randint(1, 50), proc)
        time.sleep(rng.uniform(0, 0.05))  # land anywhere between two writes
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            mid_run_kills += proc.wait() == -signal.SIGKILL
        assert proc.stderr is not None
        stderr = proc.stderr.read().decode()
        proc.stderr.close()
        assert proc.returncode in (0, -signal.SIGKILL), (trial, stderr)
        lines = complete_lines(out)
        assert lines[:before] == on_disk  # nothing finished was lost or rewritten
        # an attempt the progress line counted as done was already on disk
        reported = [int(m) for m in re.findall(r"\[(\d+)/\d+\]", stderr)]
        appended = sum(b'"type":"attempt"' in line for line in lines[before:])
        assert appended >= max(reported, default=0), (trial, reported, appended)
        on_disk = lines
    assert mid_run_kills >= 6, "the kills must land while the run is writing"
    attempts_at_kill = sum(b'"type":"attempt"' in line for line in on_disk)
    assert 0 < attempts_at_kill < len(RUNS) * 32 * 3

    # a kill in the middle of a write leaves half a line: the next resume must cut it
    torn = on_disk[-1][: len(on_disk[-1]) // 2]
    with out.open("ab") as fh:
        fh.write(torn)
    final = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, env=env, timeout=120)
    assert final.returncode == 0, final.stderr
    assert "cut a torn last line" in final.stderr
    assert f"({attempts_at_kill} already there)" in final.stderr

    data_out = out.read_bytes()
    assert data_out.endswith(b"\n") and torn + b"\n" not in data_out
    headers, attempts = read(out)  # every line parses: no torn line anywhere
    assert_exact_matrix(inputs, attempts)
    assert len(attempts) == len(RUNS) * 32 * 3
    assert len({r["run_id"] for r in [*headers, *attempts]}) == 1
    assert headers[0]["resumed"] is False and len(headers) >= 2
    # every whole line on disk at the last kill is still there, byte for byte, in place
    assert data_out.split(b"\n")[: len(on_disk)] == on_disk


def test_each_record_is_on_disk_when_its_attempt_ends(tmp_path: Path) -> None:
    """What makes a kill harmless: by the time the runner reports an attempt done, its
    whole line is in the file (read back through another file handle)."""
    inputs = make_inputs(RUNS[:2], parallelism=8, sim={"fault_rates": {"reset": 0.3}})
    out = tmp_path / "run.jsonl"
    checked: list[str] = []

    def on_record(rec: AttemptRecord) -> None:
        last = out.read_bytes().split(b"\n")[-2]  # the last whole line
        assert orjson.loads(last) == orjson.loads(orjson.dumps(rec))
        checked.append(rec["case_id"])

    asyncio.run(run(inputs, out, progress_out=None, on_record=on_record))
    assert len(checked) == len(plan(inputs)) == 2 * 32
