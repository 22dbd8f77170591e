"""Issue 31 M7: a sidecar is trusted only while it is whole and still describes its
history. A same-size edit, a replaced file, a corrupt head, column bytes flipped or a
forged column all mean "rebuild": load() says False (never raises), and the index read
from the file is the truth. An appended history keeps its sidecar."""

from __future__ import annotations

import os
import shutil
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, err, header, judgement
from toolstand.history import in_key_order
from toolstand.history import sidecar as history_sidecar
from toolstand.history.index import HistoryIndex
from toolstand.reporting.metrics import compute_files

PASS = b'"judgement":{"verdict":"pass"'
FAIL = b'"judgement":{"verdict":"fail"'


@pytest.fixture(autouse=True)
def small_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1)  # the real floor is 20,000 rows


def _history(path: Path, n: int = 240) -> Path:
    """A history of n passing attempts, over 2 * 64 KB so that blocks are sampled."""
    recs = [header()]
    for i in range(n):
        rec = attempt(("direct_lookup", "missing_id")[i % 2], 1 + i // 2)
        rec["request"]["body"]["messages"][0]["content"] = "padding " * 100
        recs.append(in_key_order(rec))
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))
    assert path.stat().st_size > 3 * (1 << 16)
    return path


def _saved(tmp_path: Path) -> tuple[Path, HistoryIndex]:
    path = _history(tmp_path / "run.jsonl")
    ix = HistoryIndex(path)
    ix.update()
    assert history_sidecar.save(ix) is not None
    return path, ix


def _verdicts(ix: HistoryIndex) -> Counter[str]:
    return Counter(ix.verdict_of(r) for r in range(ix.rows))


def _reopened(path: Path) -> tuple[bool, HistoryIndex]:
    ix = HistoryIndex(path)
    loaded = history_sidecar.load(ix)
    ix.update()
    return loaded, ix


def _flip_middle(path: Path, count: int) -> None:
    """Flip ``count`` passes to fails in the middle half, in place, at the same size."""
    data = bytearray(path.read_bytes())
    lo, hi = len(data) // 4, 3 * len(data) // 4
    data[lo:hi] = bytes(data[lo:hi]).replace(PASS, FAIL, count)
    with open(path, "r+b") as fh:
        fh.write(data)


