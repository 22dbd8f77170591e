"""What a screen asks the app to do elsewhere: open a case, run one, promote an attempt.

Screens never call each other: they post one of these and the app alone switches the
mode and hands it to the screen that does it (harlequin's one message per domain step).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.message import Message

from toolstand.types import Mode


@dataclass
class OpenCase(Message):
    """Show ``case_id`` in the Cases editor."""

    case_id: str


@dataclass
class RunCase(Message):
    """Choose ``case_id`` on the Run screen (with a configured run ``target`` and a
    ``mode`` when given) and, with ``run``, run it live at once."""

    case_id: str
    target: int | None = None
    mode: Mode | None = None
    run: bool = True


@dataclass
class PromoteToCase(Message):
    """Open ``data`` in the Cases editor as a new, unsaved case; ``said`` is what was
    taken from where, for the user."""

    data: dict[str, Any]
    said: str
    # the case file of the config that holds the promoted case (None: the one open); the
    # draft is opened there, so it is saved beside its original (a BFCL category's file)
    path: Path | None = None
