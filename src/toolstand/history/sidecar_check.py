"""Whether a sidecar still describes its history, checked cheaply (no Textual).

Hashing a whole multi-gigabyte history on every open would cost seconds, so a sidecar
is held to what can be read in milliseconds, and any doubt rebuilds it (sidecar.py):

* the file's stat: another inode is another file; the same size with another mtime is a
  rewrite in place (a ``sed -i``, a same-size edit), never an append;
* the content: a hash of the first and last 64 KB before the saved end and of
  ``SAMPLES`` blocks spread evenly between them (an edit anywhere big enough to matter,
  such as verdicts flipped over a stretch of the file, lands in a block);
* the rows: sampled offsets still start lines in order, every code is in range,
  so a forged or corrupt sidecar can neither crash a reader nor show a row that is not
  there.
"""

from __future__ import annotations

import hashlib
import os
from datetime import date
from typing import TYPE_CHECKING, Any

from toolstand.history.shape import VERDICTS

if TYPE_CHECKING:
    from toolstand.history.index import HistoryIndex

EDGE = 1 << 16  # bytes hashed at the start and before the saved end
SAMPLES = 256  # blocks hashed between them
BLOCK = 1 << 12
ROW_SAMPLES = 64  # rows whose offsets are checked against the file


def file_stat(path: str) -> list[int]:
    """[device, inode, size, mtime in ns] of the history (what ``stale`` compares)."""
    st = os.stat(path)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def stale(path: str, end: int, saved: Any) -> bool:
    """Whether the file is no longer the one a sidecar was saved for, by its stat alone:
    shorter than the saved end, another file, or rewritten without growing."""
    now = file_stat(path)
    if type(saved) is not list or len(saved) != 4 or now[2] < end:
        return True
    if now[:2] != saved[:2]:
        return True  # replaced (an editor's rename) or copied: another file
    return now[2] == saved[2] and now[3] != saved[3]  # same size, written since


def fingerprint(path: str, end: int) -> str:
    """A hash of the bytes before ``end``: its edges and evenly spread sampled blocks."""
    h = hashlib.blake2b(end.to_bytes(8, "little"), digest_size=20)
    fd = os.open(path, os.O_RDONLY)
    try:
        h.update(os.pread(fd, min(EDGE, end), 0))
        h.update(os.pread(fd, min(EDGE, end), max(0, end - EDGE)))
        if end > 2 * EDGE:
            span = end - 2 * EDGE - BLOCK
            for i in range(SAMPLES):
                h.update(os.pread(fd, BLOCK, EDGE + span * i // max(1, SAMPLES - 1)))
    finally:
        os.close(fd)
    return h.hexdigest()


def index_problem(ix: HistoryIndex) -> str | None:
    """Why an index filled from a sidecar cannot be right, or None (each check a pass
    at C speed over a column, or a few reads of the file)."""
    rows = ix.rows
    if not (0 <= rows <= ix.lines and ix.end >= 0):
        return "rows, lines or end out of range"
    if ix.verdict.values[: len(VERDICTS) + 1] != [*VERDICTS, "?"]:
        return "verdict values"
    for f in (ix.verdict, ix.errors, *ix.facets.values()):
        if rows and not _in_range(f.codes, len(f.values)):
            return f"codes of {f.name} past its values"
        if not all(map(_value_check(f.name), f.values)):
            return f"values of {f.name}"
    if rows and (ix.offsets[0] < 0 or ix.offsets[-1] >= ix.end):
        return "offsets out of range"
    runs, cases = len(ix.facets["run"].values), len(ix.facets["case"].values)
    for (r, c), text in ix.user_text.items():
        if not (type(r) is int and 0 <= r < runs and type(c) is int and 0 <= c < cases):
            return "user text of an unknown run or case"
        if type(text) is not str:
            return "user text"
    if not all(type(h) is dict for h in ix.headers):
        return "headers"
    if not all(type(w.line) in (int, type(None)) and type(w.message) is str for w in ix.warnings):
        return "warnings"
    return ix.report.problem(rows, ix.end) or _lines_start(ix)


def _in_range(codes: Any, n: int) -> bool:
    """Whether every code is below ``n``: for one-byte codes, nothing is left once the
    valid ones are deleted (``translate`` at C speed, a tenth of ``max``)."""
    if isinstance(codes, bytearray):
        return n >= 256 or not codes.translate(None, bytes(range(n)))
    return max(codes) < n


def _value_check(name: str) -> Any:
    if name == "day":
        return lambda v: v is None or type(v) is date
    if name == "errors":
        return lambda v: type(v) is tuple and all(type(x) is str for x in v)
    if name == "stream":  # an arm: true, false, or missing in an older record
        return lambda v: v is None or type(v) is bool
    if name in ("feedback", "category"):
        return lambda v: v is None or type(v) is str
    return lambda v: type(v) is str


def _lines_start(ix: HistoryIndex) -> str | None:
    """Whether sampled rows (the last among them) still start lines, in file order. (A
    check of every offset's order would cost more than the rest together: the columns'
    checksums stand for the rows between.)"""
    rows = ix.rows
    if not rows:
        return None
    picks = sorted({rows * i // ROW_SAMPLES for i in range(ROW_SAMPLES)} | {rows - 1})
    offs = [ix.offsets[row] for row in picks]
    if not all(map(int.__lt__, offs, offs[1:])):
        return "offsets out of order"
    fd = os.open(ix.path, os.O_RDONLY)
    try:
        for row, off in zip(picks, offs, strict=True):
            got = os.pread(fd, 2, off - 1) if off else b"\n" + os.pread(fd, 1, 0)
            if got != b"\n{":
                return f"row {row} does not start a line"
    finally:
        os.close(fd)
    return None
