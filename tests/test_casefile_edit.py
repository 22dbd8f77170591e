from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolstand.spec.casefile_edit import EditRefused, append_line, delete_line, replace_line
from toolstand.util.canonical import sha256_hex

# Odd but legal bytes on purpose: spacing, a blank line, a broken line, a version line,
# and no newline at the end; none of them may change when another line is edited.
ORIGINAL = (
    b'{"cases_version": "v7"}\n'
    b'{"id":"a","user":"one","expect":{"kind":"text"}}\n'
    b"\n"
    b'{ "id" : "b", "user": "two",   "expect": {"kind": "text"} }\n'
    b"{broken\n"
    b'{"id":"c","user":"three","expect":{"kind":"text"}}'
)
NEW = '{"id":"b2","user":"два","expect":{"kind":"refusal"}}'


@pytest.fixture
def casefile(tmp_path: Path) -> Path:
    p = tmp_path / "cases.jsonl"
    p.write_bytes(ORIGINAL)
    return p


def lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def test_replace_keeps_every_other_line_byte_identical(casefile: Path) -> None:
    result = replace_line(casefile, 4, NEW, sha256_hex(ORIGINAL))
    after = casefile.read_bytes()
    assert after == result.data
    assert result.sha256 == sha256_hex(after)
    old, new = lines(ORIGINAL), lines(after)
    assert len(old) == len(new)
    assert new[3] == NEW.encode()
    assert [x for i, x in enumerate(new) if i != 3] == [x for i, x in enumerate(old) if i != 3]
    assert not after.endswith(b"\n")  # the missing final newline stays missing


def test_append_adds_the_missing_newline_and_one_line(casefile: Path) -> None:
    result = append_line(casefile, NEW, sha256_hex(ORIGINAL))
    after = casefile.read_bytes()
    assert after == ORIGINAL + b"\n" + NEW.encode() + b"\n"
    assert result.line == 7
    assert [c.id for c in result.casefile(casefile).cases] == ["a", "b", "c", "b2"]


def test_delete_removes_one_line(casefile: Path) -> None:
    delete_line(casefile, 2, sha256_hex(ORIGINAL))
    old = lines(ORIGINAL)
    assert lines(casefile.read_bytes()) == old[:1] + old[2:]


def test_crlf_file_keeps_crlf(tmp_path: Path) -> None:
    p = tmp_path / "crlf.jsonl"
    data = b'{"id":"a","user":"x","expect":{"kind":"text"}}\r\n'
    p.write_bytes(data)
    r1 = replace_line(p, 1, NEW, sha256_hex(data))
    assert p.read_bytes() == NEW.encode() + b"\r\n"
    append_line(p, NEW.replace("b2", "b3"), r1.sha256)
    assert p.read_bytes().count(b"\r\n") == 2


def test_refuses_a_file_changed_since_loaded(casefile: Path) -> None:
    sha = sha256_hex(ORIGINAL)
    casefile.write_bytes(ORIGINAL + b"\n")
    with pytest.raises(EditRefused, match="changed on disk"):
        replace_line(casefile, 2, NEW, sha)
    assert casefile.read_bytes() == ORIGINAL + b"\n"


def test_refuses_a_vanished_file(casefile: Path) -> None:
    casefile.unlink()
    with pytest.raises(EditRefused, match="no longer exists"):
        append_line(casefile, NEW, sha256_hex(ORIGINAL))
    assert not casefile.exists()


def test_refuses_a_read_only_file(casefile: Path) -> None:
    os.chmod(casefile, 0o444)
    with pytest.raises(EditRefused, match="read-only"):
        replace_line(casefile, 2, NEW, sha256_hex(ORIGINAL))
    assert casefile.read_bytes() == ORIGINAL


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"id":"c","user":"x","expect":{"kind":"text"}}', "already used on line 6"),
        ('{"id":"z","expect":{"kind":"text"}}', "exactly one of 'user'"),
        ('{"id":"z","user":"x",\n"expect":{"kind":"text"}}', "one line"),
        ("not json", "not a JSON object"),
    ],
)
def test_refuses_an_invalid_case(casefile: Path, text: str, reason: str) -> None:
    with pytest.raises(EditRefused, match=reason):
        replace_line(casefile, 2, text, sha256_hex(ORIGINAL))
    assert casefile.read_bytes() == ORIGINAL


def test_a_case_may_keep_its_own_id(casefile: Path) -> None:
    text = '{"id":"a","user":"changed","expect":{"kind":"text"}}'
    replace_line(casefile, 2, text, sha256_hex(ORIGINAL))
    assert lines(casefile.read_bytes())[1] == text.encode()


def test_keeps_the_file_mode_and_leaves_no_temp_files(casefile: Path) -> None:
    os.chmod(casefile, 0o640)
    replace_line(casefile, 2, NEW, sha256_hex(ORIGINAL))
    assert casefile.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in casefile.parent.iterdir()) == ["cases.jsonl"]
