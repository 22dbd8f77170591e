"""The app's screens as modes, each with its jump keys.

A screen module may be missing (History and Report land in a later issue): its mode
then shows a placeholder. A screen module that exists but fails to import is a bug and
is not hidden.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Footer, Static

from toolstand.tui.widgets.nav import NavBar


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


class PlaceholderScreen(Screen[None]):
    """Stands in for a screen whose module is not there yet."""

    def __init__(self, entry: ScreenEntry) -> None:
        super().__init__(name=entry.mode)
        self.entry = entry

    def compose(self) -> ComposeResult:
        yield NavBar(self.entry.mode)
        with Middle(), Center():
            yield Static(f"{self.entry.title}: not built yet", markup=False, id="placeholder")
        yield Footer()


def factory(entry: ScreenEntry) -> Callable[[], Screen[None]]:
    """A callable for App.add_mode that builds the entry's screen, or its placeholder."""

    def make() -> Screen[None]:
        try:
            module = importlib.import_module(entry.module)
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if not (entry.module == missing or entry.module.startswith(missing + ".")):
                raise  # the module is there but imports something absent: a bug
            return PlaceholderScreen(entry)
        screen: Screen[None] = getattr(module, entry.cls)()
        return screen

    return make
