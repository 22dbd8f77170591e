"""A cold index of a large history in two processes (no Textual).

Indexing costs CPython time per line, so a file indexed from its start on a machine with
a second core is cut in two at a line end near its middle: a forked child indexes the
second half with a HistoryIndex of its own while this process indexes the first, and
the child's columns are then appended to ours: facet values re-interned in the child's
row order, report kinds renumbered, line numbers (warnings, odd lines) moved on by the
lines of the first half. Any line end is a line end to the index, so both halves read
exactly the lines one process would, and the merged index equals it value for value.

Used only where a fork is safe and pays: the index is empty, the whole file is asked
for, the caller runs in the main thread with no other thread alive, the file is at least
``MIN_BYTES``, and there are two CPUs. Anything going wrong in the child (it dies, the
file cannot be read there) leaves the second half to this process: never a lost line.
"""

from __future__ import annotations

import os
import pickle
import threading
from array import array
from typing import Any

from toolstand.history.read import HistoryWarning

# a HistoryIndex (index.py imports this module: it is never imported back)
HistoryIndex = Any

MIN_BYTES = 64 << 20  # below this one process is quick enough: no fork
_SEEK = 1 << 20  # how far past the middle a line end is looked for


def can_split(ix: HistoryIndex, size: int) -> bool:
    return (
        size >= MIN_BYTES
        and ix.rows == 0
        and ix.end == 0
        and ix.lines == 0
        and (os.cpu_count() or 1) >= 2
        and hasattr(os, "fork")
        and threading.current_thread() is threading.main_thread()
        and threading.active_count() == 1
    )


def cut_point(path: str, size: int) -> int:
    """The offset just past the first line end at or after the middle, or 0 (none near)."""
    with open(path, "rb") as fh:
        fh.seek(size // 2)
        block = fh.read(_SEEK)
    nl = block.find(b"\n")
    return 0 if nl < 0 else size // 2 + nl + 1


def update_in_two(ix: HistoryIndex, cut: int) -> int:
    """Index the file from ``cut`` in a forked child and before it here, then append
    the child's rows; the number of attempts added (as ``update`` returns it)."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: index the second half, send its state, exit at once
        os.close(rfd)
        code = 1
        try:
            other = type(ix)(ix.path, tz=ix.tz)
            other.end = cut
            other.update()
            blob = pickle.dumps(_state(other), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(wfd, "wb") as out:
                out.write(blob)
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    try:
        added = _first_half(ix, cut)
        with os.fdopen(rfd, "rb") as src:
            rfd = -1
            blob = src.read()
    finally:
        if rfd >= 0:
            os.close(rfd)
        _, status = os.waitpid(pid, 0)
    if ix.too_long is not None or ix.end != cut:
        return added  # one process would stop where this half stopped
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and blob):
        return added + ix.update()  # the child failed: the second half read here
    state = pickle.loads(blob)
    return added + merge(ix, state)


def _first_half(ix: HistoryIndex, cut: int) -> int:
    """``ix.update`` up to ``cut`` exactly (a budget ending at a line end)."""
    added = 0
    while ix.end < cut and ix.too_long is None:
        before = ix.end
        added += ix.update(max_bytes=cut - ix.end)
        if ix.end == before:
            break
    return added


def _state(ix: HistoryIndex) -> dict[str, Any]:
    """What merge needs of a HistoryIndex, in picklable pieces."""
    facets = {n: (f.values, f.codes) for n, f in ix.facets.items()}
    r = ix.report
    return {
        "rows": ix.rows,
        "lines": ix.lines,
        "end": ix.end,
        "size_hint": ix.size_hint,
        "slow_lines": ix.slow_lines,
        "columns": (ix.offsets, ix.times, ix.latency, ix.attempt),
        "facets": facets,
        "verdict": (ix.verdict.values, ix.verdict.codes),
        "errors": (ix.errors.values, ix.errors.codes),
        "headers": ix.headers,
        "simulated": ix.simulated,
        "user_text": ix.user_text,
        "warnings": [(w.line, w.message) for w in ix.warnings],
        "tail": None if ix.tail is None else (ix.tail.line, ix.tail.message),
        "too_long": None if ix.too_long is None else ix.warnings.index(ix.too_long),
        "report": (r.kinds, r.kind, r.elapsed, r.cost, r.retries, r.tin, r.tout, r.odd),
    }


def merge(ix: HistoryIndex, s: dict[str, Any]) -> int:
    """Append the rows of a second half (``_state`` of an index that started at
    ``ix.end``) to ``ix``; the number of attempts added."""
    shift, first = ix.lines, ix.rows
    offsets, times, latency, attempt = s["columns"]
    ix.offsets.extend(offsets)
    ix.times.extend(times)
    ix.latency.extend(latency)
    ix.attempt.extend(attempt)
    # a facet's values re-interned in the child's row order: the codes one process gives
    codes_of: dict[str, list[int]] = {}
    for name, (values, codes) in s["facets"].items():
        f = ix.facets[name]
        f.extend_from(values, codes)
        codes_of[name] = [f.ids[v] for v in values]
    for f, (values, codes) in ((ix.verdict, s["verdict"]), (ix.errors, s["errors"])):
        f.extend_from(values, codes)
    kinds, kind, elapsed, cost, retries, tin, tout, odd = s["report"]
    r = ix.report
    table = [0]  # ODD stays ODD
    for k in kinds[1:]:
        code = r.ids.get(k)
        if code is None:
            code = r.ids[k] = len(r.kinds)
            r.kinds.append(k)
        table.append(code)
    r.kind.extend(array("I", map(table.__getitem__, kind)))
    r.elapsed.extend(elapsed)
    r.cost.extend(cost)
    r.retries.extend(retries)
    r.tin.extend(tin)
    r.tout.extend(tout)
    r.odd.extend((n + shift, o) for n, o in odd)
    runs, cases = codes_of["run"], codes_of["case"]
    for (run, case), text in s["user_text"].items():  # the first half's text comes first
        ix.user_text.setdefault((runs[run], cases[case]), text)
    ix.headers.extend(s["headers"])
    ix.simulated |= s["simulated"]
    moved = [HistoryWarning(ix.path, _moved(n, shift), m) for n, m in s["warnings"]]
    ix.warnings.extend(moved)
    if s["too_long"] is not None:
        ix.too_long = moved[s["too_long"]]
    tail = s["tail"]
    ix.tail = None if tail is None else HistoryWarning(ix.path, _moved(tail[0], shift), tail[1])
    ix.slow_lines += s["slow_lines"]
    ix.size_hint = s["size_hint"]
    ix.lines += s["lines"]
    ix.end = s["end"]
    ix.rows = first + s["rows"]  # last: every column holds the new rows
    return int(s["rows"])


def _moved(line: int | None, shift: int) -> Any:
    return line + shift if line else line
