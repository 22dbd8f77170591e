"""What the Run screen shows of an attempt: the turn on screen, its status line with
the network time named (this turn and all), the headers toggle, the turn tabs; a base of
RunScreen, which runs the turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import on
from textual.message import Message
from textual.widgets import Select, Tabs

from toolstand.tui.messages import OpenCase
from toolstand.tui.model.events import EventRow, event_row, recorded_rows
from toolstand.tui.model.timing import timing_line, turn_ms
from toolstand.tui.screens.base import PaletteCommand, ToolstandScreen
from toolstand.tui.widgets.exchange_view import ExchangeView
from toolstand.tui.widgets.nav import NavBar
from toolstand.tui.widgets.run_status import RunStatus
from toolstand.tui.widgets.turn_tabs import TurnTabs
from toolstand.types import Mode
from toolstand.util.printable import visible

if TYPE_CHECKING:
    from toolstand.adapters.sse import SseEvent
    from toolstand.attempt.plan import AttemptState
    from toolstand.transport_read import EventHook
    from toolstand.tui.model.live import TurnView


@dataclass
class StreamEvent(Message):
    """One event of the streamed turn on its way, posted by the worker as it arrives."""

    row: EventRow


class RunViews(ToolstandScreen):
    """The turns of the attempt on screen and how they are told."""

    views: list[TurnView]
    showing: tuple[str, object, Mode] | None
    state: AttemptState | None
    _turn: int
    _note: str
    _started_for: tuple[str, object, Mode] | None
    _streamed: bool | None = None  # the stream arm picked (f7) when the run has both

    # --- streaming ---------------------------------------------------------------------

    def stream_arms(self) -> list[bool]:
        """The stream arms of the run chosen in the bar (none chosen: not streamed)."""
        config = self.app.project.config
        target = self.query_one("#run-target", Select).value
        if config is None or target is Select.NULL:
            return [False]
        return config.stream_arms(config.runs[int(cast(int, target))])

    def stream_arm(self) -> bool:
        """Whether the next attempt streams: the run's arm, or the one picked with f7."""
        arms = self.stream_arms()
        if len(arms) > 1 and self._streamed is not None:
            return self._streamed
        return arms[0]

    def action_stream_arm(self) -> None:
        self._streamed = not self.stream_arm()
        arm = "streamed" if self._streamed else "not streamed"
        self._say(f"stream arm: {arm} · ctrl+g runs the case in it · f7 toggles")
        self.show_arm()

    def show_arm(self) -> None:
        """The bar says the arm the next attempt takes, where no status line covers it:
        a run with both arms names either, a streamed-only run says so."""
        arms = self.stream_arms()
        if len(arms) > 1:
            detail = f"stream arm: {'streamed' if self.stream_arm() else 'not streamed'}"
        else:
            detail = "streamed" if arms[0] else ""
        self.query_one(NavBar).set_detail(detail)

    def watcher(self) -> EventHook:
        """The live session's hook: each event posted to this screen as it arrives."""

        def seen(event: SseEvent, ms: float) -> None:
            self.post_message(StreamEvent(event_row(event, ms)))

        return seen

    def begin_stream(self, label: str, stream: bool) -> None:
        """A turn is on its way: when it streams, its events fill the panes."""
        if stream:
            self.query_one(ExchangeView).streaming(label)

    @on(StreamEvent)
    def _stream_event(self, event: StreamEvent) -> None:
        if self._started_for is not None:  # a late event of a cancelled turn is dropped
            self.query_one(ExchangeView).add_event(event.row)

    def _events(self, view: TurnView) -> list[EventRow] | None:
        return recorded_rows(view.response)

    def _shown(self, path: Path) -> str:
        """The path as the user would type it from the project folder."""
        try:
            return str(path.relative_to(self.app.project.root))
        except ValueError:
            return str(path)

    def _say(self, text: str, state: str = "") -> None:
        self.query_one(RunStatus).say(text, state)

    def _show_turn(self, index: int) -> None:
        self.query_one(TurnTabs).show_turns(self.views, index)
        self._turn = index
        exchange = self.query_one(ExchangeView)
        exchange.total_ms, exchange.turns = self._total_ms(), len(self.views)
        view = self.views[index] if self.views else None
        exchange.show(view, self._events(view) if view is not None else None)
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
