"""A sidecar file keeping a HistoryIndex between sessions (no Textual).

Indexing decodes part of every line, which in Python costs far more than reading the
bytes; a history only ever grows, so the columns of the lines already indexed are saved
beside it (``.index/<name>.idx``, a folder that ignores itself in git) and loaded the
next time, and only the new tail is indexed. A sidecar is trusted only while the file
still starts, and still reads at the saved end, with the same bytes; anything else
(a rewritten or truncated file, another version, another time zone) rebuilds it.
"""

from __future__ import annotations

import os
import threading
import time
import zlib
from array import array
from datetime import date
from pathlib import Path
from typing import Any

import orjson

from toolstand.history.index import Facet, HistoryIndex
from toolstand.history.read import HistoryWarning
from toolstand.history.sidecar_check import file_stat, fingerprint, index_problem, stale

MAGIC = b"toolstand-history-index 8\n"  # 2: odd attempts skipped; 3: latency = elapsed_ms;
# 4: the report's columns (report_rows.py); 5: checksums, the file's stat, sampled blocks;
# 6: a kind holds its run identity; 7: the stream, feedback and category facets;
# 8: times keep a stamp's fractional seconds whatever its neighbours
FOLDER = ".index"
MIN_ROWS = 20_000  # smaller files index in well under a second: not worth a file


def sidecar_path(history: str | os.PathLike[str]) -> Path:
    # beside the resolved file, as its lock is: one sidecar for every spelling of it
    p = Path(os.path.realpath(history))
    return p.parent / FOLDER / f"{p.name}.idx"


def _tz_key(ix: HistoryIndex) -> str:
    if ix.tz is not None:
        return repr(ix.tz)
    return f"local:{time.tzname}:{time.timezone}:{time.altzone}"


def _columns(ix: HistoryIndex) -> list[tuple[str, Any]]:
    cols: list[tuple[str, Any]] = [
        ("offsets", ix.offsets),
        ("times", ix.times),
        ("latency", ix.latency),
        ("attempt", ix.attempt),
        ("verdict", ix.verdict.codes),
        ("errors", ix.errors.codes),
    ]
    cols += [(f"facet:{name}", f.codes) for name, f in ix.facets.items()]
    return cols + ix.report.columns()


def _values(f: Facet) -> list[Any]:
    if f.name == "day":
        return [None if d is None else d.isoformat() for d in f.values]
    if f.name == "errors":
        return [list(v) for v in f.values]
    return list(f.values)


