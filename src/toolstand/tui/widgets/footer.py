"""Textual's Footer, rebuilt only when the keys it shows change.

Textual's Footer throws its keys away and builds new ones on every binding update: each
focus change and each switch of screen. Each new key then restyles itself twice while
it mounts (its ``compact`` starts True and the footer's False is bound onto it), about
half the cost of switching to a screen that is already built. This one keeps its keys
while what they would show is the same, and builds new ones already non-compact.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey

Shown = tuple[object, ...]


class Footer(TextualFooter):
    """The keys of the focused widget and its screen, as Textual's Footer shows them."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: Shown | None = None  # what the keys on screen were built from

    def _showing(self) -> Shown:
        """Everything Textual's compose reads to build the keys."""
        app = self.app
        keys = tuple(
            (b.key, app.get_key_display(b), b.description, b.action, b.group, b.show, on, tip)
            for _node, b, on, tip in self.screen.active_bindings.values()
        )
        return (self.compact, self.show_command_palette, self.combine_groups, keys)

    def compose(self) -> ComposeResult:
        built = False
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                built = True
                if not widget.has_class("-command-palette"):  # the one key left unbound
                    # as the footer's compact will make it: no restyle when bound
                    widget.set_reactive(FooterKey.compact, self.compact)
            yield widget
        self._shown = self._showing() if built else None

    async def recompose(self) -> None:
        if self._shown is not None and self.is_attached and self._showing() == self._shown:
            return
        await super().recompose()
