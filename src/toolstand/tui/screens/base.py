"""What the app's main screens share: ``self.app`` typed as the shell that holds the
shared state (``tui/shell``, below the screens: no screen imports ``tui/app``), and the
hook the command palette calls on whichever screen is current, and a screen switch
that skips restyling every widget when nothing styles depend on has changed.

Screens talk to each other only through the app: they post ``tui/messages`` and watch
the shell's reactives.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from textual import events
from textual.screen import Screen

if TYPE_CHECKING:
    from toolstand.tui.shell import ToolstandShell

PaletteCommand = tuple[str, str, Callable[[], Any]]  # title, help, callback


def _style_inputs(screen: Screen[Any]) -> tuple[object, ...]:
    """What the styles of a screen's widgets can go stale on: the CSS sources that can
    reach widgets already styled, the theme (the variables), and the app's classes and
    pseudo-classes (``:focus``, ``:dark``, ``:ansi``), which Textual re-applies to the
    current screen only.

    A widget class's default CSS is scoped to that class, and Textual adds it as the first
    widget of the class registers, before styling it: a scoped source that appears later
    names a class this screen does not hold, so it is left out. So is the screen's own
    CSS, read before any of its widgets is styled.
    """
    app = screen.app
    own = {(str(path), "") for path in screen.css_path}
    sources = tuple(
        (where, source)
        for where, source in app.stylesheet.source.items()
        if not (source.is_defaults and source.scope) and where not in own
    )
    return (sources, app.theme, app.classes, app.pseudo_classes)


class ToolstandScreen(Screen[None]):
    """A main screen of toolstand (one per mode)."""

    if TYPE_CHECKING:  # the app is always a ToolstandShell; Textual types it App[object]

        @property
        def app(self) -> ToolstandShell: ...  # type: ignore[override]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # what the widgets will be styled under as they mount (built inside the app)
        self._styled_under: tuple[object, ...] | None = None
        with contextlib.suppress(RuntimeError):  # no app running: styled at the first visit
            self._styled_under = _style_inputs(self)

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # Textual restyles every widget of a screen each time it is switched to (200 ms of
        # a 150-widget screen at 80x24), twice on the first visit, though each widget was
        # styled as it mounted and kept its styles while the screen was away: only a
        # change of what styles depend on restyles.
        inputs = _style_inputs(self)
        if inputs == self._styled_under:
            event.refresh_styles = False
        super()._on_screen_resume(event)
        self._styled_under = inputs

    async def ready_for_input(self) -> None:
        """Finish what the screen builds after its first frame (the app waits on it
        before it hands the screen a key or a click); nothing by default."""

    async def built_after_first_frame(self) -> None:
        """Until what the screen builds after its first frame is built, on its own
        schedule (``ready_for_input`` builds it now); at once by default."""

    def palette_commands(self) -> Iterator[PaletteCommand]:
        """Commands beyond the screen's bindings, for the command palette."""
        return iter(())
