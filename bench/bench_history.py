"""History at scale: first paint, index rate, a combined filter, peak RSS, the report.

Not a test: it prints numbers measured in one run. Usage:

    .venv/bin/python bench/bench_history.py [--attempts 1000000] [--out bench/out]

It writes (or reuses) bench/out/history_<N>.jsonl: real attempt records as the runner
writes them (taken from runs/demo.jsonl, or from a fresh `toolstand run` against the
embedded simulator), varied in run, time, attempt number and latency, with the request
body trimmed (it keeps the user message, not the tool list). The file is written through
IndexedWriter, as `toolstand run` writes, so it comes with the sidecar index its writer
kept. The History screen is measured on it twice: as written (the sidecar is loaded), and
as if written elsewhere (the sidecar set aside, a cold index).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from toolstand.history.read import in_key_order

ROOT = Path(__file__).resolve().parents[1]


# --- the file ----------------------------------------------------------------------------


def seed_records(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A header and real attempt records (trimmed, in the runner's key order):
    runs/demo.jsonl, else a simulator run."""
    demo = ROOT / "runs" / "demo.jsonl"
    if not demo.exists():
        seed = out / "seed.jsonl"
        if not seed.exists():
            cmd = [sys.executable, "-m", "toolstand", "run", "--config", "config.example.json",
                   "--output", str(seed)]  # fmt: skip
            subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        demo = seed
    lines = [orjson.loads(x) for x in demo.read_bytes().splitlines() if x.strip()]
    header = next(r for r in lines if r.get("type") == "run")
    return header, [trim(r) for r in lines if r.get("type") == "attempt"]


def trim(rec: dict[str, Any]) -> dict[str, Any]:
    """The record with a short request body: same keys, same order, fewer bytes."""
    rec = dict(rec)
    req = rec.get("request")
    if isinstance(req, dict) and isinstance(req.get("body"), dict):
        body = {k: v for k, v in req["body"].items() if k not in ("tools", "system", "systemInstruction", "instructions")}  # fmt: skip
        for key in ("messages", "input", "contents"):
            if isinstance(body.get(key), list):
                body[key] = [
                    m for m in body[key] if not (isinstance(m, dict) and m.get("role") == "system")
                ]
        rec["request"] = {**req, "body": body}
    rec["schema_notes"] = []
    st = rec.get("second_turn")
    if isinstance(st, dict) and isinstance(st.get("request"), dict):
        rec["second_turn"] = {**st, "request": {**st["request"], "body": {"trimmed": True}}}
    # the order the runner writes today, whatever order the seed file had
    return in_key_order(rec)


def attempts(n: int, header: dict[str, Any], seeds: list[dict[str, Any]]) -> Any:
    """The lines of an n-attempt history: 8 runs over a week, each after its header."""
    rng = random.Random(7)
    start = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)
    step = timedelta(days=7) / n  # a week of attempts, in file order
    runs = 8
    for i in range(n):
        r = i * runs // n
        if i == r * n // runs:
            yield {**header, "run_id": f"bench-run-{r}"}
        rec = dict(seeds[rng.randrange(len(seeds))])
        rec["run_id"] = f"bench-run-{r}"
        rec["attempt"] = 1 + i % 3
        rec["started_at"] = (start + step * i).isoformat(timespec="milliseconds")
        lat = round(rng.lognormvariate(5.5, 0.6), 3)
        rec["latency_ms"], rec["elapsed_ms"] = lat, round(lat + 1.5, 3)
        yield rec


def generate(path: Path, n: int) -> None:
    """Write the history as `toolstand run` does: through IndexedWriter, which keeps the
    sidecar index as it writes."""
    from toolstand.history.keep import IndexedWriter
    from toolstand.history.sidecar import sidecar_path

    header, seeds = seed_records(path.parent)
    work = path.parent / "generating"
    shutil.rmtree(work, ignore_errors=True)
    tmp = work / path.name
    with IndexedWriter(tmp) as w:
        for rec in attempts(n, header, seeds):
            w.write(rec)
    sidecar_path(path).parent.mkdir(exist_ok=True)
    sidecar_path(tmp).rename(sidecar_path(path))
    tmp.rename(path)
    shutil.rmtree(work)