def test_a_same_size_edit_in_place_rebuilds(tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    _flip_middle(path, 1)  # one verdict, far from either end: the old check missed it
    loaded, ix = _reopened(path)
    assert not loaded
    assert _verdicts(ix) == Counter({"pass": 239, "fail": 1})


def test_an_edit_that_keeps_the_mtime_is_caught_by_the_sampled_blocks(tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    st = path.stat()
    _flip_middle(path, 60)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as if never written
    loaded, ix = _reopened(path)
    assert not loaded
    assert _verdicts(ix)["fail"] == 60


def test_a_replaced_file_rebuilds_and_an_appended_one_keeps_its_sidecar(tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    with open(path, "ab") as fh:  # a resumed run: the sidecar still holds
        fh.write(
            orjson.dumps(in_key_order(attempt("x", 9, j=judgement(errors=[err("wrong_tool")]))))
            + b"\n"
        )
    loaded, ix = _reopened(path)
    assert loaded and ix.rows == 241 and _verdicts(ix)["fail"] == 1
    history_sidecar.save(ix)
    copy = tmp_path / "copy.jsonl"
    shutil.copy(path, copy)
    os.replace(copy, path)  # what an editor's save does: same bytes, another file
    assert not history_sidecar.load(HistoryIndex(path))


def _rewrite(path: Path, change: Callable[[dict[str, Any], bytearray], None]) -> Path:
    """Rewrite the sidecar of ``path`` with its head and columns changed, checksums
    made again (a forger's sidecar) unless ``change`` breaks them itself."""
    target = history_sidecar.sidecar_path(path)
    raw = target.read_bytes()
    m = len(history_sidecar.MAGIC)
    n = int.from_bytes(raw[m : m + 8], "little")
    head = orjson.loads(raw[m + 8 : m + 8 + n])
    cols = bytearray(raw[m + 8 + n + 4 :])
    change(head, cols)
    pos = 0
    for spec in head["columns"]:
        spec[3] = zlib.crc32(cols[pos : pos + spec[2]])
        pos += spec[2]
    blob = orjson.dumps(head)
    crc = zlib.crc32(blob).to_bytes(4, "little")
    target.write_bytes(history_sidecar.MAGIC + len(blob).to_bytes(8, "little") + blob + crc + cols)
    return target


def _column(head: dict[str, Any], name: str) -> slice:
    pos = 0
    for spec in head["columns"]:
        if spec[0] == name:
            return slice(pos, pos + spec[2])
        pos += spec[2]
    raise KeyError(name)


def _set_code(name: str, code: int) -> Callable[[dict[str, Any], bytearray], None]:
    def change(head: dict[str, Any], cols: bytearray) -> None:
        cols[_column(head, name).start + 7] = code

    return change


FORGED: dict[str, Callable[[dict[str, Any], bytearray], None]] = {
    "user_text": lambda h, c: h.__setitem__("user_text", "x"),
    "huge_column": lambda h, c: h["columns"][0].__setitem__(2, 2**40),
    "values_reversed": lambda h, c: h["values"].__setitem__(
        "verdict", list(reversed(h["values"]["verdict"]))
    ),
    "values_repeat": lambda h, c: h["values"]["case"].append(h["values"]["case"][0]),
    "verdict_code_past_values": _set_code("verdict", 200),
    "case_code_past_values": _set_code("facet:case", 9),
    "kind_past_kinds": _set_code("r:kind", 250),
    "offset_not_a_line": lambda h, c: c.__setitem__(
        slice(_column(h, "offsets").start + 8 * 3, _column(h, "offsets").start + 8 * 4),
        (12345).to_bytes(8, "little"),
    ),
    "kind_of_another_shape": lambda h, c: h["report"]["kinds"][0].__setitem__(8, '{"x":1}'),
    "end_past_the_file": lambda h, c: h.__setitem__("end", 10**12),
}


def _broken_crc(path: Path) -> None:
    target = history_sidecar.sidecar_path(path)
    raw = bytearray(target.read_bytes())
    raw[-5] ^= 0xFF  # a flipped byte in the last column
    target.write_bytes(raw)


def _cut(path: Path) -> None:
    target = history_sidecar.sidecar_path(path)
    target.write_bytes(target.read_bytes()[:-100])


def _garbage(path: Path) -> None:
    target = history_sidecar.sidecar_path(path)
    target.write_bytes(history_sidecar.MAGIC + b"\xff" * 64)


# faults the file picker (which reads the head alone) sees too
HEAD_FAULTS = ("huge_column", "end_past_the_file", "cut_short", "garbage")


@pytest.mark.parametrize("how", [*sorted(FORGED), "flipped_byte", "cut_short", "garbage"])
def test_a_corrupt_or_forged_sidecar_is_rebuilt_never_raised(tmp_path: Path, how: str) -> None:
    path, cold = _saved(tmp_path)
    if how in FORGED:
        _rewrite(path, FORGED[how])
    else:
        {"flipped_byte": _broken_crc, "cut_short": _cut, "garbage": _garbage}[how](path)
    ix = HistoryIndex(path)
    assert not history_sidecar.load(ix)
    assert ix.rows == 0 and ix.end == 0  # left empty, nothing half-filled
    assert history_sidecar.stored_head(path) is None or how not in HEAD_FAULTS
    ix.update()
    assert ix.rows == cold.rows and list(ix.offsets) == list(cold.offsets)
    # the report rebuilds too, and counts every attempt
    report = compute_files([path], index=True)
    assert sum(g.attempted for g in report.groups) == 240


def test_an_untouched_sidecar_still_loads_and_equals_the_cold_index(tmp_path: Path) -> None:
    path, cold = _saved(tmp_path)
    _rewrite(path, lambda h, c: None)  # the checksums made again: the same sidecar
    loaded, ix = _reopened(path)
    assert loaded
    assert [ix.verdict_of(r) for r in range(ix.rows)] == [
        cold.verdict_of(r) for r in range(cold.rows)
    ]
    assert ix.user_text == cold.user_text and ix.headers == cold.headers
