"""Issue 31 L10 and L2: a line longer than the bound stops the reading with one warning
naming the file and the limit (report, the TUI's paste-file); the
index never calls a healthy history's unread part a torn last line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.records import attempt, header, write_jsonl
from toolstand.history import read as history_read
from toolstand.history.index import HistoryIndex
from toolstand.history.read import in_key_order
from toolstand.reporting.metrics import compute_files
from toolstand.tui.model.paste_file import read_paste_file


def test_report_stops_at_a_line_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_read, "MAX_LINE_BYTES", 4096)
    path = write_jsonl(
        tmp_path / "run.jsonl", [header(), in_key_order(attempt("a"))], tail=b"0" * 10_000
    )
    report = compute_files([path], index=False)
    assert [str(w) for w in report.warnings] == [
        f"{path}:3: line longer than 4096 bytes; it and the rest of the file not read"
    ]
    assert sum(g.attempted for g in report.groups) == 1


def test_no_torn_tail_while_indexing(tmp_path: Path) -> None:
    recs = [header(), *(in_key_order(attempt(f"c{i}", 1)) for i in range(200))]
    path = write_jsonl(tmp_path / "run.jsonl", recs)
    ix = HistoryIndex(str(path))
    ix.update(max_bytes=2000)
    assert 0 < ix.end < path.stat().st_size
    assert ix.tail is None


def test_paste_file_is_bounded(tmp_path: Path) -> None:
    big = tmp_path / "body.json"
    big.write_bytes(b"x" * 2000)
    with pytest.raises(ValueError, match=r"body\.json is larger than 1000 bytes; not loaded"):
        read_paste_file(big, limit=1000)
    assert read_paste_file(big, limit=2000) == "x" * 2000