def writer_costs(out: Path, n: int) -> dict[str, float]:
    """Seconds a line for the first 50,000 lines of the history through a plain
    JsonlWriter and through IndexedWriter (the records made the same way for both)."""
    from toolstand.history.keep import IndexedWriter
    from toolstand.history.write import JsonlWriter

    header, seeds = seed_records(out)
    sample = min(n, 50_000)
    work = out / "writers"
    shutil.rmtree(work, ignore_errors=True)
    costs: dict[str, float] = {}
    for kind in (JsonlWriter, IndexedWriter, JsonlWriter, IndexedWriter):
        target = work / f"{kind.__name__}.jsonl"
        target.unlink(missing_ok=True)
        t0 = time.perf_counter()
        with kind(target) as w:
            for rec in itertools.islice(attempts(n, header, seeds), sample):
                w.write(rec)
        took = (time.perf_counter() - t0) / sample
        costs[kind.__name__] = min(took, costs.get(kind.__name__, took))  # best of two
    shutil.rmtree(work)
    return costs


# --- measurements ------------------------------------------------------------------------


def raw_read(path: Path) -> float:
    buf = bytearray(1 << 22)
    t0 = time.perf_counter()
    with open(path, "rb", buffering=0) as fh:
        while fh.readinto(buf):
            pass
    return time.perf_counter() - t0


def line_ends_only(path: Path) -> float:
    """The floor of any index written in Python: a loop that only finds each line's end
    (one bytes.find, i.e. memchr, a line) over chunks read as the raw read reads them."""
    buf = bytearray(1 << 22)
    t0 = time.perf_counter()
    with open(path, "rb", buffering=0) as fh:
        carry = 0
        while n := fh.readinto(memoryview(buf)[carry:]):
            n += carry
            find, pos = buf.find, 0
            while (nl := find(b"\n", pos, n)) >= 0:
                pos = nl + 1
            carry = n - pos
            buf[:carry] = buf[pos:n]
    return time.perf_counter() - t0


KILLED = r"""
import os, sys
from toolstand.history.keep import IndexedWriter
sys.path.insert(0, "bench")
import bench_history as bh
path, n = sys.argv[1], int(sys.argv[2])
header, seeds = bh.seed_records(bh.ROOT / "bench" / "out")
w = IndexedWriter(bh.Path(path))
for rec in bh.attempts(n, header, seeds):
    w.write(rec)
os._exit(0)  # as a kill would: no close, so no last save
"""


def killed_run(out: Path, n: int) -> tuple[Path, int]:
    """A history whose writer died just before its next save: n attempts written,
    the sidecar of the last save behind by SAVE_EVERY - 1 of them."""
    from toolstand.history.keep import SAVE_EVERY
    from toolstand.history.sidecar import sidecar_path

    path = out / "killed.jsonl"
    path.unlink(missing_ok=True)
    sidecar_path(path).unlink(missing_ok=True)
    subprocess.run([sys.executable, "-c", KILLED, str(path), str(n)], cwd=ROOT, check=True)
    return path, SAVE_EVERY - 1


def full_orjson(path: Path) -> float:
    t0 = time.perf_counter()
    with open(path, "rb", buffering=1 << 20) as fh:
        for line in fh:
            orjson.loads(line)
    return time.perf_counter() - t0


PEAK = r"""
import json, resource, sys, time

def peak_mb():
    # VmHWM: this process's own peak. ru_maxrss would not do: Linux carries it over
    # from the parent through fork and exec, so a child reads at least the parent's.
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

CHILD = (
    PEAK
    + r"""
