"""The app's screens as modes, each with its jump keys.

A screen module that is missing or fails to import is a bug and is not hidden.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from textual.screen import Screen


@dataclass(frozen=True)
class ScreenEntry:
    mode: str
    title: str
    key: str  # works everywhere
    digit: str  # works when no text field has focus
    module: str
    cls: str


SCREENS: tuple[ScreenEntry, ...] = (
    ScreenEntry("cases", "Cases", "f1", "1", "toolstand.tui.screens.cases", "CasesScreen"),
    ScreenEntry("run", "Run", "f2", "2", "toolstand.tui.screens.run", "RunScreen"),
    ScreenEntry("history", "History", "f3", "3", "toolstand.tui.screens.history", "HistoryScreen"),
    ScreenEntry("report", "Report", "f4", "4", "toolstand.tui.screens.report", "ReportScreen"),
)


def factory(entry: ScreenEntry) -> Callable[[], Screen[None]]:
    """A callable for App.add_mode that builds the entry's screen."""

    def make() -> Screen[None]:
        module = importlib.import_module(entry.module)
        screen: Screen[None] = getattr(module, entry.cls)()
        return screen

    return make
