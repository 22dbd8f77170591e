"""Append-only JSONL: one line per record, flushed the moment it is written."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any, BinaryIO, Self

import orjson

from toolstand.history.lock import HistoryLock, os_error
from toolstand.history.read import in_key_order
from toolstand.util.problems import LoadError, Problem

# provider, model, api, run identity (spec/identity.py), case_id, mode, attempt, stream
# arm, feedback arm (None without repairs)
AttemptKey = tuple[str, str, str, str | None, str, str, int, bool, str | None]


def attempt_key(rec: dict[str, Any], identity: str | None = None) -> AttemptKey:
    """The record's place in the matrix; ``identity`` its run's: by default the record's
    own ``run_identity`` (for an older record without one, the caller's from its header)."""
    return (
        rec["provider"],
        rec["model"],
        rec["api"],
        identity if identity is not None else rec.get("run_identity"),
        rec["case_id"],
        rec["mode"],
        int(rec["attempt"]),
        rec.get("stream") is True,  # the stream arm; records before it were not streamed
        rec.get("feedback"),
    )


KEPT = "the lines already written are kept"


class HistoryWriteError(LoadError):
    """The history cannot be written (read-only, disk full, file too large). Every line
    already written stays as it was: lines go out whole and flushed, one at a time."""

    def __init__(self, path: Path, exc: OSError, note: str = KEPT) -> None:
        self.path = path
        self.os_error = exc
        super().__init__([Problem(str(path), None, "$", f"cannot write: {os_error(exc)}; {note}")])


class JsonlWriter:
    """Appends records; each write is one ``write`` of a whole line, then a flush, so a
    killed process leaves at most one torn line at the end.

    It holds the history's lock (history.lock) while open, so a second writer is
    refused; ``lock=False`` when the caller already holds it. Any OS error while
    opening or writing is a HistoryWriteError naming the file."""

    def __init__(self, path: Path, *, lock: bool = True) -> None:
        self.path = path
        self._lock = HistoryLock(path) if lock else None
        self._failed = False
        if self._lock is not None:
            self._lock.acquire()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh: IO[bytes] = path.open("ab")
        except OSError as exc:
            self._release()
            raise HistoryWriteError(path, exc) from None

    def write(self, record: Mapping[str, Any]) -> None:
        self._put(
            orjson.dumps(in_key_order(record if isinstance(record, dict) else dict(record))) + b"\n"
        )

    def _put(self, line: bytes) -> None:
        try:
            self._fh.write(line)
            self._fh.flush()
        except OSError as exc:
            self._failed = True
            raise HistoryWriteError(self.path, exc) from None

    def close(self) -> None:
        try:
            self._fh.close()
        except OSError as exc:
            # after a failed write the buffer still holds that line: it is lost either way
            if not self._failed:
                raise HistoryWriteError(self.path, exc) from None
        finally:
            self._release()

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_lines(path: Path, warn: IO[str] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every well-formed JSON object line with its number; a torn or broken line is
    skipped with a warning naming file:line, never fatal."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                if warn is not None:
                    torn = "" if raw.endswith(b"\n") else " (torn last line, a killed run)"
                    print(
                        f"warning: {path}:{number}: skipped a line that is not JSON{torn}",
                        file=warn,
                    )
                continue
            if isinstance(obj, dict):
                yield number, obj


def repair_tail(path: Path) -> bool:
    """Cut a torn last line (no newline) so that appending starts on a fresh line.
    Returns True when something was cut. Nothing complete is ever touched: a last line
    that is a whole JSON object and lacks only its newline gets the newline instead."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb+") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - 1))
        if fh.read(1) == b"\n":
            return False
        # walk back to the last newline
        pos = size
        chunk = 65536
        while pos > 0:
            start = max(0, pos - chunk)
            fh.seek(start)
            data = fh.read(pos - start)
            idx = data.rfind(b"\n")
            if idx >= 0:
                return _end_tail(fh, start + idx + 1, size)
            pos = start
        return _end_tail(fh, 0, size)


def _end_tail(fh: BinaryIO, tail: int, size: int) -> bool:
    """End the file's last line, which starts at ``tail``: with a newline when it is a
    whole record (False: nothing cut), else by cutting it (True)."""
    fh.seek(tail)
    last = fh.read(size - tail)
    try:
        whole = isinstance(orjson.loads(last), dict)
    except orjson.JSONDecodeError:
        whole = False
    if whole:
        fh.seek(size)
        fh.write(b"\n")
        return False
    fh.truncate(tail)
    return True
