"""A screen's status line that cuts nothing for good: a message too long for its width
ends in "… F10", and F10 (or a click on the line) shows it whole with the ones before.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.css.styles import RulesMap
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.visual import VisualType
from textual.widgets import Static

KEPT = 50  # messages a status line remembers
KEY_ID = "app.messages"  # the app's binding that shows them


class StatusLine(Static):
    """A Static that remembers what it said (newest last) and marks a cut message: the
    last row shown ends in the key that shows it whole."""

    def __init__(self, content: str = "", *, id: str | None = None) -> None:
        super().__init__(content, id=id, markup=False)
        # text -> when it was last said (HH:MM:SS), oldest first: a message said again
        # (a screen refreshing its counts) moves to the end rather than filling the log
        self.said: dict[str, str] = {}
        self._remember(content)

    def _remember(self, content: object) -> None:
        text = str(content)
        if not text:
            return
        self.said.pop(text, None)
        self.said[text] = time.strftime("%H:%M:%S")
        if len(self.said) > KEPT:
            del self.said[next(iter(self.said))]

    def update(self, content: VisualType = "", *, layout: bool = True, keep: bool = True) -> None:
        """Show ``content``; ``keep=False`` for a passing one (a clock's tick) not worth
        remembering."""
        if keep:
            self._remember(content)
        super().update(content, layout=layout)

    @property
    def is_cut(self) -> bool:
        """The message, wrapped as the line's style wraps it, needs more rows than it has."""
        width, height = self.size
        if width <= 0:
            return False
        styles = self.styles
        rules: RulesMap = {
            "text_wrap": styles.text_wrap,
            "text_overflow": styles.text_overflow,
            "line_pad": styles.line_pad,
        }
        return Content(str(self.content)).get_height(rules, width) > max(1, height)

    def _key(self) -> str:
        for active in self.screen.active_bindings.values():
            if active.binding.id == KEY_ID:
                return self.app.get_key_display(active.binding)
        return ""

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)
        width, height = self.size
        if y != max(1, height) - 1 or not self.is_cut:
            return line
        hint = Strip([Segment(f"… {self._key()}".rstrip(), self.rich_style + Style(bold=True))])
        said = Content(line.text.rstrip()).cell_length  # where the row's words end
        keep = min(said + 1, max(0, width - hint.cell_length))
        return Strip.join([line.crop(0, keep), hint]).adjust_cell_length(width, self.rich_style)

    def on_resize(self) -> None:
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.show_log()

    def show_log(self) -> None:
        """Open the log of this line's messages, the current one whole at the top."""
        self.app.push_screen(MessageLog([(when, text) for text, when in self.said.items()]))


class MessageLog(ModalScreen[None]):
    """A status line's messages, newest first, wrapped whole; Esc closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,q,f10", "dismiss(None)", "Close", tooltip="Close the messages", id="log.close"
        ),
    ]
    AUTO_FOCUS = "#log-frame"
    DEFAULT_CSS = """
    MessageLog { align: center middle; }
    MessageLog > #log-frame {
        width: 90%; height: 80%; border: round $accent; background: $surface;
        border-title-color: $text; padding: 0 1;
    }
    MessageLog .log-said { margin-bottom: 1; }
    MessageLog .log-said.-now { text-style: bold; }
    """

    def __init__(self, said: list[tuple[str, str]]) -> None:
        super().__init__()
        self.messages = said[::-1]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="log-frame") as frame:
            frame.border_title = "Messages · newest first · Esc closes"
            for n, (when, text) in enumerate(self.messages):
                yield Static(
                    f"{when}  {text}",
                    classes="log-said -now" if n == 0 else "log-said",
                    markup=False,
                )
            if not self.messages:
                yield Static("nothing said yet", classes="log-said", markup=False)
