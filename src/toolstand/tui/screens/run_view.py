"""What the Run screen shows of an attempt: the turn on screen, its status line with
the network time named (this turn and all), the headers toggle, the turn tabs; a base of
RunScreen, which runs the turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from textual import on
from textual.widgets import Select, Tabs

from toolstand.tui.messages import OpenCase
from toolstand.tui.model.timing import timing_line, turn_ms
from toolstand.tui.screens.base import PaletteCommand, ToolstandScreen
from toolstand.tui.widgets.exchange_view import ExchangeView
from toolstand.tui.widgets.run_status import RunStatus
from toolstand.tui.widgets.turn_tabs import TurnTabs
from toolstand.types import Mode
from toolstand.util.printable import visible

if TYPE_CHECKING:
    from toolstand.tui.model.live import TurnView


class RunViews(ToolstandScreen):
    """The turns of the attempt on screen and how they are told."""

    views: list[TurnView]
    showing: tuple[str, object, Mode] | None
    _turn: int
    _note: str

    def _say(self, text: str, state: str = "") -> None:
        self.query_one(RunStatus).say(text, state)

    def _show_turn(self, index: int) -> None:
        self.query_one(TurnTabs).show_turns(self.views, index)
        self._turn = index
        exchange = self.query_one(ExchangeView)
        exchange.total_ms, exchange.turns = self._total_ms(), len(self.views)
        exchange.show(self.views[index] if self.views else None)
        self._describe()
        self.refresh_bindings()

    def _total_ms(self) -> float | None:
        """The attempt's network time over the turns so far (what the record sums)."""
        times = [t for t in (turn_ms(v.tries) for v in self.views) if t is not None]
        return sum(times) if times else None

    def _describe(self) -> None:
        """The status line says what the panels show: which turn of which case, how it
        ended, its network time (this turn and all), and how the attempt stands."""
        if not self.views or self.showing is None:
            return
        view = self.views[self._turn]
        if view.transport_error:
            outcome = f"transport error {view.transport_error.get('code')}"
            outcome += f" after {view.retries} retries" if view.retries else ""
        else:
            outcome = f"verdict {view.judgement['verdict'] if view.judgement else None}"
        took = timing_line(turn_ms(view.tries), self._total_ms(), len(self.views))
        bits = [f"{view.label} of {visible(self.showing[0])}", outcome, took, self._note]
        self._say(" · ".join(b for b in bits if b))

    def action_headers(self) -> None:
        self.query_one(ExchangeView).toggle_headers()

    def palette_commands(self) -> Iterator[PaletteCommand]:
        case = self.query_one("#run-case", Select).value
        if case is not Select.NULL:
            yield (
                "Edit this case in Cases",
                visible(f"open {case} in the Cases editor"),
                lambda: self.post_message(OpenCase(str(case))),
            )

    def action_step_turn(self, delta: int) -> None:
        index = self._turn + delta
        if 0 <= index < len(self.views):
            self._show_turn(index)

    @on(Tabs.TabActivated, "#turns")
    def _tab(self, event: Tabs.TabActivated) -> None:
        index = TurnTabs.tab_index(event.tab)
        if index < len(self.views) and index != self._turn:
            self._show_turn(index)