from datetime import date
from toolstand.history import sidecar
from toolstand.history.index import HistoryIndex
from toolstand.history.query import Query, run_query, day_range
path = sys.argv[1]
t0 = time.perf_counter()
ix = HistoryIndex(path)
ix.update()
t_index = time.perf_counter() - t0
q = Query(verdict=frozenset({"fail"}), model=frozenset({"sim-eager"}),
          mode=frozenset({"auto", "reversed"}), days=day_range("yesterday", date(2026, 11, 27)),
          text="ORD")
t0 = time.perf_counter()
r = run_query(ix, q)
t_filter = time.perf_counter() - t0
t0 = time.perf_counter()
everything = run_query(ix, Query())
t_all = time.perf_counter() - t0
t0 = time.perf_counter()
saved = sidecar.save(ix)
t_save = time.perf_counter() - t0
print(json.dumps({"index_s": t_index, "rows": ix.rows, "slow_lines": ix.slow_lines,
                  "filter_s": t_filter, "matched": len(r.rows), "all_s": t_all,
                  "save_s": t_save, "sidecar_mb": saved.stat().st_size / 1e6 if saved else 0,
                  "rss_mb": peak_mb()}))
"""
)

REOPEN_CHILD = (
    PEAK
    + r"""
from toolstand.history import sidecar
from toolstand.history.index import HistoryIndex
t0 = time.perf_counter()
ix = HistoryIndex(sys.argv[1])
ok = sidecar.load(ix)
ix.update()
print(json.dumps({"reopen_s": time.perf_counter() - t0, "from_sidecar": ok, "rows": ix.rows,
                  "rss_mb": peak_mb()}))
"""
)

REPORT_CHILD = (
    PEAK
    + r"""
from toolstand.reporting.formats import dumps_json
from toolstand.reporting.metrics import compute_files
index = {"lines": False, "index": True}[sys.argv[2]]
t0 = time.perf_counter()
rep = compute_files([sys.argv[1]], index=index)
took = time.perf_counter() - t0
with open(sys.argv[3], "wb") as fh:
    fh.write(dumps_json(rep))
print(json.dumps({"report_s": took, "groups": len(rep.groups), "rss_mb": peak_mb()}))
"""
)


COLD_CHILD = (
    PEAK
    + r"""
import os, resource, toolstand
from toolstand.history.index import HistoryIndex
try:
    from toolstand.history import split
except ImportError:  # a src tree from before the split: one process anyway
    split = None
if sys.argv[2] == "one" and split is not None:
    split.MIN_BYTES = 1 << 62  # never two processes
c0, t0 = time.process_time(), time.perf_counter()
ix = HistoryIndex(sys.argv[1])
ix.update()
took, cpu = time.perf_counter() - t0, time.process_time() - c0
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"index_s": took, "cpu_s": cpu, "child_cpu_s": kids.ru_utime + kids.ru_stime,
                  "rows": ix.rows, "src": os.path.dirname(toolstand.__file__),
                  "rss_mb": peak_mb()}))
