"""Problems the user can cause, each naming the file, the line and the JSON path."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from toolstand.util.jsonpos import first_duplicate
from toolstand.util.printable import visible


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    path: str
    message: str
    severity: str = "error"  # "error" | "warning"

    def __str__(self) -> str:
        """file:line: path: message, on one line; a case id, a key or a config value
        quoted in it cannot drive the terminal (control characters spelled out)."""
        where = f"{self.file}:{self.line}" if self.line else self.file
        label = "" if self.severity == "error" else f"{self.severity}: "
        return visible(f"{where}: {self.path or '$'}: {label}{self.message}")


class LoadError(Exception):
    """A file toolstand cannot use; carries every problem found in it."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def json_path(parts: Sequence[str | int]) -> str:
    """Render ("expect", "arguments", 0) as $.expect.arguments[0]."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def read_file(path: str | Path) -> bytes:
    """A file's bytes; a file that cannot be read is a LoadError naming it."""
    p = Path(path)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise LoadError([Problem(str(p), None, "$", f"cannot read: {exc.strerror}")]) from None


def utf8_text(data: str | bytes, file: str) -> str:
    """The file's text; bytes that are not UTF-8 are a LoadError naming their line."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise LoadError(
            [Problem(file, line, "$", f"not UTF-8 text: byte {exc.start + 1} is {exc.reason}")]
        ) from None


def json_document(data: str | bytes, file: str) -> tuple[str, Any]:
    """The file's text and the one JSON value it holds; text that is not UTF-8, or not
    JSON, is a LoadError naming its line."""
    text = utf8_text(data, file)
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise LoadError(
            [Problem(file, getattr(exc, "lineno", None), "$", f"not JSON: {exc}")]
        ) from None
    reject_duplicate_keys(text, file, parsed=value)
    return text, value


class _Duplicate(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) < len(pairs):
        raise _Duplicate
    return value


_UNPARSED: Any = object()


def _as_orjson_writes(text: str, value: Any) -> bool:
    """Whether ``text`` is exactly what orjson writes for ``value``: then no key is
    written twice (a dict holds each once), with no second parse. Files toolstand
    writes (a BFCL import, saved cases) are in this form; hand-written ones mostly not."""
    try:
        return orjson.dumps(value) == text.encode("utf-8")
    except (TypeError, UnicodeEncodeError):  # past orjson's integers; a lone surrogate
        return False


def reject_duplicate_keys(
    text: str, file: str, line: int | None = None, parsed: Any = _UNPARSED
) -> None:
    """A LoadError naming the first key written twice in one object of ``text`` (which
    parses): orjson, like every JSON reader, would silently keep the last. ``line``: the
    line to name, for text that is one line of a larger file; ``parsed``: ``text`` as
    orjson read it, when the caller has it."""
    if parsed is not _UNPARSED and _as_orjson_writes(text, parsed):
        return
    try:
        # the C scanner with a hook per object: cheap enough for every case line
        json.loads(text, object_pairs_hook=_unique_pairs)
        return
    except _Duplicate:
        pass
    except (ValueError, RecursionError):  # what only orjson reads: nothing to point at
        return
    found = first_duplicate(text)
    if found is None:
        return
    path, at = found
    key = visible(str(path[-1]))  # a key may hold control characters: show them spelled
    raise LoadError(
        [
            Problem(
                file,
                line or at,
                json_path(path),
                f"duplicate key '{key}' in one object (JSON keeps only the last): write it once",
            )
        ]
    )


def pydantic_message(err: Any) -> str:
    """One pydantic error in the words toolstand uses for every file it loads."""
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind == "literal_error":
        return f"{err['msg']} (got {err.get('input')!r})"
    got = err.get("input")
    if kind.endswith("_type") and isinstance(got, str | int | float | bool):
        # strict values: say what was written, "3" and 3 read alike in a message
        return f"{err['msg']} (got {visible(repr(got)[:80])})"
    return str(err["msg"]).removeprefix("Value error, ")
