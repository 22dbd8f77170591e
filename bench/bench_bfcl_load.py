"""Loading BFCL's 3,491 cases, before and after (issue 30): `check --config`, `run --only
simple_python_0` on the simulator, and what the TUI loads (the project, then every case
file in turn as Cases switches between them). Each is its own process, run from this
tree's src and from an exported copy of a base commit's src, alternately; CPU time
(user + system) and wall time come from the kernel (wait4). Not a test: it prints the
medians, their ratios, and whether `check` printed the same bytes from both trees.

    .venv/bin/python bench/bench_bfcl_load.py [--base REV] [--rounds N] [--wheel WHEEL]

The default base, 6ea2e76, is the commit the issue-30 load work started from.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WHEEL = ROOT / ".cache" / "bfcl" / "bfcl_eval-2026.3.23-py3-none-any.whl"

# what the TUI does with a BFCL config: the project (its first case file), then each file
TUI_LOAD = """
import sys
from pathlib import Path
from toolstand.spec.cases import load_cases
from toolstand.tui.model.project import load_project
project = load_project(Path(sys.argv[1]), "config.json")
for path in project.case_files:
    load_cases(path, strict=False)
"""


def measure(src: Path, args: list[str], cwd: Path) -> tuple[float, float, bytes, int]:
    """(CPU s, wall s, stdout + stderr, exit code) of ``python args`` with ``src`` first."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return usage.ru_utime + usage.ru_stime, wall, out, os.waitstatus_to_exitcode(status)


def export(rev: str, into: Path) -> Path:
    """The ``src`` folder of commit ``rev``, written under ``into``."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="6ea2e76")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--wheel", type=Path, default=WHEEL)
    opts = parser.parse_args()
    if not opts.wheel.is_file():
        sys.exit(f"no wheel at {opts.wheel}: run `make bfcl-wheel` or give --wheel")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average {load} at start")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trees = {"before": export(opts.base, work / "base"), "after": ROOT / "src"}
        bfcl = work / "bfcl"
        cpu, _, out, code = measure(
            trees["after"],
            ["-m", "toolstand", "import", "bfcl", str(opts.wheel), "--out", str(bfcl)],
            work,
        )
        if code != 0:
            sys.exit(f"import failed ({code}): {out.decode(errors='replace')[-500:]}")
        run = ["-m", "toolstand", "run", "--config", "config.json", "--only", "simple_python_0"]
        steps = {
            "check": ["-m", "toolstand", "check", "--config", "config.json"],
            "run --only": [*run, "--output", "OUT"],
            "TUI load": ["-c", TUI_LOAD, str(bfcl)],
        }
        got: dict[tuple[str, str], list[tuple[float, float]]] = {}
        outputs: dict[str, set[bytes]] = {"before": set(), "after": set()}
        for n in range(opts.rounds):
            for tree in ("before", "after") if n % 2 == 0 else ("after", "before"):
                for step, args in steps.items():
                    output = str(work / f"run-{tree}-{n}.jsonl")
                    argv = [output if a == "OUT" else a for a in args]
                    cpu, wall, out, code = measure(trees[tree], argv, bfcl)
                    if code != 0:
                        sys.exit(f"{step} ({tree}) exited {code}: {out.decode()[-500:]}")
                    got.setdefault((step, tree), []).append((cpu, wall))
                    if step == "check":
                        outputs[tree].add(out)
    print(f"base {opts.base} (before) and this tree (after), {opts.rounds} rounds, medians:")
    print(
        f"  {'':<11} {'CPU before':>10} {'CPU after':>9} {'ratio':>6}   {'wall before':>11} {'wall after':>10}"
    )
    for step in steps:
        b = got[(step, "before")]
        a = got[(step, "after")]
        cb, ca = (statistics.median(c for c, _ in x) for x in (b, a))
        wb, wa = (statistics.median(w for _, w in x) for x in (b, a))
        print(f"  {step:<11} {cb:9.2f}s {ca:8.2f}s {cb / ca:5.1f}x   {wb:10.2f}s {wa:9.2f}s")
    same = len(outputs["before"] | outputs["after"]) == 1
    print(f"check printed the same bytes before and after: {'yes' if same else 'NO'}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load} at the end")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