"""
)


def child(code: str, path: Path, *args: str, src: Path | None = None) -> dict[str, Any]:
    """Run ``code`` in a fresh process (with ``src`` first on its path, if given)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), *args],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def report_cli(path: Path, out: Path) -> float:
    """Wall seconds of `toolstand report PATH --json`, start to exit; its JSON to out."""
    t0 = time.perf_counter()
    with open(out, "wb") as fh:
        subprocess.run([sys.executable, "-m", "toolstand", "report", str(path), "--json"],
                       cwd=ROOT, check=True, stdout=fh, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - t0


def report_rows(path: Path, out: Path) -> list[tuple[str, str, str]]:
    """The report three ways, beside a full-orjson pass measured in the same run: the
    CLI with the sidecar valid, the same computed line by line (the old path), and cold
    (the sidecar set aside: the file is indexed once and the sidecar saved)."""
    from toolstand.history.sidecar import sidecar_path

    kept = sidecar_path(path)
    full = full_orjson(path)
    cli = min(report_cli(path, out / "report_sidecar.json") for _ in range(3))
    inproc = child(REPORT_CHILD, path, "index", str(out / "report_inproc.json"))
    lines = child(REPORT_CHILD, path, "lines", str(out / "report_lines.json"))
    aside = kept.with_suffix(".kept")
    kept.rename(aside)
    try:
        cold = child(REPORT_CHILD, path, "index", str(out / "report_cold.json"))
    finally:
        aside.replace(kept)
    same = {
        name: (out / f"report_{name}.json").read_bytes() == (out / "report_lines.json").read_bytes()
        for name in ("sidecar", "inproc", "cold")
    }
    return [
        ("plain full-orjson pass", f"{full:.2f} s", ""),
        ("`toolstand report --json`, sidecar valid (process, best of 3)", f"{cli:.2f} s  {cli / full:.3f}x full orjson", "< 2 s, <= 0.1x"),
        ("  compute_files from the columns (in process)", f"{inproc['report_s']:.2f} s  {inproc['report_s'] / full:.3f}x  (peak RSS {inproc['rss_mb']:.0f} MB)", ""),
        ("report line by line (the old path)", f"{lines['report_s']:.2f} s  {lines['report_s'] / full:.2f}x  (peak RSS {lines['rss_mb']:.0f} MB)", "< 1x"),
        ("report cold (index once, save the sidecar)", f"{cold['report_s']:.2f} s  {cold['report_s'] / full:.2f}x  (peak RSS {cold['rss_mb']:.0f} MB)", ""),
        ("  same JSON as line by line: sidecar / in process / cold", " / ".join(str(same[k]) for k in ("sidecar", "inproc", "cold")), "True"),
    ]  # fmt: skip


async def first_paint(path: Path) -> dict[str, float]:
    """Seconds from creating the app to the History list's first painted row."""
    from toolstand.tui.app import make_app
    from toolstand.tui.widgets.attempt_list import AttemptList

    painted: list[float] = []
    original = AttemptList._paint

    def spy(self: AttemptList, row: int, width: int, state: int, part: int) -> Any:
        if not painted:
            painted.append(time.perf_counter())
        return original(self, row, width, state, part)

    AttemptList._paint = spy  # type: ignore[method-assign]
    t0 = time.perf_counter()
    app = make_app(root=ROOT, start_mode="history")
    app.history_path = str(path)
    async with app.run_test(size=(100, 30)) as pilot:
        while not painted and time.perf_counter() - t0 < 60:
            await pilot.pause(0.005)
        first = painted[0] - t0 if painted else float("nan")
        screen: Any = app.screen
        rows_then = screen.index.rows if screen.index is not None else 0
        # responsiveness while the thread worker indexes: how late a 10 ms timer fires
        lags: list[float] = []
        until = time.perf_counter() + 5
        while screen.indexing and time.perf_counter() < until:
            t1 = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append(time.perf_counter() - t1 - 0.01)
        lags.sort()
        p99 = lags[int(len(lags) * 0.99)] if lags else float("nan")
    AttemptList._paint = original  # type: ignore[method-assign]
    return {"first_paint_s": first, "lag_p99_s": p99, "lag_max_s": max(lags, default=float("nan")),
            "rows_at_paint": rows_then}  # fmt: skip


def cold_rows(
    path: Path, raw: float, against: Path | None, reps: int
) -> list[tuple[str, str, str]]:
    """The cold index (sidecar set aside) in fresh processes, this src in one process and
    in two, and ``against`` (another src tree) if given, alternating ``reps`` times: wall
    and CPU seconds of each, the CPU of a forked half included, with the load."""
    from toolstand.history.sidecar import sidecar_path

    ways: list[tuple[str, Path | None, str]] = [("this src, 1 process", None, "one"),
                                                ("this src, 2 processes", None, "auto")]  # fmt: skip
    if against is not None:
        ways.insert(0, (f"against {against}", against, "auto"))
    kept = sidecar_path(path)
    aside = kept.with_suffix(".kept")
    if kept.exists():
        kept.rename(aside)
    rows: list[tuple[str, str, str]] = []
    try:
        for rep in range(reps):
            for name, src, mode in ways:
                load = os.getloadavg()[0]
                r = child(COLD_CHILD, path, mode, src=src)
                cpu = r["cpu_s"] + r["child_cpu_s"]
                rows.append((f"{rep + 1}. {name}", f"{r['index_s']:.2f} s wall  {cpu:.2f} s CPU  "
                             f"{cpu / r['rows'] * 1e6:.1f} us CPU/row  {raw / r['index_s']:.3f}x raw",
                             f"load {load:.1f}  ({r['src']})"))  # fmt: skip
    finally:
        if aside.exists():
            aside.replace(kept)
    return rows


def print_rows(rows: list[tuple[str, str, str]]) -> None:
    width = max(len(r[0]) for r in rows)
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:<34} {target}")


