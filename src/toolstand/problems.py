"""Problems the user can cause, each naming the file, the line and the JSON path."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    path: str
    message: str
    severity: str = "error"  # "error" | "warning"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        label = "" if self.severity == "error" else f"{self.severity}: "
        return f"{where}: {self.path or '$'}: {label}{self.message}"


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
