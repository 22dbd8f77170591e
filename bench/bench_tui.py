"""The TUI's own speed, driven by Pilot: first paint, F1–F4, promote, rerun, the template modal.

Not a test: it prints numbers measured in one run. Usage:

    .venv/bin/python bench/bench_tui.py [--rounds 5] [--before DIR]

Each round is a fresh Python process (so first paint includes the imports, as a user
sees it) on a private copy of the project with a small history in runs/. ``--before``
names another checkout's ``src/`` (e.g. the code before a change, from
``git archive <commit> src | tar -x -C DIR``): its rounds alternate with this code's,
so both see the same machine load, and the table gives both and their ratio. Each
``src/`` is byte-compiled before the rounds, and so are the packages of this Python's
site-packages (Textual, Rich, pydantic): an installed toolstand and its dependencies
start from their bytecode (pip writes it at install, Python at the first start), while
with PYTHONDONTWRITEBYTECODE set and a venv built by uv (which writes none) every round
compiled Textual and Rich again, some 0.35 s of a 0.85 s first paint that no user pays.
``--no-bytecode`` leaves them all as they are.

Each step is timed as wall time and as the process's CPU time (the app runs in it; CPU
barely moves with the machine's load, wall does); p50 and p95 over the rounds:

- first paint: from the interpreter's start (its CPU, the parent's clock from spawning
  it) until the Cases list shows its cases;
- F2, F3, F4, F1 (first) and again: the key pressed until the screen is current, drawn,
  and its workers settled;
- template open / close: ctrl+n until the modal shows, escape until it is gone;
- promote: ``p`` on History's first row until Cases shows the new draft;
- rerun: ctrl+g on History's first row until the Run screen shows the live verdict.

"Until" is found without Pilot's idle waits: ``Pilot.press`` and ``Pilot.pause`` each
sleep in 20 ms slices until a slice passes with under 1 ms of CPU, which added 60 ms or
more to every step (a 20 ms switch read as 110 ms). Here the key is posted
(``App.simulate_key``), and the step ends at the first screen refresh after which the
check holds and no worker is pending or running (``Screen.call_after_refresh``: called
once every message is processed and the screen is drawn; before it, every node of the
screen has processed what it had queued), polled every millisecond.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import contextlib
import os
import site
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support: the project copy the TUI tests use
from tests.support.project_copy import copy_project  # noqa: E402

SIZE = (80, 24)
KEYS = (("f2", "RunScreen"), ("f3", "HistoryScreen"), ("f4", "ReportScreen"), ("f1", "CasesScreen"))
Timings = dict[str, list[tuple[float, float]]]  # step -> [(wall s, cpu s)]


def _cpu() -> float:
    """This process's CPU time since it started (interpreter start-up included), all its
    threads', to the microsecond (``os.times`` counts in 10 ms ticks)."""
    return time.process_time()


def _history(into: Path) -> Path:
    """A small run file written by ``toolstand run`` against the simulator."""
    project = copy_project(into / "make")
    out = project / "runs" / "bench.jsonl"
    subprocess.run(
        [sys.executable, "-m", "toolstand", "run", "--config", "config.example.json",
         "--only", "direct_lookup,missing_id", "--modes", "auto", "--repetitions", "1",
         "--output", str(out)],
        cwd=project, check=True, capture_output=True,
    )  # fmt: skip
    return out


def _idle(app: Any) -> bool:
    return all(w.is_finished for w in app.workers)


async def _until(app: Any, screen: Any, events: list[asyncio.Event]) -> None:
    # a screen popped meanwhile never answers: its nodes are closed
    while not all(e.is_set() for e in events) and app.screen is screen:
        await asyncio.sleep(0.001)


async def _refreshed(app: Any, with_app: bool = True) -> None:
    """Until every node of the current screen (and the app) has processed what it had
    queued, and then the screen has refreshed (``call_after_refresh``: run once its
    messages are processed and it is drawn); again while that mounted new widgets."""
    while True:
        screen = app.screen
        shown = screen.walk_children(with_self=True)
        # with_app=False: what the screen shows, not what the app does after it
        nodes = [app, *shown] if with_app else shown
        queued = []
        for node in nodes:
            event = asyncio.Event()
            if node.call_later(event.set):  # False: the node is closing
                queued.append(event)
        await _until(app, screen, queued)
        drawn = asyncio.Event()
        if screen.call_after_refresh(drawn.set):
            await _until(app, screen, [drawn])
        if app.screen is screen and len(screen.walk_children(with_self=True)) == len(shown):
            return


async def _settled(pilot: Any, check: Callable[[], bool]) -> None:
    """Until ``check`` holds on a drawn screen with no worker pending or running."""
    from textual.worker import WorkerCancelled, WorkerFailed

    app = pilot.app
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not _idle(app):
            with contextlib.suppress(WorkerFailed, WorkerCancelled):
                await app.workers.wait_for_complete()
        await _refreshed(app)
        if check() and _idle(app):
            return
        await asyncio.sleep(0.001)
    raise RuntimeError("the app never got there")