def save(ix: HistoryIndex) -> Path | None:
    """Write the sidecar of ``ix`` (from a worker thread); None when it is not worth it
    or the folder cannot be written."""
    if ix.rows < MIN_ROWS:
        return None
    target = sidecar_path(ix.path)
    # a name of its own: a runner and a History screen may save the same sidecar at once
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    rows, end = ix.rows, ix.end
    try:
        folder = target.parent
        folder.mkdir(exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")  # caches, never history: keep them out of git
        cols = [(name, _raw(col[:rows])) for name, col in _columns(ix)]
        stat = file_stat(ix.path)  # before the hash: a later append is a growth, not a doubt
        head = {
            "end": end,
            "rows": rows,
            "lines": ix.lines,
            "stat": stat,
            "fingerprint": fingerprint(ix.path, end),
            "tz": _tz_key(ix),
            "values": {f.name: _values(f) for f in (ix.verdict, ix.errors, *ix.facets.values())},
            "user_text": [[r, c, t] for (r, c), t in ix.user_text.items()],
            "headers": ix.headers,
            "warnings": [[w.line, w.message] for w in ix.warnings],
            "simulated": sorted(ix.simulated),
            "report": ix.report.to_head(end),
            "columns": [[name, code, len(data), zlib.crc32(data)] for name, (code, data) in cols],
        }
        blob = orjson.dumps(head)
        with open(tmp, "wb") as fh:
            fh.write(MAGIC + len(blob).to_bytes(8, "little") + blob)
            fh.write(zlib.crc32(blob).to_bytes(4, "little"))
            for _, (_, data) in cols:
                fh.write(data)
        os.replace(tmp, target)
    except (OSError, TypeError, orjson.JSONEncodeError):
        tmp.unlink(missing_ok=True)
        return None
    return target


def _raw(col: Any) -> tuple[str, bytes]:
    """(typecode, bytes) of a column; a column may grow while it is written, so the
    caller slices it to the rows first."""
    if isinstance(col, array):
        return col.typecode, col.tobytes()
    return "B", bytes(col)


def _head(fh: Any, path: str) -> dict[str, Any] | None:
    """The head of an open sidecar when its checksum holds and it still describes the
    history at ``path`` (the cheap checks: stat and sampled bytes), else None."""
    if fh.read(len(MAGIC)) != MAGIC:
        return None
    size = int.from_bytes(fh.read(8), "little")
    if size > os.fstat(fh.fileno()).st_size:
        return None  # a length no file this size holds: never allocated
    blob = fh.read(size)
    if zlib.crc32(blob) != int.from_bytes(fh.read(4), "little"):
        return None
    head = orjson.loads(blob)
    if type(head) is not dict or type(head.get("end")) is not int or head["end"] < 0:
        return None
    if sum(int(spec[2]) for spec in head["columns"]) != os.fstat(fh.fileno()).st_size - fh.tell():
        return None  # cut short, or sizes no column of this file has
    if stale(path, head["end"], head.get("stat")):
        return None
    if head.get("fingerprint") != fingerprint(path, head["end"]):
        return None
    return head


def stored_head(history: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The head of a sidecar that still matches ``history`` (rows, end, each facet's
    values), reading no column: what the file picker shows without indexing."""
    path = os.fspath(history)
    try:
        with open(sidecar_path(path), "rb") as fh:
            return _head(fh, path)
    except Exception:  # a sidecar in any doubt is no sidecar
        return None


def stored_rows(history: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(attempts, end offset) a sidecar that still matches ``history`` holds."""
    head = stored_head(history)
    try:
        return (int(head["rows"]), int(head["end"])) if head is not None else None
    except (ValueError, KeyError, TypeError):
        return None


def load(ix: HistoryIndex) -> bool:
    """Fill an empty ``ix`` from its sidecar when the sidecar is whole and still matches
    the file; False (``ix`` left empty, to be indexed from the start) on any doubt."""
    if ix.rows:
        return False
    try:
        with open(sidecar_path(ix.path), "rb") as fh:
            head = _head(fh, ix.path)
            if head is None or head["tz"] != _tz_key(ix):
                return False
            cols = _read_columns(fh, head)
        if cols is None:
            return False
        new = HistoryIndex(ix.path, tz=ix.tz)
        _fill(new, head, cols)
        if index_problem(new) is not None:
            return False
    except Exception:  # a corrupt sidecar is rebuilt, never a stuck screen
        return False
    vars(ix).update(vars(new))  # all at once: a half-filled index is never seen
    return True


def _read_columns(fh: Any, head: dict[str, Any]) -> dict[str, Any] | None:
    """The columns after the head (whose sizes ``_head`` checked), each checked against
    its checksum and the rows."""
    specs, rows = head["columns"], int(head["rows"])
    cols = {}
    for name, code, size, crc in specs:
        data = fh.read(size)
        if len(data) != size or zlib.crc32(data) != crc:
            return None
        col = cols[name] = bytearray(data) if code == "B" else array(code, data)
        if len(col) != rows:
            return None  # not this file's columns
    return cols


def _fill(ix: HistoryIndex, head: dict[str, Any], cols: dict[str, Any]) -> None:
    values = head["values"]
    for f in (ix.verdict, ix.errors, *ix.facets.values()):
        f.values.clear()
        f.ids.clear()
        vals = values[f.name]
        if f.name == "day":
            vals = [None if d is None else date.fromisoformat(d) for d in vals]
        elif f.name == "errors":
            vals = [tuple(v) for v in vals]
        f.extend(vals)  # interns them in order: code i is values[i]
        if len(f.values) != len(vals):
            raise ValueError(f"values of {f.name} repeat")  # codes would point elsewhere
        name = f.name if f in (ix.verdict, ix.errors) else f"facet:{f.name}"
        f.codes = cols[name]
    ix.offsets, ix.times = cols["offsets"], cols["times"]
    ix.latency, ix.attempt = cols["latency"], cols["attempt"]
    ix.user_text = {(r, c): t for r, c, t in head["user_text"]}
    ix.headers = head["headers"]
    ix.warnings = [HistoryWarning(ix.path, n, m) for n, m in head.get("warnings", [])]
    ix.simulated = {(p, m) for p, m in head["simulated"]}
    ix.report.fill(head["report"], cols)
    ix.lines = int(head["lines"])
    ix.end = int(head["end"])
    ix.rows = int(head["rows"])  # last: the columns are whole


def open_indexed(history: str | os.PathLike[str], *, build: bool = True) -> HistoryIndex | None:
    """The index of a whole history: its sidecar and the lines after it, when the sidecar
    is valid for the file; else, with ``build``, the file indexed once and the sidecar
    saved (as the History screen does); else None. Raises OSError when the file
    cannot be read."""
    ix = HistoryIndex(history)
    if not load(ix):
        if not build:
            return None
        ix.update()
        save(ix)
        return ix
    ix.update()
    return ix
