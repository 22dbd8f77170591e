"""What the file picker shows of each history, read cheaply (no Textual)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True)
class RunFile:
    """What the file picker shows of one history, read cheaply (header and a sample)."""

    path: str
    size: int
    mtime: float
    started_at: str | None
    models: tuple[str, ...]
    attempts: int  # exact for a small file, else estimated from a sample's line length
    exact: bool
    simulated: bool


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
    lines = body.count(b"\n")
    rest = st.st_size - len(first) if header else st.st_size
    exact = len(body) >= rest
    if exact:
        attempts = body.count(b'{"type":"attempt"')
    else:
        attempts = round(rest / (len(body) / lines)) if lines else 0
    return RunFile(
        name, st.st_size, st.st_mtime, header.get("started_at"), models, attempts, exact, simulated
    )


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
