"""Textual's Footer, rebuilt only when the keys it shows change.

Textual's Footer throws its keys away and builds new ones on every binding update: each
focus change and each switch of screen. Each new key then restyles itself twice while
it mounts (its ``compact`` starts True and the footer's False is bound onto it), about
half the cost of switching to a screen that is already built. This one keeps its keys
while what they would show is the same, relabels them in place when only their labels
change (a run's ctrl+g swapped for its cancel key and back: the same number of keys in
the same groups), and builds new ones already non-compact. A relabel is done at once,
in the frame of whatever changed the keys: Textual's recompose waits for the next
refresh, which draws the screen once more (~30-50 ms at 80x24) for a label.
"""

from __future__ import annotations

from itertools import groupby
from typing import cast

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey

Shown = tuple[object, ...]
Entry = tuple[object, ...]  # (key, display, description, action, group, show, on, tip)
Label = tuple[str, str, str, str, str]  # a key as built: key, display, description, action, tip


def _layout(keys: tuple[Entry, ...]) -> tuple[list[object], list[Label]]:
    """How Textual's Footer lays ``keys`` out (one key per action, a group of several
    keys under its label): the shape (groups, their labels, which keys are disabled)
    and each key's labels, in the order built."""
    first: dict[object, Entry] = {}
    for entry in keys:
        if entry[5]:  # shown
            first.setdefault(entry[3], entry)
    shape: list[object] = []
    labels: list[Label] = []
    for group, run in groupby(first.values(), lambda entry: entry[4]):
        entries = list(run)
        grouped = group is not None and len(entries) > 1
        shape.append((group if grouped else None, [not entry[6] for entry in entries]))
        for key, display, description, action, _group, _show, _on, tip in entries:
            text = str(description)
            tooltip = str(tip or text) if grouped else str(tip or "")
            labels.append((str(key), str(display), "" if grouped else text, str(action), tooltip))
    return shape, labels


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

    def _relabel(self, now: Shown) -> bool:
        """Relabel the keys on screen as ``now`` would build them, when it lays out the
        same keys in the same groups (only labels differ); False when it does not."""
        old = self._shown
        if old is None or old[:3] != now[:3]:
            return False
        palette = self.app.COMMAND_PALETTE_BINDING
        old_keys, now_keys = cast(tuple[Entry, ...], old[3]), cast(tuple[Entry, ...], now[3])
        if [e for e in old_keys if e[0] == palette] != [e for e in now_keys if e[0] == palette]:
            return False
        (old_shape, _), (now_shape, labels) = _layout(old_keys), _layout(now_keys)
        keys = [k for k in self.query(FooterKey) if not k.has_class("-command-palette")]
        if old_shape != now_shape or len(keys) != len(labels):
            return False
        for widget, (key, display, description, action, tip) in zip(keys, labels, strict=True):
            widget.key, widget.key_display, widget.description = key, display, description
            widget.action = action
            widget.tooltip = tip or None
            widget.refresh(layout=True)
        self._shown = now
        return True

    def bindings_changed(self, screen: Screen) -> None:
        if self._shown is not None and self.is_attached and screen is self.screen:
            now = self._showing()
            if now == self._shown or (screen.app.app_focus and self._relabel(now)):
                self._bindings_ready = True
                return
        super().bindings_changed(screen)

    async def recompose(self) -> None:
        if self._shown is not None and self.is_attached:
            now = self._showing()
            if now == self._shown or self._relabel(now):
                return
        await super().recompose()
