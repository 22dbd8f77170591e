"""The Run screen: one case against one configured run, live or from a pasted body.

Live calls run in async workers in the app's own loop (the simulator and the httpx
client live there too); a worker only calls the core and posts what came back, and the
handlers here own the state: the attempt, its turns, the timer.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Select, Static, Tab, Tabs
from textual.worker import Worker, WorkerState

from toolstand.cases import Case
from toolstand.config import MODES
from toolstand.tui.screens.modals import PasteModal
from toolstand.tui.verdicts import verdict_of
from toolstand.tui.widgets.exchange_view import ExchangeView
from toolstand.tui.widgets.nav import NavBar
from toolstand.tui.widgets.step_panel import StepPanel

if TYPE_CHECKING:
    from toolstand.attempt import AttemptState
    from toolstand.tui.app import ToolstandApp
    from toolstand.tui.live import LiveSession, TurnView


class RunScreen(Screen[None]):
    AUTO_FOCUS = "#run-case"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+g,f5", "run", "Run", tooltip="Run this case live", id="run.go"),
        Binding(
            "ctrl+t",
            "step",
            "Send turn 2",
            tooltip="Send turn 2 with the edited tool result",
            id="run.step",
        ),
        Binding(
            "escape", "cancel", "Cancel", tooltip="Cancel the request in flight", id="run.cancel"
        ),
        Binding(
            "ctrl+o",
            "paste",
            "Paste body",
            tooltip="Judge a pasted raw response body",
            id="run.paste",
        ),
        Binding(
            "left_square_bracket",
            "turn(0)",
            "Turn 1",
            show=False,
            tooltip="Show turn 1",
            id="run.turn1",
        ),
        Binding(
            "right_square_bracket",
            "turn(1)",
            "Turn 2",
            show=False,
            tooltip="Show turn 2",
            id="run.turn2",
        ),
    ]

    class TurnDone(Message):
        """A live turn came back (and, when the attempt ended, was recorded)."""

        def __init__(
            self, state: AttemptState, rec: dict[str, Any] | None, path: str | None
        ) -> None:
            super().__init__()
            self.state, self.rec, self.path = state, rec, path

    class Recorded(Message):
        """An attempt left half-way (no turn 2 sent) was recorded as it stood."""

        def __init__(self, rec: dict[str, Any]) -> None:
            super().__init__()
            self.rec = rec

    def __init__(self) -> None:
        super().__init__()
        self.session: LiveSession | None = None
        self.state: AttemptState | None = None
        self.awaiting_step = False  # turn 1 done, turn 2 not sent yet
        self.views: list[TurnView] = []
        self._worker: Worker[None] | None = None
        self._t0 = 0.0
        self._what = ""
        self._ticker: Timer | None = None

    @property
    def tapp(self) -> ToolstandApp:
        return cast("ToolstandApp", self.app)

    def compose(self) -> ComposeResult:
        config = self.tapp.project.config
        runs = config.runs if config is not None else []
        targets = [
            (f"{r.provider}/{r.model} · {r.api}" + (" (simulator)" if r.simulated else ""), i)
            for i, r in enumerate(runs)
        ]
        yield NavBar("run")
        with Horizontal(id="run-bar"):
            yield Select([], prompt="case", id="run-case", compact=True)
            yield Select(
                targets, prompt="no runs configured", allow_blank=not targets, id="run-target",
                compact=True,
            )  # fmt: skip
            yield Select([(m, m) for m in MODES], allow_blank=False, id="run-mode", compact=True)
        yield Static("", id="run-status", markup=False)
        yield Tabs(Tab("turn 1", id="turn-0"), Tab("turn 2", id="turn-1"), id="turns")
        yield ExchangeView()
        yield StepPanel(id="step")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Tabs).hide("turn-1")
        project = self.tapp.project
        if project.config is None:
            problems = "; ".join(str(p) for p in project.config_problems) or (
                "no config.json or config.example.json in " + str(project.root)
            )
            self._say(f"live runs need a config: {problems}", "failed")
        else:
            self._say("ctrl+g runs the case · ctrl+o pastes a raw body instead")

    def on_screen_resume(self) -> None:
        casefile = self.tapp.project.casefile
        ids = [c.id for c in casefile.cases]
        case = self.query_one("#run-case", Select)
        case.set_options([(i, i) for i in ids])
        wanted = self.tapp.selected_case_id
        if wanted in ids:
            case.value = wanted
        elif ids:
            case.value = ids[0]
        if self.tapp.run_on_show:
            self.tapp.run_on_show = False
            self.action_run()

    @on(Select.Changed, "#run-case")
    def _case_chosen(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL:
            self.tapp.selected_case_id = str(event.value)

    # --- status and timer --------------------------------------------------------------

    def _say(self, text: str, state: str = "") -> None:
        status = self.query_one("#run-status", Static)
        status.update(text)
        status.set_class(state == "busy", "-busy")
        status.set_class(state == "failed", "-failed")

    def _start_timer(self, what: str) -> None:
        self._t0, self._what = time.monotonic(), what
        self._tick()
        self._ticker = self.set_interval(0.1, self._tick)

    def _tick(self) -> None:
        elapsed = time.monotonic() - self._t0
        self._say(f"{self._what} · waiting {elapsed:.1f} s · Esc cancels", "busy")

    def _stop_timer(self) -> float:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        return time.monotonic() - self._t0

    @property
    def busy(self) -> bool:
        return self._worker is not None and self._worker.is_running

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.busy
        if action == "step":
            return self.awaiting_step and not self.busy
        if action == "run":
            return not self.busy and self.tapp.project.config is not None
        if action == "turn":
            return len(self.views) > int(cast(int, parameters[0]))
        return True

    # --- choosing what to run ----------------------------------------------------------

    def _selection(self) -> tuple[int, Case, str] | None:
        project = self.tapp.project
        target = self.query_one("#run-target", Select).value
        case_id = self.query_one("#run-case", Select).value
        case = project.casefile.by_id().get(str(case_id))
        if project.config is None or target is Select.NULL or case is None:
            self._say("choose a case and a configured run first", "failed")
            return None
        return int(cast(int, target)), case, str(self.query_one("#run-mode", Select).value)

    def _live(self) -> LiveSession:
        from toolstand.tui.live import LiveSession  # imports the adapters on first use

        if self.session is None:
            self.session = LiveSession(self.tapp.project)
        return self.session

    # --- live turns --------------------------------------------------------------------

    def action_run(self) -> None:
        chosen = self._selection()
        if chosen is None or self.busy:
            return
        index, case, mode = chosen
        if mode == "forced" and not case.expects_call:
            self._say(
                f"mode forced runs only cases that expect a call; {case.id} does not", "failed"
            )
            return
        left = self.state if self.awaiting_step else None
        self._reset()
        spec = self.tapp.project.config.runs[index]  # type: ignore[union-attr]
        self._start_timer(f"turn 1 · {case.id} · {spec.provider}/{spec.model} · {mode}")
        self._worker = self._first_turn(index, case, mode, left)
        self.refresh_bindings()

    @work(exclusive=True, group="live", exit_on_error=False)
    async def _first_turn(
        self, index: int, case: Case, mode: str, left: AttemptState | None
    ) -> None:
        from toolstand.attempt import wants_second_turn

        session = self._live()
        if left is not None:
            _, rec = await asyncio.to_thread(session.append, left)
            self.post_message(self.Recorded(rec))
        state = await session.first(index, case, mode)
        if wants_second_turn(state):
            self.post_message(self.TurnDone(state, None, None))
            return
        path, rec = await asyncio.to_thread(session.append, state)
        self.post_message(self.TurnDone(state, rec, self._shown(path)))

    def _shown(self, path: Path) -> str:
        """The path as the user would type it from the project folder."""
        try:
            return str(path.relative_to(self.tapp.project.root))
        except ValueError:
            return str(path)

    def action_step(self) -> None:
        panel = self.query_one(StepPanel)
        results = panel.results()
        if results is None or self.state is None:
            self._say("fix the tool results marked below first", "failed")
            return
        self._start_timer(f"turn 2 · {self.state.case.id}")
        self._worker = self._second_turn(self.state, results)
        self.refresh_bindings()

    @work(exclusive=True, group="live", exit_on_error=False)
    async def _second_turn(self, state: AttemptState, results: list[Any]) -> None:
        session = self._live()
        await session.second(state, results)
        path, rec = await asyncio.to_thread(session.append, state)
        self.post_message(self.TurnDone(state, rec, self._shown(path)))

    @on(TurnDone)
    def _turn_done(self, event: TurnDone) -> None:
        from toolstand.attempt import default_results
        from toolstand.tui.live import views_of

        elapsed = self._stop_timer()
        self.state = event.state
        self.views = views_of(event.state, event.rec)
        self._show_turn(len(self.views) - 1)
        panel = self.query_one(StepPanel)
        last = self.views[-1]
        outcome = (
            f"transport error {last.transport_error.get('code')} after {last.retries} retries"
            if last.transport_error
            else f"verdict {(last.judgement or {}).get('verdict')}"
        )
        if event.rec is None:
            self.awaiting_step = True
            panel.open(default_results(event.state))
            self._say(
                f"turn 1 · {outcome} · {elapsed:.1f} s · edit the results below, ctrl+t sends turn 2"
            )
        else:
            self.awaiting_step = False
            panel.close()
            self._record(event.rec)
            self._say(f"{last.label} · {outcome} · {elapsed:.1f} s · recorded in {event.path}")
        self.refresh_bindings()

    @on(Recorded)
    def _recorded(self, event: Recorded) -> None:
        self._record(event.rec)

    def _record(self, rec: dict[str, Any]) -> None:
        verdict = verdict_of(rec)
        if verdict is not None:
            self.tapp.record_verdict(str(rec["case_id"]), verdict)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker:
            return
        if event.state == WorkerState.CANCELLED:
            self._say(f"cancelled after {self._stop_timer():.1f} s; nothing was recorded", "failed")
        elif event.state == WorkerState.ERROR:
            self._stop_timer()
            error = event.worker.error
            self._say(f"could not run: {type(error).__name__}: {error}", "failed")
        self.refresh_bindings()

    def action_cancel(self) -> None:
        if self._worker is not None and self._worker.is_running:
            self._worker.cancel()

    # --- pasted bodies and the timeline ------------------------------------------------

    def action_paste(self) -> None:
        self.app.push_screen(PasteModal(), self._pasted)

    def _pasted(self, answer: tuple[int, str] | None) -> None:
        from toolstand.tui.live import judge_pasted

        chosen = self._selection()
        if answer is None or chosen is None:
            return
        index, case, mode = chosen
        try:
            view = judge_pasted(self.tapp.project, index, case, mode, *answer)
        except Exception as exc:  # an adapter bug must show, not kill the app
            self._say(f"could not judge the body: {type(exc).__name__}: {exc}", "failed")
            return
        self._reset()
        self.views = [view]
        self._show_turn(0)
        verdict = (
            "transport error" if view.transport_error else (view.judgement or {}).get("verdict")
        )
        self._say(f"pasted body (HTTP {answer[0]}) · {verdict} · not recorded")

    def _reset(self) -> None:
        self.state, self.awaiting_step, self.views = None, False, []
        self.query_one(StepPanel).close()
        self.query_one(ExchangeView).show(None)

    def _show_turn(self, index: int) -> None:
        tabs = self.query_one(Tabs)
        first = tabs.get_tab("turn-0")
        if first is not None and self.views:
            first.label = "pasted" if self.views[0].label == "pasted" else "turn 1"
        if len(self.views) > 1:
            tabs.show("turn-1")
        else:
            tabs.hide("turn-1")
        tabs.active = f"turn-{index}"
        self.query_one(ExchangeView).show(self.views[index] if self.views else None)
        self.refresh_bindings()

    def action_turn(self, index: int) -> None:
        if index < len(self.views):
            self._show_turn(index)

    @on(Tabs.TabActivated, "#turns")
    def _tab(self, event: Tabs.TabActivated) -> None:
        index = int((event.tab.id or "turn-0").removeprefix("turn-"))
        if index < len(self.views):
            self.query_one(ExchangeView).show(self.views[index])

    async def on_unmount(self) -> None:
        if self.session is None:
            return
        if self.awaiting_step and self.state is not None:
            self.session.append(self.state)  # the attempt as it stood, turn 2 never sent
        await self.session.close()
