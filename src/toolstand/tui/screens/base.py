"""What the app's main screens share: ``self.app`` typed as the app, and the hooks the
app and the command palette call on whichever screen is current.

A screen overrides only the hooks it has something to say in; the defaults do nothing,
so the app calls them on every screen without asking what it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

if TYPE_CHECKING:
    from toolstand.tui.app import ToolstandApp

PaletteCommand = tuple[str, str, Callable[[], Any]]  # title, help, callback


class ToolstandScreen(Screen[None]):
    """A main screen of toolstand (one per mode)."""

    if TYPE_CHECKING:  # the app is always a ToolstandApp; Textual types it App[object]

        @property
        def app(self) -> ToolstandApp: ...  # type: ignore[override]

    def show_verdicts(self) -> None:
        """The cases' last known verdicts changed."""

    def show_rejudged(self, row: int, new: dict[str, Any]) -> None:
        """History row ``row`` was re-judged; ``new`` is the record with the new judgement."""

    def palette_commands(self) -> Iterator[PaletteCommand]:
        """Commands beyond the screen's bindings, for the command palette."""
        return iter(())
