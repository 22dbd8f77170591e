"""What the file picker shows of each history, read cheaply (no Textual)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any

import orjson

from toolstand.history import sidecar


@dataclass(frozen=True)
class RunFile:
    """What the file picker shows of one history, read cheaply (header and a sample)."""

    path: str
    size: int
    mtime: float
    started_at: str | None
    models: tuple[str, ...]
    attempts: int | None  # exact for a small file, else from its sidecar or estimated
    exact: bool  # None attempts: a sample too skewed to estimate from
    simulated: bool
    is_history: bool = True  # False: neither a run header nor an attempt line was seen


def describe_run_file(path: str | os.PathLike[str], sample: int = 1 << 18) -> RunFile:
    """Size, date, models and attempt count of a history without reading it all.

    Raises OSError when the file cannot be read.
    """
    name = os.fspath(path)
    st = os.stat(name)
    with open(name, "rb") as fh:
        first = fh.readline(1 << 20)
        body = fh.read(sample)
    header: Any = None
    with contextlib.suppress(orjson.JSONDecodeError):
        header = orjson.loads(first)
    if not isinstance(header, dict) or header.get("type") != "run":
        header, body = {}, first + body
    runs = [r for r in header.get("runs") or [] if isinstance(r, dict)]
    models = tuple(dict.fromkeys(f"{r.get('provider')}/{r.get('model')}" for r in runs))
    simulated = bool(runs) and all(r.get("simulated") for r in runs)
    rest = st.st_size - len(first) if header else st.st_size
    exact = len(body) >= rest
    attempts: int | None = body.count(b'{"type":"attempt"')
    is_history = bool(header) or bool(attempts)
    if not exact:
        stored = sidecar.stored_rows(name)
        if stored is not None:
            rows, end = stored
            exact = end == st.st_size
            attempts = rows if exact else rows + round((st.st_size - end) * rows / max(1, end))
        else:
            attempts = _estimate(name, body, rest, sample)
    return RunFile(
        name, st.st_size, st.st_mtime, header.get("started_at"), models, attempts, exact,
        simulated, is_history,
    )  # fmt: skip


SKEW = 8  # an unfinished line this many times the mean: the sample says nothing of the rest


def _estimate(name: str, head: bytes, rest: int, sample: int) -> int | None:
    """Lines in ``rest`` bytes from the mean length of the whole lines at the file's start
    and at its end; None when too few whole lines were seen, or one of them is so much
    longer than the others that no mean holds (a 1 MB answer among short ones)."""
    with open(name, "rb") as fh:
        fh.seek(max(0, os.fstat(fh.fileno()).st_size - sample))
        tail = fh.read(sample)
    lengths: list[int] = []
    for chunk, from_start in ((head, True), (tail, False)):
        lines = chunk.split(b"\n")
        # a sample starts (the tail) or ends (the head) inside a line: that part is cut
        cut = lines.pop() if from_start else lines.pop(0)
        lengths += [len(x) + 1 for x in lines if x]
        lengths.append(-len(cut))  # unfinished: at least this long
    whole = [n for n in lengths if n > 0]
    if len(whole) < 2:
        return None
    mean = sum(whole) / len(whole)
    if any(-n > SKEW * mean for n in lengths if n < 0) or max(whole) > SKEW * mean * 4:
        return None
    return round(rest / mean)


def list_run_files(folder: str | os.PathLike[str]) -> list[RunFile]:
    """Every *.jsonl history in ``folder``, newest first; unreadable files left out."""
    out = []
    try:
        names = [e.path for e in os.scandir(folder) if e.name.endswith(".jsonl") and e.is_file()]
    except OSError:
        return []
    for name in names:
        try:
            out.append(describe_run_file(name))
        except OSError:
            continue
    out.sort(key=lambda r: r.mtime, reverse=True)
    return out
