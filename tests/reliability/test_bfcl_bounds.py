"""Issue 31, M8: a crafted BFCL wheel cannot drive the import into all the memory there
is: members are read up to a cap, whatever their header says, and line by line."""

from __future__ import annotations

import resource
import zipfile
from pathlib import Path

import pytest

from toolstand.importers.bfcl_source import MAX_FILE_BYTES, open_source
from toolstand.util.problems import LoadError


def _bomb(path: Path, size: int) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("bfcl_eval/data/BFCL_v4_simple_python.json", "w", force_zip64=True) as f:
            chunk = b"\n" * (1 << 20)
            for _ in range(size >> 20):
                f.write(chunk)
        z.writestr("bfcl_eval/data/possible_answer/BFCL_v4_simple_python.json", "")
    return path


def test_a_member_over_the_cap_is_refused_by_name(tmp_path: Path) -> None:
    wheel = _bomb(tmp_path / "bfcl_eval-9.9-py3-none-any.whl", MAX_FILE_BYTES + (1 << 20))
    assert wheel.stat().st_size < 1 << 20  # small on disk: only its decoded size tells
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    source = open_source(str(wheel))
    with pytest.raises(LoadError) as info:
        source.entries("BFCL_v4_simple_python.json")
    source.close()
    said = str(info.value.problems[0])
    assert "BFCL_v4_simple_python.json" in said and "larger than 64 MB" in said
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 400_000  # read to the cap once, never whole, never as a list


def test_a_file_of_blank_lines_under_the_cap_reads_as_no_entries(tmp_path: Path) -> None:
    wheel = _bomb(tmp_path / "bfcl_eval-9.9-py3-none-any.whl", 8 << 20)
    source = open_source(str(wheel))
    assert source.entries("BFCL_v4_simple_python.json") == []
    source.close()


def test_a_folder_file_over_the_cap_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "BFCL_v4_simple_python.json"
    with big.open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk spent
    source = open_source(str(tmp_path))
    with pytest.raises(LoadError, match="larger than 64 MB"):
        source.read("BFCL_v4_simple_python.json")
