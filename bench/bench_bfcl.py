"""BFCL end to end: import all eleven categories, check them, run sim-careful over them,
report. Each step is its own `toolstand` process; its wall time and peak RSS are read
from the kernel (wait4). Not a test: it prints what it measured.

    .venv/bin/python bench/bench_bfcl.py [WHEEL]   # default: .cache/bfcl/ (make bfcl-wheel)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
WHEEL = ROOT / ".cache" / "bfcl" / "bfcl_eval-2026.3.23-py3-none-any.whl"
TOOLSTAND = [sys.executable, "-m", "toolstand"]


def step(name: str, args: list[str]) -> tuple[float, float, str]:
    """Run one command; (wall seconds, peak RSS in MB, its stderr's last line)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*TOOLSTAND, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    last = (err.strip().splitlines() or [""])[-1]
    print(
        f"  {name:<8} {wall:7.1f} s   peak RSS {usage.ru_maxrss / 1024:6.0f} MB   exit {proc.returncode}"
    )
    print(f"           {last[:150]}")
    return wall, usage.ru_maxrss / 1024, last


def main() -> None:
    wheel = Path(sys.argv[1]) if len(sys.argv) > 1 else WHEEL
    if not wheel.is_file():
        sys.exit(f"no wheel at {wheel}: run `make bfcl-wheel` or give its path")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average {load} at start")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bfcl"
        history = Path(tmp) / "bfcl.jsonl"
        step("import", ["import", "bfcl", str(wheel), "--out", str(out)])
        step(
            "check",
            ["check", "--quiet", "--tools", str(out / "contract.json"), "--cases", str(out)],
        )
        step("run", ["run", "--config", str(out / "config.json"), "--output", str(history)])
        step("report", ["report", str(history)])
        attempts = [
            r
            for r in map(orjson.loads, history.read_bytes().splitlines())
            if r["type"] == "attempt"
        ]
        failed = sorted(r["case_id"] for r in attempts if r["judgement"]["verdict"] != "pass")
        print(
            f"  {len(attempts)} attempts, {len(attempts) - len(failed)} pass; failed: {', '.join(failed)}"
        )


if __name__ == "__main__":
    main()
