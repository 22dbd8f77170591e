"""The Run screen's strip of turn tabs: turn 1 (or the pasted body), the repair turns,
the second turn; hidden while there is one turn only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.widgets import Tab, Tabs

if TYPE_CHECKING:
    from toolstand.tui.model.live import TurnView

TABS = 5  # turn 1, at most three repair turns, the second turn


class TurnTabs(Tabs):
    """One tab per turn shown; ``tab_index`` reads a tab's turn back."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(*(Tab(f"turn {i + 1}", id=f"turn-{i}") for i in range(TABS)), id=id)

    def show_turns(self, views: Sequence[TurnView], index: int) -> None:
        """A tab for each of ``views``, the one at ``index`` active; none with one turn."""
        first = self.get_tab("turn-0")
        if first is not None and views:
            first.label = "pasted" if views[0].label == "pasted" else "turn 1"
        for i in range(1, TABS):
            tab = self.get_tab(f"turn-{i}")
            if i < len(views) and tab is not None:
                # "turn 2 · repair 1 · allowed" → "turn 2 · repair 1"; "turn 3" stays
                tab.label = views[i].label.split(" · ")[0] + (
                    f" · repair {i}" if "repair" in views[i].label else ""
                )
                self.show(f"turn-{i}")
            else:
                self.hide(f"turn-{i}")
        self.display = len(views) > 1  # one turn: the status names it, save the line
        if views:
            self.active = f"turn-{index}"

    @staticmethod
    def tab_index(tab: Tab) -> int:
        return int((tab.id or "turn-0").removeprefix("turn-"))
