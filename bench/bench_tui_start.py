"""The CPU an app start costs once the imports are done, as the TUI tests pay it.

Not a test: it prints numbers measured in one run. Usage:

    .venv/bin/python bench/bench_tui_start.py --before DIR [--starts 20] [--mode cases]

Each test of tests/tui starts an app in a process that has imported everything already
(``run_test``, the screen composed, one pause), so what a start costs there is Textual's
work on our widgets, not the imports. ``bench_tui.py`` times the first paint of a fresh
process; this one times starts in a warm process: one worker process per ``src/`` (this
checkout's and ``--before``, e.g. ``git archive <commit> src | tar -x -C DIR``), each
given the tests' set-up (no screen built ahead, the Cases form composed with its
screen), warmed by one start, then asked for one start at a time, the two in turn, so
both see the same machine load. Each start is timed as that worker's CPU time (user +
sys, threads included); the table gives the mean and median per start of each and their
ratio, the ratio's median over the pairs too (a pair is one start of each, back to back:
the steadiest figure on a shared machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support: the project copy the TUI tests use
from tests.support.project_copy import copy_project  # noqa: E402

# run by each worker: reads a line per start from stdin, answers the start's CPU seconds
WORKER = """
import asyncio, gc, os, sys
from pathlib import Path
from toolstand.tui.app import ToolstandApp, make_app
from toolstand.tui.widgets.case_form import CaseForm

ToolstandApp.BUILT_AHEAD = ()  # as tests/tui/conftest.py sets them
CaseForm.BUILT_LATER = False
root, mode, width, height = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def cpu():
    t = os.times()
    return t.user + t.system


async def start():
    app = make_app(root=root, start_mode=mode)
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.pause()


async def main():
    await start()
    print("ready", flush=True)
    for _ in sys.stdin:
        gc.collect()  # the last start's garbage is not this one's to collect
        before = cpu()
        await start()
        print(cpu() - before, flush=True)


asyncio.run(main())
"""


def _worker(src: Path, project: Path, args: argparse.Namespace) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, "-c", WORKER, str(project), args.mode, *map(str, args.size)]
    worker = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=project
    )
    assert worker.stdout is not None
    if worker.stdout.readline().strip() != "ready":
        raise SystemExit(f"the worker over {src} did not start")
    return worker


def _start(worker: subprocess.Popen[str]) -> float:
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write("\n")
    worker.stdin.flush()
    return float(worker.stdout.readline())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="another checkout's src/")
    parser.add_argument("--starts", type=int, default=20, help="starts of each (default 20)")
    parser.add_argument("--mode", default="cases", help="the screen started on")
    parser.add_argument("--size", type=int, nargs=2, default=(120, 40), metavar=("W", "H"))
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} at start; {args.mode} at {args.size}")
    with tempfile.TemporaryDirectory() as tmp:
        srcs = {"this": ROOT / "src", "before": args.before.resolve()}
        workers = {k: _worker(s, copy_project(Path(tmp) / k), args) for k, s in srcs.items()}
        cpu: dict[str, list[float]] = {k: [] for k in workers}
        order = list(workers)
        for i in range(args.starts):
            for name in order if i % 2 == 0 else order[::-1]:  # who goes first alternates
                cpu[name].append(_start(workers[name]))
        for worker in workers.values():
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait()
    this, before = cpu["this"], cpu["before"]
    print(f"{'CPU s per start':<16}{'mean':>8}{'median':>8}")
    for name, values in cpu.items():
        print(f"{name:<16}{statistics.mean(values):8.3f}{statistics.median(values):8.3f}")
    pairs = [a / b for a, b in zip(this, before, strict=True)]
    print(
        f"ratio this/before: of the means {statistics.mean(this) / statistics.mean(before):.3f}, "
        f"median over the pairs {statistics.median(pairs):.3f}"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
