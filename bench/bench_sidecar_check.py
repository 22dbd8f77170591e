"""What checking a sidecar costs (issue 31 M7): the checks against the whole load and report.

Not a test: it prints CPU seconds (time.process_time, best of --repeat) measured in one
run, and their ratios. Usage:

    .venv/bin/python bench/bench_sidecar_check.py [bench/out/history_1000000.jsonl]

The history must have a current sidecar (bench/bench_history.py writes one; so does
`toolstand report` on a file over 32 MB). Measured: the sidecar's whole ``load``; within
it, the head (its checksum, the file's stat, the sampled-block hash), the columns read
with and without their checksums, and the column checks (sidecar_check.index_problem);
then the report from the columns (compute_files), which includes a load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolstand.history import sidecar
from toolstand.history.index import HistoryIndex
from toolstand.history.sidecar_check import fingerprint, index_problem
from toolstand.reporting.metrics import compute_files

ROOT = Path(__file__).resolve().parents[1]


def cpu(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def columns_unchecked(path: str) -> None:
    """The columns read as the sidecar of version 4 read them: no checksum, no checks."""
    with open(sidecar.sidecar_path(path), "rb") as fh:
        head = sidecar._head(fh, path)
        assert head is not None
        for _, code, size, _ in head["columns"]:
            data = fh.read(size)
            _ = bytearray(data) if code == "B" else array(code, data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("history", nargs="?", default=str(ROOT / "bench/out/history_1000000.jsonl"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    path, n = args.history, args.repeat
    probe = HistoryIndex(path)
    if not sidecar.load(probe):
        sys.exit(f"{path}: no current sidecar (run `toolstand report {path}` once)")
    end = probe.end
    print(f"{path}: {probe.rows:,} attempts, {os.path.getsize(path) / 1e9:.2f} GB, sidecar "
          f"{sidecar.sidecar_path(path).stat().st_size / 1e6:.0f} MB")  # fmt: skip

    def head() -> None:
        with open(sidecar.sidecar_path(path), "rb") as fh:
            sidecar._head(fh, path)

    def columns() -> None:
        with open(sidecar.sidecar_path(path), "rb") as fh:
            h = sidecar._head(fh, path)
            assert h is not None
            sidecar._read_columns(fh, h)

    t = {
        "load": cpu(lambda: sidecar.load(HistoryIndex(path)), n),
        "head": cpu(head, n),
        "blocks": cpu(lambda: fingerprint(path, end), n),
        "columns": cpu(columns, n),
        "unchecked": cpu(lambda: columns_unchecked(path), n),
        "rows": cpu(lambda: index_problem(probe), n),
        "report": cpu(lambda: compute_files([path], index=True), max(1, n // 2)),
    }
    checks = t["head"] + (t["columns"] - t["unchecked"]) + t["rows"]
    ms = {k: f"{v * 1e3:.1f} ms" for k, v in t.items()}
    print(f"  sidecar load, all in            {ms['load']}")
    print(f"    head: checksum, stat, blocks  {ms['head']}  (sampled blocks alone {ms['blocks']})")
    print(f"    columns with / without crc32  {ms['columns']} / {ms['unchecked']}")
    print(f"    column checks (index_problem) {ms['rows']}")
    print(f"  the checks together             {checks * 1e3:.1f} ms  "
          f"= {checks / t['load']:.0%} of the load, {checks / t['report']:.0%} of the report")  # fmt: skip
    print(f"  report from the columns         {ms['report']} CPU")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
