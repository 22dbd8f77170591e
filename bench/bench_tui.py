"""The TUI's own speed, driven by Pilot: first paint, screen switches, the template modal.

Not a test: it prints numbers measured in one run. Usage:

    .venv/bin/python bench/bench_tui.py [--rounds 5] [--src DIR]

``--src`` puts another checkout's ``src/`` first on the path (e.g. the code before a
change, from ``git archive``), so before and after are measured by the same script on
the same machine. Each step is timed as wall time and as this process's CPU time (the
app runs in it; CPU barely moves with the machine's load, wall does), over ``--rounds``
fresh apps on a private copy of the project; p50 and p95 of each.

- first paint: ``run_test`` entered, the Cases list filled;
- F2, F3, F4, F1: the key pressed until the screen is current and its workers settled;
- the template modal: ctrl+n until it shows, escape until it is gone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SIZE = (80, 24)


def _project(into: Path) -> Path:
    for folder in ("cases", "contracts", "prompts"):
        shutil.copytree(ROOT / folder, into / folder)
    shutil.copy(ROOT / "config.example.json", into / "config.example.json")
    (into / "runs").mkdir()
    return into


async def _timed(
    out: dict[str, list[tuple[float, float]]], name: str, step: Awaitable[Any]
) -> None:
    cpu, wall = time.process_time(), time.perf_counter()
    await step
    out.setdefault(name, []).append((time.perf_counter() - wall, time.process_time() - cpu))


async def _settled(pilot: Any, check: Callable[[], bool]) -> None:
    from textual.worker import WorkerCancelled, WorkerFailed

    for _ in range(500):
        with contextlib.suppress(WorkerFailed, WorkerCancelled):
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if check():
            return
    raise RuntimeError("the app never got there")


async def one_round(root: Path, out: dict[str, list[tuple[float, float]]]) -> None:
    from toolstand.tui.app import make_app

    cpu, wall = time.process_time(), time.perf_counter()
    app = make_app(root=root)
    async with app.run_test(size=SIZE) as pilot:

        def mode_is(name: str) -> Callable[[], bool]:
            return lambda: type(app.screen).__name__ == name

        await _settled(pilot, mode_is("CasesScreen"))
        out.setdefault("first paint", []).append(
            (time.perf_counter() - wall, time.process_time() - cpu)
        )
        for key, name in (("f2", "RunScreen"), ("f3", "HistoryScreen"), ("f4", "ReportScreen"),
                          ("f1", "CasesScreen")):  # fmt: skip

            async def switch(key: str = key, name: str = name) -> None:
                await pilot.press(key)
                await _settled(pilot, mode_is(name))

            await _timed(out, f"switch {key.upper()} (first)", switch())
        for key, name in (("f2", "RunScreen"), ("f1", "CasesScreen")):

            async def again(key: str = key, name: str = name) -> None:
                await pilot.press(key)
                await _settled(pilot, mode_is(name))

            await _timed(out, f"switch {key.upper()} (again)", again())

        async def modal_open() -> None:
            await pilot.press("ctrl+n")
            await _settled(pilot, mode_is("TemplateModal"))

        async def modal_close() -> None:
            await pilot.press("escape")
            await _settled(pilot, mode_is("CasesScreen"))

        await _timed(out, "template modal open", modal_open())
        await _timed(out, "template modal close", modal_close())


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--src", help="a checkout's src/ to measure instead of this one")
    args = parser.parse_args()
    if args.src:
        sys.path.insert(0, os.path.abspath(args.src))
    import toolstand

    print(f"code: {Path(toolstand.__file__).parent}  load: {os.getloadavg()[0]:.2f}")
    out: dict[str, list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(one_round(_project(Path(tmp)), out))
    print(
        f"{'step':28} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>9} {'cpu p95':>9}  (ms, {args.rounds} rounds)"
    )
    for name, pairs in out.items():
        walls, cpus = [w * 1000 for w, _ in pairs], [c * 1000 for _, c in pairs]
        print(f"{name:28} {statistics.median(walls):9.0f} {_p(walls, 0.95):9.0f} "
              f"{statistics.median(cpus):9.0f} {_p(cpus, 0.95):9.0f}")  # fmt: skip
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
