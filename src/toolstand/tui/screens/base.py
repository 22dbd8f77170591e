"""What the app's main screens share: ``self.app`` typed as the shell that holds the
shared state (``tui/shell``, below the screens: no screen imports ``tui/app``), and the
hook the command palette calls on whichever screen is current.

Screens talk to each other only through the app: they post ``tui/messages`` and watch
the shell's reactives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

if TYPE_CHECKING:
    from toolstand.tui.shell import ToolstandShell

PaletteCommand = tuple[str, str, Callable[[], Any]]  # title, help, callback


class ToolstandScreen(Screen[None]):
    """A main screen of toolstand (one per mode)."""

    if TYPE_CHECKING:  # the app is always a ToolstandShell; Textual types it App[object]

        @property
        def app(self) -> ToolstandShell: ...  # type: ignore[override]

    def palette_commands(self) -> Iterator[PaletteCommand]:
        """Commands beyond the screen's bindings, for the command palette."""
        return iter(())
