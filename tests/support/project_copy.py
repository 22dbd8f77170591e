"""A private copy of the project's files (cases, contracts, prompts, the example config
and an empty runs folder), for the TUI's tests and benches: each works on its own copy."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def copy_project(into: Path, history: Path | None = None) -> Path:
    """``into`` with the project's files, and ``history`` (if given) in its runs folder."""
    for folder in ("cases", "contracts", "prompts"):
        shutil.copytree(ROOT / folder, into / folder)
    shutil.copy(ROOT / "config.example.json", into / "config.example.json")
    (into / "runs").mkdir()
    if history is not None:
        shutil.copy(history, into / "runs" / history.name)
    return into
