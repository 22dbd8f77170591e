"""A Select for thousands of options (BFCL's 3,491 case ids), cheap to open.

Textual's overlay asks each option its wrapped height on every layout to size itself;
with thousands of options that is most of the cost of opening the list. The overlay is
never taller than its ``max-height``, so past that many options their count (each option
is a line at least) sizes it the same. And its scrollbar is there from the start: the
option heights, measured once per width, are then measured once rather than again when
the scrollbar appears.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.geometry import Size
from textual.widgets import Select
from textual.widgets._select import SelectCurrent, SelectOverlay

LONG = 50  # more options than any overlay's max-height (Textual's is 12)


class LongOverlay(SelectOverlay):
    """The overlay of a LongSelect: sized by its options' count once they are many."""

    DEFAULT_CSS: ClassVar[str] = """
    LongOverlay.-long { overflow-y: scroll; }
    """

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if len(self.options) > LONG:
            return len(self.options)
        return super().get_content_height(container, viewport, width)


class LongSelect(Select[str]):
    """A Select whose overlay is a LongOverlay; typing in the open list jumps to a match."""

    def compose(self) -> ComposeResult:
        yield SelectCurrent(self.prompt)
        yield LongOverlay(type_to_search=self._type_to_search).data_bind(compact=Select.compact)

    def set_options(self, options: Iterable[tuple[RenderableType, str]]) -> None:
        listed = list(options)
        super().set_options(listed)
        self.query_one(LongOverlay).set_class(len(listed) > LONG, "-long")
