"""Atomic edits of a case file: replace, append or delete one line, nothing else.

Every other line keeps its exact bytes (line endings, spacing, key order, blank lines,
broken lines). The new content goes to a temporary file in the same folder, is flushed
to disk and then moved over the original with ``os.replace``, so a crash leaves either
the old file or the new one, never half of each; a symlinked case file is written at
the end of its link, which stays a link. An edit is refused, with the reason,
when the file vanished, is read-only, or changed on disk since it was loaded (its
SHA-256 differs from the one the editor holds): the caller keeps its draft.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from toolstand.spec.cases import CaseFile, parse_case_line, parse_cases
from toolstand.util.atomic import replacing, resolved
from toolstand.util.canonical import sha256_hex
from toolstand.util.problems import LoadError


class EditRefused(Exception):
    """An edit that was not written; ``reason`` says why in words a user can act on."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class EditResult:
    """The file as written: its bytes, their hash, and the line the edit landed on."""

    data: bytes
    sha256: str
    line: int | None

    def casefile(self, path: str | Path) -> CaseFile:
        return parse_cases(self.data, str(path), strict=False)


def _read_checked(path: Path, expected_sha256: str) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise EditRefused(f"{path} no longer exists; nothing was written") from None
    except OSError as exc:
        raise EditRefused(f"cannot read {path}: {exc.strerror}") from None
    if sha256_hex(data) != expected_sha256:
        raise EditRefused(
            f"{path} changed on disk since it was loaded; reload it (your draft is kept)"
        )
    # the mode bits too: root passes os.access on a file the user marked read-only
    if not os.access(path, os.W_OK) or not path.stat().st_mode & 0o222:
        raise EditRefused(f"{path} is read-only; nothing was written")
    folder = resolved(path).parent  # where the temporary file goes: the link's target's
    if not os.access(folder, os.W_OK | os.X_OK):
        raise EditRefused(f"the folder {folder} is read-only; nothing was written")
    return data


def _newline(lines: list[bytes]) -> bytes:
    # keep the file's own convention: CRLF when its first line ends that way
    return b"\r\n" if lines and lines[0].endswith(b"\r") else b"\n"


def _split(data: bytes) -> tuple[list[bytes], bool]:
    """Lines without their "\\n", and whether the file ended with one."""
    if not data:
        return [], True
    parts = data.split(b"\n")
    if parts[-1] == b"":
        return parts[:-1], True
    return parts, False


def _join(lines: list[bytes], trailing: bool) -> bytes:
    if not lines:
        return b""
    return b"\n".join(lines) + (b"\n" if trailing else b"")


def _write_atomic(path: Path, data: bytes) -> None:
    # through to the resolved file: a symlinked case file keeps its link (util.atomic)
    try:
        with replacing(path, fsync=True) as fh:
            fh.write(data)
    except OSError as exc:
        raise EditRefused(f"could not write {path}: {exc.strerror}") from None


def _one_line(text: str) -> bytes:
    if "\n" in text or "\r" in text:
        raise EditRefused("a case must be one line of JSON (it holds a line break)")
    return text.encode("utf-8")


def check_line(path: Path, data: bytes, text: str, own_line: int | None) -> None:
    """Refuse a line that is not a valid case, or whose id another line already holds."""
    try:
        case = parse_case_line(text, str(path), own_line or 0)
    except LoadError as exc:
        raise EditRefused("; ".join(f"{p.path}: {p.message}" for p in exc.problems)) from None
    current = parse_cases(data, str(path), strict=False)
    for line in current.lines:
        if line.number != own_line and line.case is not None and line.case.id == case.id:
            raise EditRefused(f"id {case.id!r} is already used on line {line.number}")


def replace_line(path: str | Path, number: int, text: str, expected_sha256: str) -> EditResult:
    """Put ``text`` in place of line ``number`` (1-based)."""
    p = Path(path)
    data = _read_checked(p, expected_sha256)
    lines, trailing = _split(data)
    if not 1 <= number <= len(lines):
        raise EditRefused(f"{p} has no line {number}; reload it (your draft is kept)")
    check_line(p, data, text, number)
    new = _one_line(text)
    if lines[number - 1].endswith(b"\r"):
        new += b"\r"
    lines[number - 1] = new
    out = _join(lines, trailing)
    _write_atomic(p, out)
    return EditResult(out, sha256_hex(out), number)


def append_line(path: str | Path, text: str, expected_sha256: str) -> EditResult:
    """Add ``text`` as a new last line; a missing final newline is added first."""
    p = Path(path)
    data = _read_checked(p, expected_sha256)
    check_line(p, data, text, None)
    lines, _ = _split(data)
    newline = _newline(lines)
    new = _one_line(text) + (newline.rstrip(b"\n"))
    if data and not data.endswith(b"\n"):
        data += newline
    out = data + new + b"\n"
    _write_atomic(p, out)
    return EditResult(out, sha256_hex(out), len(lines) + 1)


def delete_line(path: str | Path, number: int, expected_sha256: str) -> EditResult:
    """Remove line ``number`` (1-based) and its line break."""
    p = Path(path)
    data = _read_checked(p, expected_sha256)
    lines, trailing = _split(data)
    if not 1 <= number <= len(lines):
        raise EditRefused(f"{p} has no line {number}; reload it (your draft is kept)")
    del lines[number - 1]
    out = _join(lines, trailing)
    _write_atomic(p, out)
    return EditResult(out, sha256_hex(out), None)
