"""Panes whose border title fits them: the fullest of its wordings that fits the width,
fitted again on each resize (half the screen at 80 columns, all of it maximized)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget

from toolstand.tui.fit import fit_title

TITLE_ROOM = 6  # a border title's room is the pane's width less corners and padding


class Titled(Widget):
    """A pane whose border title is the fullest of its choices that fits its width.

    A mixin after the container's class (``Pane(Vertical, Titled)``): Textual takes a
    widget's ``can_focus`` from its first base."""

    choices: tuple[str, ...] = ()

    def titled(self, *choices: str) -> None:
        """Title the pane with the first of ``choices`` (the fullest first) that fits."""
        self.choices = choices
        self._fit()

    def titled_by(self, title: str | Sequence[str]) -> None:
        """``titled`` with one title or a sequence of them."""
        self.titled(*((title,) if isinstance(title, str) else title))

    def _fit(self) -> None:
        width = self.outer_size.width - TITLE_ROOM
        title = fit_title(self.choices, width) if width > 0 else self.choices[0]
        # literal: a URL or label from outside must not be read as markup
        self.border_title = Content(title)

    def on_resize(self) -> None:
        if self.choices:
            self._fit()


class Pane(Vertical, Titled):
    pass


class ScrollPane(VerticalScroll, Titled):
    pass
