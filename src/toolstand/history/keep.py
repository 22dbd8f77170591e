"""A JSONL writer that keeps its history's sidecar index as it writes (no Textual).

Indexing a history means decoding part of every line, which in Python costs far more
than reading the bytes (bench/README_history.md). The process that appends an attempt
already holds the record, though, so it can put the record's row into the index without
reading the line back. IndexedWriter does that: every attempt it writes becomes a row of
a HistoryIndex (history.index.add_written), and the index is saved as the sidecar
(history.sidecar) every ``save_every`` attempts and when the writer closes. The History
screen then opens such a file by loading the sidecar and reading only the lines written
after the last save: a killed run leaves at most ``save_every`` attempts to index.

The index of what the file held before this writer opened it is built once, when the
first batch of rows becomes columns (or at the final save): from the file's own sidecar
when it has one, else by indexing those lines. A history too small for a sidecar is
never indexed at all. Keeping the index never costs a line: on any error of its own the
writer stops keeping it and says why (``index_error``). If
anything else appends to the file meanwhile (a line this writer did not write shows up
between two of its own), the index reads the file from there instead: the sidecar always
describes the file as it is, never what this writer believes it wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from toolstand.history import sidecar as history_sidecar
from toolstand.history.index import HistoryIndex
from toolstand.history.read import in_key_order
from toolstand.history.report_rows import record_facts
from toolstand.history.shape import flat_row
from toolstand.history.write import JsonlWriter

SAVE_EVERY = 10_000  # attempts between two saves: what a killed run can leave unindexed
_BATCH = 4096  # rows held as small dicts before they become columns


class IndexedWriter(JsonlWriter):
    """JsonlWriter + the sidecar index of the file it appends to."""

    def __init__(self, path: Path, *, save_every: int = SAVE_EVERY, lock: bool = True) -> None:
        super().__init__(path, lock=lock)
        self.save_every = max(1, save_every)
        self.before = self._fh.tell()  # bytes the file held when this writer opened it
        self.index: HistoryIndex | None = None  # built with the first batch (_catch_up)
        self._pending: list[tuple[int, int, dict[str, Any]]] = []  # start, end, row
        self._since_save = 0
        self._line_bytes = 0
        self.index_error: str | None = None  # why the index stopped being kept, if it did

    def write(self, record: Mapping[str, Any]) -> None:
        # attempts in the key order the fast readers slice (read.in_key_order)
        line = (
            orjson.dumps(in_key_order(record if isinstance(record, dict) else dict(record))) + b"\n"
        )
        self._put(line)
        if self.index_error is not None:
            return
        try:
            self._keep_row(record, self._fh.tell(), len(line))
        except Exception as exc:  # an index is a convenience: never lose a line for it
            self._give_up(exc)

    def _keep_row(self, record: Mapping[str, Any], end: int, size: int) -> None:
        self._line_bytes += size
        if record.get("type") == "attempt":
            row = flat_row(record)
            row.setdefault("user", None)  # never look the message up in a buffer
            row["_r"] = record_facts(record)
            self._since_save += 1
        else:
            row = dict(record)  # a header: rare
        self._pending.append((end - size, end, row))
        if len(self._pending) >= _BATCH:
            self._catch_up()
        if self._since_save >= self.save_every:
            self.keep()

    def _give_up(self, exc: Exception) -> None:
        """Stop keeping the index (the History screen will index the file itself)."""
        self.index_error = f"{type(exc).__name__}: {exc}"
        self.index, self._pending = None, []

    def close(self) -> None:
        try:
            if self.index_error is None:
                self.keep(final=True)
        except Exception as exc:
            self._give_up(exc)
        finally:
            super().close()

    def keep(self, final: bool = False) -> Path | None:
        """Bring the index up to every line written and save the sidecar; the sidecar's
        path, or None when the history is too small for one (or it cannot be written).
        ``final``: a small history is not indexed at all just to learn that. Raises
        OSError when the history cannot be read back."""
        if final and self.index is None and self._estimated_rows() < history_sidecar.MIN_ROWS:
            return None
        self._catch_up()
        self._since_save = 0
        assert self.index is not None
        return history_sidecar.save(self.index)

    def _estimated_rows(self) -> int:
        """This writer's lines plus the earlier ones, guessed from their bytes."""
        mine = len(self._pending)
        if not mine:
            return 0
        return mine + self.before * mine // max(1, self._line_bytes)

    def _catch_up(self) -> None:
        """Turn the pending rows into index columns (building the index first if need be)."""
        pending, self._pending = self._pending, []
        ix = self.index
        if ix is None:
            ix = self.index = HistoryIndex(self.path)
            history_sidecar.load(ix)
            first = pending[0][0] if pending else self.before
            if first > ix.end:
                ix.update(max_bytes=first - ix.end)  # the lines before this writer's
        if not pending:
            return
        if pending[0][0] != ix.end:  # someone else's lines in between: read the file
            ix.update()
            return
        run: list[tuple[int, dict[str, Any]]] = []
        end = ix.end
        for start, stop, row in pending:
            if start != end:  # a gap: index what chains, then read the rest
                ix.add_written(run, end)
                ix.update()
                return
            run.append((start, row))
            end = stop
        ix.add_written(run, end)
