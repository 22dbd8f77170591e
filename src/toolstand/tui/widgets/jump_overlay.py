"""Jump mode: a letter over every pane and field that takes focus; pressing it focuses it.

The targets are the screen's focus chain as it stands (what Tab would visit), those drawn
on screen only, each lettered at its top-left corner in the order Tab visits them.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Label

# the home row first: the keys under the fingers go to the first panes Tab would visit
LETTERS = "asdfghjklqwertyuiopzxcvbnm"


def jump_targets(screen: Screen[object]) -> dict[str, Widget]:
    """{letter: widget} for each focusable widget of ``screen`` drawn on it now."""
    area = screen.region
    shown = [w for w in screen.focus_chain if w.region.area and area.contains_region(w.region)]
    return dict(zip(LETTERS, shown, strict=False))


class JumpOverlay(ModalScreen[Widget | None]):
    """The letters over the screen below; a letter dismisses it with its widget, Esc with
    None, and every other key is swallowed (a Tab must not move the focus beneath)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close", tooltip="Close jump mode", id="jump.close"),
    ]
    DEFAULT_CSS = """
    JumpOverlay { background: $background 30%; }
    JumpOverlay > .jump-letter {
        position: absolute; width: auto; height: 1; padding: 0 1;
        background: $accent; color: $text; text-style: bold;
    }
    JumpOverlay > #jump-info {
        dock: bottom; width: 1fr; height: 1; padding: 0 1;
        background: $accent-muted; color: $text;
    }
    """

    def __init__(self, targets: dict[str, Widget]) -> None:
        super().__init__()
        self.targets = targets

    def compose(self) -> ComposeResult:
        for letter, widget in self.targets.items():
            label = Label(letter, classes="jump-letter", id=f"jump-{letter}", markup=False)
            label.styles.offset = (widget.region.x, widget.region.y)
            yield label
        said = "press a letter to focus its pane · Esc closes"
        yield Label(
            said if self.targets else "nothing here takes focus · Esc closes", id="jump-info"
        )

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            return  # the binding's
        event.stop()
        event.prevent_default()
        widget = self.targets.get(event.character or "")
        if widget is not None:
            self.dismiss(widget)