async def _drawn(pilot: Any, check: Callable[[], bool]) -> None:
    """Until ``check`` holds and a refresh has run (no wait for background workers, nor
    for the app's own queue: the screens it builds out of sight after the first paint)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        await _refreshed(pilot.app, with_app=False)
        if check():
            return
        await asyncio.sleep(0.001)
    raise RuntimeError("the app never got there")


async def _timed(out: Timings, name: str, step: Awaitable[Any]) -> None:
    cpu, wall = _cpu(), time.perf_counter()
    await step
    out.setdefault(name, []).append((time.perf_counter() - wall, _cpu() - cpu))


async def _round(root: Path, out: Timings, painted: Callable[[], None]) -> None:
    from toolstand.tui.app import make_app

    app = make_app(root=root)
    async with app.run_test(size=SIZE) as pilot:

        def named(name: str) -> Callable[[], bool]:
            return lambda: type(app.screen).__name__ == name

        def cases_listed() -> bool:
            if not named("CasesScreen")():
                return False
            table: Any = app.screen.query_one("#case-table")
            return bool(table.row_count)

        await _drawn(pilot, cases_listed)
        out["first paint"] = [(0.0, _cpu())]  # the wall time is the parent's
        painted()
        await _settled(pilot, cases_listed)

        async def press(key: str, check: Callable[[], bool]) -> None:
            app.simulate_key(key)
            await _settled(pilot, check)

        for when in ("first", "again"):
            for key, name in KEYS:
                await _timed(out, f"switch {key.upper()} ({when})", press(key, named(name)))
        await _timed(out, "template open", press("ctrl+n", named("TemplateModal")))
        await _timed(out, "template close", press("escape", named("CasesScreen")))
        await press(
            "f3",
            lambda: named("HistoryScreen")() and getattr(app.screen, "result", None) is not None,
        )

        def drafted() -> bool:
            form = app.screen.query_one("#f-id") if named("CasesScreen")() else None
            return form is not None and str(form.value).endswith("_regression")  # type: ignore[attr-defined]

        await _timed(out, "promote", press("p", drafted))
        await press("f3", named("HistoryScreen"))

        def judged() -> bool:
            return named("RunScreen")() and bool(app.screen.views) and not app.screen.busy  # type: ignore[attr-defined]

        await _timed(out, "rerun", press("ctrl+g", judged))


def child(root: Path, report_fd: int) -> None:
    """One round in this fresh process; the timings go to ``report_fd`` as JSON lines."""
    out: Timings = {}

    def report(line: dict[str, Any]) -> None:
        os.write(report_fd, orjson.dumps(line) + b"\n")

    # told by a call, not found by polling: a loop waking every millisecond keeps the
    # process from ever looking idle to Pilot's pause(), which then waits its full second
    asyncio.run(_round(root, out, lambda: report({"painted": True})))
    report({"timings": out})


def _spawn(src: Path, history: Path, tmp: Path) -> Timings:
    root = copy_project(Path(tempfile.mkdtemp(dir=tmp)), history)
    read, write = os.pipe()
    env = dict(os.environ, PYTHONPATH=str(src))
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", str(root), "--fd", str(write)],
        env=env, pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    os.close(write)
    painted = 0.0
    timings: Timings = {}
    with os.fdopen(read, "rb") as lines:
        for line in lines:
            msg = orjson.loads(line)
            if msg.get("painted"):
                painted = time.perf_counter() - start
            else:
                timings = {k: [(p[0], p[1]) for p in v] for k, v in msg["timings"].items()}
    _, err = proc.communicate()
    if proc.returncode or not timings:
        raise RuntimeError(f"the round failed ({src}):\n{err.decode()[-3000:]}")
    timings["first paint"] = [(painted, timings["first paint"][0][1])]
    return timings


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _table(label: str, out: Timings, rounds: int) -> dict[str, tuple[float, float]]:
    print(f"\n{label}")
    print(f"{'step':24} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>9} {'cpu p95':>9}"
          f"  (ms, {rounds} rounds)")  # fmt: skip
    p95s = {}
    for name, pairs in out.items():
        walls, cpus = [w * 1000 for w, _ in pairs], [c * 1000 for _, c in pairs]
        p95s[name] = (_p(walls, 0.95), _p(cpus, 0.95))
        print(f"{name:24} {statistics.median(walls):9.0f} {_p(walls, 0.95):9.0f} "
              f"{statistics.median(cpus):9.0f} {_p(cpus, 0.95):9.0f}")  # fmt: skip
    return p95s


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", help="another checkout's src/ to measure beside this one")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="leave each src/ and site-packages as they are (without bytecode, every module "
        "is compiled in every round)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--fd", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child), args.fd)
        return
    codes = {"after (this code)": ROOT / "src"}
    if args.before:
        codes = {"before": Path(args.before).resolve(), **codes}
    if not args.no_bytecode:
        # as an installed toolstand and its dependencies start: pip writes the bytecode at
        # install, and Python at the first start; PYTHONDONTWRITEBYTECODE (set on this
        # machine) would make every round compile all of src/ (~0.1-0.2 s of the first
        # paint) and, in a venv built by uv, Textual and Rich (~0.35 s) again, which no
        # user pays. site-packages takes 20-60 s the first time; after, a stat a file
        for path in [*codes.values(), *site.getsitepackages()]:
            compileall.compile_dir(str(path), quiet=2)
        print("bytecode: compiled for each src/ and site-packages before the rounds "
              "(--no-bytecode: without)")  # fmt: skip
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results: dict[str, Timings] = {label: {} for label in codes}
    with tempfile.TemporaryDirectory() as tmp:
        history = _history(Path(tmp))
        for _ in range(args.rounds):
            for label, src in codes.items():  # interleaved: both see the same load
                for name, pairs in _spawn(src, history, Path(tmp)).items():
                    results[label].setdefault(name, []).extend(pairs)
    p95 = {label: _table(f"{label}: {src}", results[label], args.rounds)
           for label, src in codes.items()}  # fmt: skip
    if args.before:
        before, after = p95["before"], p95["after (this code)"]
        print(f"\n{'after / before (p95)':24} {'wall':>9} {'cpu':>9}")
        for name in after:
            if name in before:
                w = after[name][0] / before[name][0] if before[name][0] else float("nan")
                c = after[name][1] / before[name][1] if before[name][1] else float("nan")
                print(f"{name:24} {w:9.2f} {c:9.2f}")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
