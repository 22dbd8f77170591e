"""Issue 31, H9 and M10: a report never writes over what it reads, and a save through
a symlinked case file reaches the link's target."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.records import attempt, header, write_jsonl
from toolstand.cli import main
from toolstand.spec.casefile_edit import append_line
from toolstand.util.canonical import sha256_hex


@pytest.fixture
def history(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "h.jsonl", [header(), attempt("case0")])


@pytest.mark.parametrize("flag", ["--junit", "--errors-csv"])
@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_report_refuses_an_output_that_is_its_input(
    history: Path, tmp_path: Path, flag: str, spelling: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = history.read_bytes()
    if spelling == "same":
        out = str(history)
    elif spelling == "dot":
        out = str(tmp_path / "." / "h.jsonl")
    elif spelling == "symlink":
        (tmp_path / "link.jsonl").symlink_to(history)
        out = str(tmp_path / "link.jsonl")
    else:
        os.link(history, tmp_path / "hard.jsonl")
        out = str(tmp_path / "hard.jsonl")
    assert main(["report", str(history), flag, out]) == 2
    err = capsys.readouterr().err
    assert "is the input history" in err and "nothing written" in err
    assert history.read_bytes() == before


def test_report_refuses_one_file_for_both_outputs(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "x.out")
    assert main(["report", str(history), "--junit", out, "--errors-csv", out]) == 2
    assert "--errors-csv and --junit name one file" in capsys.readouterr().err
    assert not Path(out).exists()


def test_report_outputs_replace_a_file_whole_and_follow_a_link(
    history: Path, tmp_path: Path
) -> None:
    target = tmp_path / "junit.xml"
    target.write_text("old")
    target.chmod(0o640)
    (tmp_path / "j.xml").symlink_to(target)
    assert main(["report", str(history), "--junit", str(tmp_path / "j.xml")]) == 0
    assert (tmp_path / "j.xml").is_symlink()
    assert target.read_text().startswith("<?xml")
    assert oct(target.stat().st_mode & 0o777) == "0o640"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_save_through_a_symlinked_case_file_edits_its_target(tmp_path: Path) -> None:
    real = tmp_path / "real" / "cases.jsonl"
    real.parent.mkdir()
    real.write_bytes(b'{"id":"a","user":"one","expect":{"kind":"text"}}\n')
    link = tmp_path / "cases.jsonl"
    link.symlink_to(real)
    line = '{"id":"b","user":"two","expect":{"kind":"text"}}'
    append_line(link, line, sha256_hex(real.read_bytes()))
    assert link.is_symlink()
    assert real.read_bytes().endswith(line.encode() + b"\n")
    assert not [p for p in real.parent.iterdir() if p.name.endswith(".tmp")]
