"""What the history picker says of a file, from facts only (no Textual).

A count is exact (the whole file read, or its index reaching the end) or comes from the
index as far as it goes; otherwise it is unknown, never extrapolated from a sample. The
models are those the file's attempts name (from its index, else from the lines read),
not the runs its header configured: a run with ``--only`` or stopped early names fewer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import orjson

from toolstand.history import RunFile
from toolstand.history.sidecar import stored_head

SAMPLE = 1 << 18  # the bytes read from a file without an index, for its models
ATTEMPT = b'{"type":"attempt"'


@dataclass(frozen=True)
class FileFacts:
    """The attempts and models of one history, as the picker words them."""

    count: str
    models: tuple[str, ...]
    all_models: bool  # False: only the models of the part read


def file_facts(rf: RunFile) -> FileFacts:
    """The count and models of ``rf`` from its index where there is one, else read."""
    head = stored_head(rf.path)
    if head is not None:
        rows, end = int(head["rows"]), int(head["end"])
        models = tuple(str(m) for m in head.get("values", {}).get("model", []) if m is not None)
        whole = end >= rf.size
        count = (
            attempts(rows)
            if whole
            else f"{attempts(rows, '+')} (index at {end / max(1, rf.size):.0%})"
        )
        return FileFacts(count, models, whole)
    seen, whole = _models_read(rf.path)
    count = (
        attempts(rf.attempts)
        if rf.exact and rf.attempts is not None
        else "attempts unknown until opened"
    )
    return FileFacts(count, seen, whole)


def attempts(n: int, more: str = "") -> str:
    """``n`` attempts in words: "1 attempt", "1,650 attempts", "3+ attempts"."""
    return f"{n:,}{more} attempt" + ("" if n == 1 and not more else "s")


def _models_read(path: str, sample: int = SAMPLE) -> tuple[tuple[str, ...], bool]:
    """The models named by the attempt lines in the first ``sample`` bytes; whether
    that was the whole file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(sample)
            whole = fh.tell() >= os.fstat(fh.fileno()).st_size
    except OSError:
        return (), False
    lines = data.split(b"\n")
    if not whole:
        lines = lines[:-1]  # the last one is cut
    models: dict[str, None] = {}
    for line in lines:
        if not line.startswith(ATTEMPT):
            continue
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, dict) and rec.get("model") is not None:
            models[str(rec["model"])] = None
    return tuple(models), whole
