"""The Run screen: one case against one configured run, live or from a pasted body.

Live calls run in async workers in the app's own loop (the simulator and the httpx
client live there too); a worker only calls the core and posts what came back, and the
handlers here own the state: the attempt, its turns, the timer.

The screen shows one case at a time: what the panels show is keyed by (case, run,
mode), and choosing another clears them (an attempt left before its turn 2 is recorded
as it stood), so turn 2 is only ever sent and recorded for the case it continues.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Select, TextArea
from textual.worker import Worker, WorkerState

from toolstand.spec.cases import Case
from toolstand.tui.model.live_cases import LiveCases
from toolstand.tui.model.verdicts import verdict_of
from toolstand.tui.screens.modals import PasteForm, PasteModal
from toolstand.tui.screens.run_keys import RUN_BINDINGS
from toolstand.tui.screens.run_view import RunViews
from toolstand.tui.widgets.exchange_view import ExchangeView
from toolstand.tui.widgets.footer import Footer
from toolstand.tui.widgets.long_select import LongSelect
from toolstand.tui.widgets.nav import NavBar
from toolstand.tui.widgets.run_status import RunStatus
from toolstand.tui.widgets.step_panel import StepPanel
from toolstand.tui.widgets.turn_tabs import TurnTabs
from toolstand.types import FEEDBACK_STYLES, MODES, AttemptRecord, FeedbackStyle, Mode
from toolstand.util.printable import visible

AGAIN_TITLE = (  # the fullest first: the pane shows the first that fits
    "turn 2 again: tool results · ctrl+r edit · ctrl+l canned · ctrl+t sends (a new attempt)",
    "turn 2 again · ctrl+r edit · ctrl+l canned · ctrl+t sends (a new attempt)",
    "turn 2 again · ctrl+r edit · ctrl+l canned · ctrl+t sends",
)

# what the panels show: (case id, index of the configured run, mode)
Key = tuple[str, object, Mode]

if TYPE_CHECKING:
    from toolstand.attempt.plan import AttemptState
    from toolstand.tui.model.live import LiveSession, TurnView


def _editing(focused: object) -> bool:
    """Whether ``focused`` is a text editor (not a read-only body pane)."""
    return isinstance(focused, TextArea) and not focused.read_only


class RunScreen(RunViews):
    AUTO_FOCUS = "#run-case"
    BINDINGS: ClassVar[list[BindingType]] = RUN_BINDINGS

    @dataclass
    class TurnDone(Message):
        """A live turn came back (and, when the attempt ended, was recorded); ``step``
        names the turn to edit next when it did not end: a repair or the second turn."""

        state: AttemptState
        rec: AttemptRecord | None
        path: str | None
        step: str = "second"  # what the user edits next if the attempt is not over

    @dataclass
    class Recorded(Message):
        """An attempt left half-way (no turn 2 sent) was recorded as it stood."""

        rec: AttemptRecord

    def __init__(self) -> None:
        super().__init__()
        self.session: LiveSession | None = None
        self.state: AttemptState | None = None
        self.awaiting_step = False  # turn 1 done, turn 2 (or a repair turn) not sent yet
        self.step_kind = "second"  # what ctrl+t sends: "repair" or "second"
        self.again = False  # turn 2 recorded: ctrl+t sends another from the same turn 1
        self.views: list[TurnView] = []
        self.showing: Key | None = None  # what the panels belong to
        self._turn = 0  # the index in views on screen
        self._note = ""  # how the attempt on screen stands: recorded, waiting, pasted
        self._started_for: Key | None = None  # what the busy worker was started for
        self._paste_form = PasteForm(None, None)  # the offline judge's fields, kept
        self._case_ids: list[str] = []
        self._worker: Worker[None] | None = None
        self._style: FeedbackStyle | None = None  # the feedback style picked for this repair
        self._cases = LiveCases()  # the config's cases, every file of it

    def compose(self) -> ComposeResult:
        targets = self._targets()
        yield NavBar("run")
        with Horizontal(id="run-bar"):
            # BFCL's 3,491 ids: an overlay that does not measure each one on every layout
            yield LongSelect([], prompt="case", id="run-case", compact=True)
            yield Select(
                targets, prompt="no runs configured", allow_blank=not targets, id="run-target",
                compact=True,
            )  # fmt: skip
            yield Select([(m, m) for m in MODES], allow_blank=False, id="run-mode", compact=True)
        yield RunStatus(id="run-status")
        yield TurnTabs(id="turns")
        yield ExchangeView()
        yield StepPanel(self.app.project.contract.tools, id="step")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TurnTabs).show_turns([], 0)  # until there are two turns to choose from
        project = self.app.project
        if project.config is None:
            problems = "; ".join(str(p) for p in project.config_problems) or (
                "no config.json or config.example.json in " + str(project.root)
            )
            self._say(f"live runs need a config: {problems}", "failed")
        else:
            self._say("ctrl+g runs the case · ctrl+o pastes a raw body instead")

    @dataclass
    class CasesRead(Message):
        """The config's case files were read (a thread worker): list their cases."""

    def on_screen_resume(self) -> None:
        # a run is of the config: every case file of it, not only the one Cases shows;
        # files not read yet (3,491 BFCL cases: ~0.5 s) are read off the event loop
        if self._cases.stale(self.app.project):
            self._read_cases()
        else:
            self._list_cases()

    @work(thread=True, exclusive=True, group="cases", exit_on_error=False)
    def _read_cases(self) -> None:
        self._cases.of(self.app.project)
        self.post_message(self.CasesRead())

    @on(CasesRead)
    def _list_cases(self) -> None:
        ids = [c.id for c in self._cases.of(self.app.project).cases]
        case = self.query_one("#run-case", Select)
        if ids != self._case_ids:  # new options blank the value: only when they changed
            self._case_ids = ids
            case.set_options([(visible(i), i) for i in ids])
        wanted = self.app.selected_case_id
        chosen = wanted if wanted in ids else (ids[0] if ids else None)
        if chosen is not None and case.value != chosen:
            case.value = chosen

    def prepare(
        self,
        case_id: str,
        target: int | None = None,
        mode: Mode | None = None,
        *,
        run: bool = False,
    ) -> None:
        """Choose ``case_id`` (and the configured run ``target``, the ``mode``: kept when
        None) in the bar; with ``run``, then run it live as ctrl+g would."""
        self.app.selected_case_id = case_id
        self._list_cases()  # the case is listed, even before the files' reader is back
        self.query_one("#run-case", Select).value = case_id
        if target is not None:
            self.query_one("#run-target", Select).value = target
        if mode is not None:
            self.query_one("#run-mode", Select).value = mode
        if run:  # after the bar's Changed messages, which would otherwise clear the panels
            self.call_after_refresh(self.action_run)

    @on(Select.Changed, "#run-case")
    def _case_chosen(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL:
            self.app.selected_case_id = str(event.value)

    @on(Select.Changed, "#run-target")
    def _target_chosen(self) -> None:
        self.show_arm()

    @on(Select.Changed, "#run-bar Select")
    def _chosen(self, event: Select.Changed) -> None:
        # a turn on its way is dealt with when it comes back (_turn_done)
        on_its_way = self._started_for is not None
        if event.value is Select.NULL or on_its_way:
            return
        if self.showing is not None and self.showing != self._key():
            self._leave()
            self._say(visible(f"{self._key()[0]} chosen · ctrl+g runs it · ctrl+o judges a body"))

    def _key(self) -> Key:
        bar = [self.query_one(f"#run-{n}", Select).value for n in ("case", "target", "mode")]
        return str(bar[0]), bar[1], cast("Mode", bar[2])  # the select offers MODES only

    def _leave(self) -> None:
        """Clear the panels; an attempt waiting for its turn 2 is recorded as it stood."""
        if self.awaiting_step and self.state is not None:
            self._record_left(self.state)
        self._reset()

    # --- status and timer --------------------------------------------------------------

    @property
    def busy(self) -> bool:
        # a pending worker counts: it is on its way
        return self._worker is not None and not self._worker.is_finished

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.busy
        if action in ("step_again", "step_repair_again"):
            wanted = "repair" if action == "step_repair_again" else "second"
            return self.again and not self.busy and self.step_kind == wanted
        if action in ("step", "step_repair"):
            wanted = "repair" if action == "step_repair" else "second"
            return self.awaiting_step and not self.busy and self.step_kind == wanted
        if action in ("headers", "stream_arm") and _editing(self.app.focused):
            return False  # an editor's own f6/f7 (select the line / all), as README says
        if action == "stream_arm":
            return len(self.stream_arms()) > 1 and not self.busy
        if action == "run":
            return not self.busy and self.app.project.config is not None
        if action == "choose":  # the footer's keys, unless a turn-2 key needs the room
            crowded = self.again or self.awaiting_step
            return crowded == (len(parameters) > 1)
        if action == "step_turn":
            return 0 <= self._turn + int(cast(int, parameters[0])) < len(self.views)
        if action in ("edit_result", "canned", "feedback_styles"):
            shown = {"canned": "second", "feedback_styles": "repair"}.get(action, self.step_kind)
            return self.query_one(StepPanel).is_open and self.step_kind == shown
        return True

    # --- choosing what to run ----------------------------------------------------------

    def action_choose(self, which: str, _quiet: str = "") -> None:
        """Focus the bar's ``which`` list (case, target, mode) and open it."""
        select = self.query_one(f"#run-{which}", Select)
        select.focus()
        select.expanded = True

    def _selection(self) -> tuple[int, Case, Mode] | None:
        project = self.app.project
        target = self.query_one("#run-target", Select).value
        case_id = self.query_one("#run-case", Select).value
        case = self._cases.by_id(project).get(str(case_id))
        if project.config is None or target is Select.NULL or case is None:
            self._say("choose a case and a configured run first", "failed")
            return None
        mode = cast("Mode", self.query_one("#run-mode", Select).value)  # offers MODES only
        return int(cast(int, target)), case, mode

    def _live(self) -> LiveSession:
        from toolstand.tui.model.live import LiveSession  # imports the adapters on first use

        if self.session is None:
            self.session = LiveSession(self.app.project, cases=self._cases)
        return self.session

    # --- live turns --------------------------------------------------------------------

    def action_run(self) -> None:
        chosen = self._selection()
        if chosen is None or self.busy:
            return
        index, case, mode = chosen
        if not self._mode_fits(case, mode):
            return
        left = self.state if self.awaiting_step else None
        self._reset()
        spec = self.app.project.config.runs[index]  # type: ignore[union-attr]
        stream = self.stream_arm()
        label = visible(f"turn 1 · {case.id} · {spec.provider}/{spec.model} · {mode}")
        self.query_one(RunStatus).start(label + (" · streamed" if stream else ""))
        self.begin_stream(label, stream)
        self._started_for = self._key()
        self._worker = self._first_turn(index, case, mode, left, stream)
        self.refresh_bindings()

    def _mode_fits(self, case: Case, mode: Mode) -> bool:
        if mode == "forced" and not case.expects_call:
            self._leave()  # what was shown is not what the status now speaks of
            self._say(
                f"mode forced runs only cases that expect a call; {visible(case.id)} does not",
                "failed",
            )
            return False
        return True

    @work(exclusive=True, group="live", exit_on_error=False)
    async def _first_turn(
        self, index: int, case: Case, mode: Mode, left: AttemptState | None, stream: bool
    ) -> None:
        session = self._live()
        if left is not None:
            _, rec = await session.save(left)
            self.post_message(self.Recorded(rec))
        state = await session.first(index, case, mode, stream, self.watcher())
        await self._next_step(session, state)

    async def _next_step(self, session: LiveSession, state: AttemptState) -> None:
        """After a turn: a repair turn to edit when its call needs one, else the second
        turn when it applies, else the attempt is recorded."""
        from toolstand.attempt.turns import wants_second_turn
        from toolstand.tui.model.live_repair import repair_due

        project = self.app.project
        assert project.config is not None
        if repair_due(state, project.config):
            self.post_message(self.TurnDone(state, None, None, "repair"))
            return
        if wants_second_turn(state) and state.second is None:
            self.post_message(self.TurnDone(state, None, None))
            return
        path, rec = await session.save(state)
        self.post_message(self.TurnDone(state, rec, self._shown(path)))

    @work(group="record", exit_on_error=False)
    async def _record_left(self, state: AttemptState) -> None:
        _, rec = await self._live().save(state)
        self.post_message(self.Recorded(rec))

    def action_step_repair(self) -> None:  # the same step, under its own key and label
        self.action_step()

    def action_step_again(self) -> None:  # the same step, from the same turn 1
        self.action_step()

    def action_step_repair_again(self) -> None:  # the first repair turn, from turn 1
        self.action_step()

    def action_step(self) -> None:
        panel = self.query_one(StepPanel)
        results = panel.results()
        if results is None or self.state is None:
            self._say("fix the tool results marked below first", "failed")
            return
        self._started_for = self.showing
        if self.again:
            repair = self.step_kind == "repair"
            label = visible(f"{'repair 1' if repair else 'turn 2'} again · {self.state.case.id}")
            self.begin_stream(label, self.state.plan.stream)
            self.query_one(RunStatus).start(label)
            again = self._repair_again if repair else self._second_again
            self._worker = again(self.state, results)
            self.refresh_bindings()
            return
        self.begin_stream(
            visible(f"{self.step_kind} turn · {self.state.case.id}"), self.state.plan.stream
        )
        if self.step_kind == "repair":
            n = len(self.state.repairs) + 1
            self.query_one(RunStatus).start(
                visible(f"turn {n + 1} · repair {n} · {self.state.case.id}")
            )
            self._worker = self._repair_turn(self.state, results)
        else:
            self.query_one(RunStatus).start(visible(f"turn 2 · {self.state.case.id}"))
            self._worker = self._second_turn(self.state, results)
        self.refresh_bindings()

    @work(exclusive=True, group="live", exit_on_error=False)
    async def _second_turn(self, state: AttemptState, results: list[Any]) -> None:
        session = self._live()
        await session.second(state, results, self.watcher())
        path, rec = await session.save(state)
        self.post_message(self.TurnDone(state, rec, self._shown(path)))

    @work(exclusive=True, group="live", exit_on_error=False)
    async def _second_again(self, state: AttemptState, results: list[Any]) -> None:
        session = self._live()
        branch = session.again(state)  # a new attempt on the same turn 1: nothing sent yet
        await session.second(branch, results, self.watcher())
        path, rec = await session.save(branch)
        self.post_message(self.TurnDone(branch, rec, self._shown(path)))

    @work(exclusive=True, group="live", exit_on_error=False)
    async def _repair_turn(self, state: AttemptState, results: list[Any]) -> None:
        await self._send_repair(state, state, results)

    @work(exclusive=True, group="live", exit_on_error=False)
    async def _repair_again(self, state: AttemptState, results: list[Any]) -> None:
        # a new attempt on the same turn 1, its arm the style sent: nothing sent yet
        await self._send_repair(state, self._live().again(state, repair=True), results)

    async def _send_repair(self, state: AttemptState, to: AttemptState, results: list[Any]) -> None:
        """Send ``results`` as ``to``'s next repair turn in the style picked, else in
        ``state``'s (the attempt shown): the record must say the style sent."""
        from toolstand.tui.model.live_repair import style_of

        session, config = self._live(), self.app.project.config
        assert config is not None
        style = self._style or style_of(state, config)
        await session.repair(to, style, results, self.watcher())
        to.repairs[-1].feedback = style  # a later repair turn may be sent in another
        await self._next_step(session, to)

    def _open_repair(self, state: AttemptState, *, again: bool = False) -> None:
        """The feedback for the last turn's calls, each style of it one pick away;
        ``again``: for turn 1's calls, to send again (focus stays, as for turn 2's)."""
        from toolstand.tui.model.live_repair import repair_offer, style_of

        config = self.app.project.config
        assert config is not None
        self._style = None
        panel = self.query_one(StepPanel)
        offer = repair_offer(state, config, again=again)
        shown = f"feedback: {style_of(state, config)}"  # the style the editor holds
        panel.open(*offer, prompt="feedback style…", focus=not again, chosen=shown)

    @on(StepPanel.Picked)
    def _picked(self, event: StepPanel.Picked) -> None:
        """Another feedback style loaded into the editor: that style is what is sent."""
        style = event.name.removeprefix("feedback: ")
        if self.step_kind != "repair" or self.state is None:
            return
        chosen = next((s for s in FEEDBACK_STYLES if s == style), None)
        if chosen is None:
            return
        from toolstand.tui.model.live_repair import repair_title

        self._style = chosen
        n = 1 if self.again else len(self.state.repairs) + 1
        self.query_one(StepPanel).titled(*repair_title(n, chosen, again=self.again))

    @on(TurnDone)
    def _turn_done(self, event: TurnDone) -> None:
        from toolstand.attempt.turns import default_results
        from toolstand.tui.model.live import views_of

        self.query_one(RunStatus).stop()
        started_for, self._started_for = self._started_for, None
        if started_for != self._key():  # another case was chosen while it ran
            self._finished_elsewhere(event)
            return
        self.state = event.state
        self.views = views_of(event.state, event.rec)
        self.showing = started_for
        panel = self.query_one(StepPanel)
        if event.rec is None:
            self.awaiting_step, self.step_kind, self.again = True, event.step, False
            if event.step == "repair":
                self._open_repair(event.state)
                n = len(event.state.repairs) + 1
                self._note = f"edit the feedback below, ctrl+t sends repair turn {n}"
            else:
                panel.open(default_results(event.state))
                self._note = "edit the results below, ctrl+t sends turn 2"
        else:
            self.awaiting_step = False
            self._record(event.rec)
            self._note = f"recorded in {event.path}"
            self.again = event.state.second is not None or bool(event.state.repairs)
            if event.state.second is not None:  # the results sent, to edit and send again
                self.step_kind = "second"
                panel.open(list(event.state.second_results), title=AGAIN_TITLE, focus=False)
                self._note += " · ctrl+t sends turn 2 again from this turn 1"
            elif self.again:  # turn 1's feedback, in another style or edited, sent again
                self.step_kind = "repair"
                self._open_repair(event.state, again=True)
                self._note += " · ctrl+t sends the repair turn again from this turn 1"
            else:
                panel.close()
        self._show_turn(len(self.views) - 1)

    def _finished_elsewhere(self, event: TurnDone) -> None:
        """A turn came back for a case no longer chosen: record it, never show it."""
        case = event.state.case.id
        if event.rec is None:
            self._record_left(event.state)
            where = "recorded as it stood (turn 2 not sent)"
        else:
            self._record(event.rec)
            where = f"recorded in {event.path}"
        self._reset()
        chosen = self._key()[0]
        self._say(visible(f"{case} came back and was {where}; {chosen} chosen · ctrl+g runs it"))
        self.refresh_bindings()

    @on(Recorded)
    def _recorded(self, event: Recorded) -> None:
        self._record(event.rec)

    def _record(self, rec: AttemptRecord) -> None:
        verdict = verdict_of(rec)
        if verdict is not None:
            self.app.record_verdict(str(rec["case_id"]), verdict)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker:
            return
        if event.state not in (WorkerState.CANCELLED, WorkerState.ERROR):
            self.refresh_bindings()
            return
        self._started_for = None  # nothing will come back
        if self.showing not in (None, self._key()):
            self._leave()  # another case was chosen while it ran
        if event.state == WorkerState.CANCELLED:
            self._say(
                f"cancelled after {self.query_one(RunStatus).stop():.1f} s; nothing was recorded",
                "failed",
            )
        else:
            self.query_one(RunStatus).stop()
            error = event.worker.error
            self._say(visible(f"could not run: {type(error).__name__}: {error}"), "failed")
        self.refresh_bindings()

    def action_cancel(self) -> None:
        if self._worker is not None and self.busy:
            self._worker.cancel()

    # --- pasted bodies and the timeline ------------------------------------------------

    def action_paste(self) -> None:
        from toolstand.tui.model.live import status_of_body

        case, target, mode = self._key()
        form = self._paste_form
        if form.case is None and form.target is None:  # first opening: the bar's choice
            form.case, form.target = case, cast(int, target) if target is not Select.NULL else None
        cases = [c.id for c in self._cases.of(self.app.project).cases]
        modal = PasteModal(form, self._targets(), cases, mode, status_of_body)
        self.app.push_screen(modal, self._pasted)

    def _targets(self) -> list[tuple[str, int]]:
        config = self.app.project.config
        runs = config.runs if config is not None else []
        return [
            (
                visible(f"{r.provider}/{r.model} · {r.api}")
                + (" (simulator)" if r.simulated else ""),
                i,
            )
            for i, r in enumerate(runs)
        ]

    def _pasted(self, form: PasteForm | None) -> None:
        from toolstand.tui.model.live import judge_pasted

        if form is None or not form.judge or form.target is None or form.case is None:
            return
        case = self._cases.by_id(self.app.project).get(form.case)
        config = self.app.project.config
        if case is None or config is None:
            return
        mode = self._key()[2]
        if not self._mode_fits(case, mode):
            return
        try:
            view = judge_pasted(
                self.app.project, form.target, case, mode, int(form.status), form.body
            )
        except Exception as exc:  # an adapter bug must show, not kill the app
            self._say(visible(f"could not judge the body: {type(exc).__name__}: {exc}"), "failed")
            return
        api = config.runs[form.target].api
        self._leave()
        # the bar shows what was judged; its Changed messages then find it shown
        self.app.selected_case_id = case.id
        self.query_one("#run-case", Select).value = case.id
        self.query_one("#run-target", Select).value = form.target
        self.views, self.showing = [view], (case.id, form.target, mode)
        self._note = f"HTTP {form.status} · judged as {api} · not recorded"
        self._show_turn(0)

    def _reset(self) -> None:
        self.state, self.awaiting_step, self.views, self.showing = None, False, [], None
        self.again = False
        self._turn, self._note = 0, ""
        self.query_one(StepPanel).close()
        self.query_one(ExchangeView).show(None)
        self.query_one(TurnTabs).show_turns([], 0)
        self.refresh_bindings()

    def action_edit_result(self) -> None:
        self.query_one(StepPanel).focus_result()

    def action_canned(self) -> None:
        self.query_one(StepPanel).open_canned()

    def action_feedback_styles(self) -> None:
        self.query_one(StepPanel).open_canned()

    async def on_unmount(self) -> None:
        if self.session is None:
            return
        if self.awaiting_step and self.state is not None:
            self.session.append(self.state)  # the attempt as it stood, turn 2 never sent
        await self.session.close()