def _shown(path: Path) -> str:
    """The path under the checkout when it is there, else whole (--out may be anywhere)."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attempts", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--only", choices=["report", "cold"], help="report: the raw read, the "
                    "cold index and the report rows only (no TUI, no killed run); cold: the "
                    "raw read and the cold index only")  # fmt: skip
    ap.add_argument("--against", type=Path, help="another src tree (e.g. `git archive main "
                    "src | tar -x -C DIR`, then DIR/src): --only cold measures its cold index "
                    "too, alternating with this one")  # fmt: skip
    ap.add_argument("--reps", type=int, default=2, help="--only cold: rounds (default 2)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    free_gb = shutil.disk_usage(args.out).free / 1e9
    n = args.attempts
    if free_gb < 10 and n > 300_000:
        print(f"only {free_gb:.1f} GB free: using 300,000 attempts")
        n = 300_000
    path = args.out / f"history_{n}.jsonl"
    from toolstand.history.sidecar import sidecar_path, stored_rows

    kept = sidecar_path(path)
    if not (path.exists() and kept.exists() and stored_rows(path)):  # an older sidecar: anew
        path.unlink(missing_ok=True)
        t0 = time.perf_counter()
        generate(path, n)
        print(f"generated {path} in {time.perf_counter() - t0:.0f} s")
    costs = writer_costs(args.out, n)
    size = path.stat().st_size
    print(f"file: {_shown(path)}  {n:,} attempts  {size / 1e9:.2f} GB  "
          f"{size / n:.0f} B/line  ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")  # fmt: skip

    raw_read(path)  # warm the page cache: every pass below reads from memory
    raw = min(raw_read(path) for _ in range(3))
    if args.only == "cold":
        print_rows([("raw read of the file (best of 3)", f"{raw:.2f} s  {size / raw / 1e9:.2f} GB/s", f"load {os.getloadavg()[0]:.1f}"),
                    *cold_rows(path, raw, args.against, args.reps)])  # fmt: skip
        print(f"load average at the end: {os.getloadavg()}")
        return
    if args.only == "report":
        aside = kept.with_suffix(".kept")
        kept.rename(aside)
        try:
            ix = child(CHILD, path)
        finally:
            aside.replace(kept)
        rows = [
            ("raw read of the file (best of 3)", f"{raw:.2f} s  {size / raw / 1e9:.2f} GB/s", ""),
            ("index, cold (offsets + summary + report columns)", f"{ix['index_s']:.2f} s  {ix['rows'] / ix['index_s']:,.0f} rows/s", ""),
            ("  index rate / raw read rate", f"{raw / ix['index_s']:.3f}x", ">= 0.1x"),
            *report_rows(path, args.out),
        ]  # fmt: skip
        print_rows(rows)
        print(f"load average at the end: {os.getloadavg()}")
        return
    # 1. as toolstand wrote it: the sidecar the writer kept is there
    warm = asyncio.run(first_paint(path))
    reopen = child(REOPEN_CHILD, path)
    # 2. as if written elsewhere: no sidecar, a cold index (the writer's is put back after)
    aside = kept.with_suffix(".kept")
    kept.rename(aside)
    try:
        paint = asyncio.run(first_paint(path))
        ix = child(CHILD, path)  # indexes, filters, then saves a sidecar of its own
    finally:
        aside.replace(kept)
    report = report_rows(path, args.out)
    floor = min(line_ends_only(path) for _ in range(2))
    from toolstand.history.keep import SAVE_EVERY

    # as large as the main file, one attempt short of the writer's next save
    k_path, k_tail = killed_run(args.out, max(1, n // SAVE_EVERY) * SAVE_EVERY - 1)
    raw_read(k_path)
    k_raw = min(raw_read(k_path) for _ in range(3))
    k_open = child(REOPEN_CHILD, k_path)
    k_path.unlink()

    rows = [
        ("raw read of the file (best of 3)", f"{raw:.2f} s  {size / raw / 1e9:.2f} GB/s", ""),
        ("A. a history toolstand wrote (sidecar kept by the writer)", "", ""),
        ("first paint of the History screen", f"{warm['first_paint_s']:.3f} s", "< 1 s"),
        ("index: load the sidecar + read the tail", f"{reopen['reopen_s']:.2f} s  ({reopen['rows']:,} rows, from sidecar: {reopen['from_sidecar']})", ""),
        ("  index rate / raw read rate", f"{raw / reopen['reopen_s']:.1f}x", ">= 0.5x"),
        ("  peak RSS (child)", f"{reopen['rss_mb']:.0f} MB", "< 400 MB"),
        ("  make + write a line: plain / keeping the index", f"{costs['JsonlWriter'] * 1e6:.1f} / {costs['IndexedWriter'] * 1e6:.1f} us", ""),
        ("  keeping the index costs the writer", f"{(costs['IndexedWriter'] - costs['JsonlWriter']) * 1e6:.1f} us a line", ""),
    ]  # fmt: skip
    rows += [
        (f"A'. a run killed just before a save ({k_open['rows']:,} attempts, {k_tail:,} after the last save)", "", ""),
        ("index: load the sidecar + read the tail", f"{k_open['reopen_s']:.2f} s  (raw read {k_raw:.3f} s)", ""),
        ("  index rate / raw read rate", f"{k_raw / k_open['reopen_s']:.2f}x", ">= 0.5x"),
        ("B. a history written elsewhere (no sidecar)", "", ""),
        ("first paint of the History screen", f"{paint['first_paint_s']:.3f} s", "< 1 s"),
        ("  rows indexed at first paint", f"{paint['rows_at_paint']:,}", ""),
        ("  UI loop delay while indexing, p99/max", f"{paint['lag_p99_s'] * 1000:.0f} / {paint['lag_max_s'] * 1000:.0f} ms", ""),
        ("index, cold (offsets + summary columns)", f"{ix['index_s']:.2f} s  {ix['rows'] / ix['index_s']:,.0f} rows/s", ""),
        ("  index rate / raw read rate", f"{raw / ix['index_s']:.2f}x", "(once: then saved)"),
        ("  floor: a Python loop finding line ends only", f"{floor:.2f} s  {raw / floor:.2f}x the raw read rate", ""),
        ("  lines read the slow way", f"{ix['slow_lines']:,}", ""),
        ("  sidecar saved after it", f"{ix['save_s']:.2f} s  {ix['sidecar_mb']:.0f} MB", ""),
        ("C. filters and the report (either file)", "", ""),
        ("combined filter (5 facets + text)", f"{ix['filter_s'] * 1000:.0f} ms  ({ix['matched']:,} rows)", "< 1 s"),
        ("  counts over all rows, no filter", f"{ix['all_s'] * 1000:.0f} ms", ""),
        ("peak RSS, cold index + filters (child)", f"{ix['rss_mb']:.0f} MB", "< 400 MB"),
        *report,
    ]  # fmt: skip
    print_rows(rows)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(this process, with the headless app: peak RSS {own:.0f} MB)")


if __name__ == "__main__":
    main()
