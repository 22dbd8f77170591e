"""The Textual app: modes from the registry, shared state, quitting safely.

``make_app`` is the one factory the CLI and the tests share; ``run_app`` is what
``toolstand`` / ``toolstand tui`` call.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import orjson
from textual import events, on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.color import Color, ColorParseError
from textual.containers import ScrollableContainer
from textual.message import Message
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.widget import Widget
from textual.widgets import Input

from toolstand.tui import css_rules
from toolstand.tui.commands import ToolstandCommands
from toolstand.tui.messages import OpenCase, PromoteToCase, RunCase
from toolstand.tui.model.project import Project, load_project
from toolstand.tui.model.verdicts import Verdicts, last_verdicts
from toolstand.tui.registry import SCREENS, factory
from toolstand.tui.screens.base import ToolstandScreen
from toolstand.tui.shell import ToolstandShell
from toolstand.tui.startup import release_collector
from toolstand.util.printable import visible
from toolstand.util.problems import LoadError

css_rules.install()  # each CSS text parsed once, not at each of the start's reparses

KEYMAP_ENV = "TOOLSTAND_KEYMAP"  # a JSON file {binding id: "keys"} to remap bindings
FIRST_FRAME_S = 0.25  # the first screen is drawn by then; the others are built after it
BLURRED_CURSOR = 0.2  # how much of the foreground a cursor row keeps when its list is not focused


def _jump_bindings() -> list[BindingType]:
    out: list[BindingType] = []
    for e in SCREENS:
        out.append(
            Binding(
                e.key,
                f"mode('{e.mode}')",
                e.title,
                show=False,
                tooltip=f"Go to {e.title}",
                id=f"app.{e.mode}",
            )
        )
        out.append(Binding(e.digit, f"mode('{e.mode}')", show=False, id=f"app.{e.mode}.digit"))
    return out


def pane_of(focused: Widget) -> Widget | None:
    """What F11 fills the screen with: the pane around ``focused`` (its border and title
    too), else the scrolling widget itself; never a one-line field (a Select, an Input)."""
    chain = list(focused.ancestors_with_self)
    pane = next((w for w in chain if isinstance(w, Widget) and w.has_class("pane")), None)
    if pane is not None:
        return pane
    scrolling = (ScrollView, ScrollableContainer)
    return next(
        (w for w in chain if isinstance(w, scrolling) and not isinstance(w, Input)),
        None,
    )


class ToolstandApp(ToolstandShell):
    """Cases, Run (and History, Report) over the same project files."""

    TITLE = "toolstand"
    # built out of sight after the first paint and kept mounted: their first visit is a
    # switch, not a build (tests monkeypatch this to () and build on the first visit)
    BUILT_AHEAD: ClassVar[tuple[str, ...]] = tuple(e.mode for e in SCREENS)
    # History's and Report's rules too: read once at start, they never restyle the
    # screens already shown when History is first visited (see screens/base.py)
    CSS_PATH: ClassVar = ["toolstand.tcss", "history.tcss"]
    COMMANDS: ClassVar = App.COMMANDS | {ToolstandCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            show=False,
            priority=True,
            tooltip="Quit toolstand",
            id="app.quit",
        ),
        Binding(
            "question_mark", "help", "Help", tooltip="Show the keys and walkthroughs", id="app.help"
        ),
        Binding(
            "f11",
            "maximize",
            "Maximize",
            show=False,
            tooltip="Maximize the focused pane (and back)",
            id="app.maximize",
        ),
        Binding(
            "f9",
            "jump",
            "Jump",
            show=False,
            tooltip="Jump to a pane: each shows a letter, press one to focus it",
            id="app.jump",
        ),
        Binding(
            "f10",
            "messages",
            "Messages",
            show=False,
            tooltip="Show the status line whole, with the messages before it",
            id="app.messages",
        ),
        # priority, or a screen's own Escape would win; it stands aside when no panel is open
        Binding(
            "escape", "close_keys", show=False, priority=True, system=True, id="app.close_keys"
        ),
        *_jump_bindings(),
    ]

    @dataclass
    class VerdictsLoaded(Message):
        """The scan of the runs folder found these last verdicts."""

        verdicts: Verdicts

    @dataclass
    class BuildMode(Message):
        """Build the screen of ``mode`` out of sight; ``done`` is set once it is built."""

        mode: str
        done: asyncio.Event = field(default_factory=asyncio.Event)

    def __init__(self, project: Project, *, start_mode: str = "cases") -> None:
        super().__init__(project)
        self.start_mode = start_mode
        self.built_modes: set[str] = set()  # each mode's screen is built once, kept mounted
        for entry in SCREENS:
            self.add_mode(entry.mode, self._builder(entry.mode, factory(entry)))

    def _builder(self, mode: str, make: Callable[[], Screen[None]]) -> Callable[[], Screen[None]]:
        def build() -> Screen[None]:
            self.built_modes.add(mode)
            return make()

        return build

    async def on_mount(self) -> None:
        self._load_verdicts()
        await self.switch_mode(self.start_mode)
        # the collector the package's import held (tui/startup.py), once the screen is drawn
        self.call_after_refresh(release_collector)
        # after the first screen is drawn: the imports would compete with it for the GIL
        self.call_after_refresh(self._warm_up)
        # after the first frame: switch_mode holds drawing back for 50 ms (delay_update),
        # and a build started before it ends would hold the first paint back with it
        self.set_timer(FIRST_FRAME_S, self._build_modes)

    async def on_event(self, event: events.Event) -> None:
        # a key or a click first waits for what the screen builds after its first frame
        # (the Cases screen's form): it then reaches the widgets it would have
        if isinstance(event, events.InputEvent) and not event.is_forwarded:
            # and for the contract's check: a contract it refuses reaches no screen
            if not self.check_contract():
                return
            screen = self.screen
            if isinstance(screen, ToolstandScreen):
                await screen.ready_for_input()
        await super().on_event(event)

    @work(group="build-modes", exit_on_error=False)
    async def _build_modes(self) -> None:
        screen = self.screen
        if isinstance(screen, ToolstandScreen):  # what it builds after its first frame first
            await screen.built_after_first_frame()
            # and drawn: each build below holds drawing back (batch_update) until it ends
            await screen.wait_for_refresh()
        # the contract's meta-schema check, if nothing ran it before (the Cases form's
        # first check of its case, a key): the screens built ahead validate against it,
        # and after the first paint jsonschema's import and check are no one's wait
        if not self.check_contract():
            return
        # one screen at a time, each in the app's own handler: a key pressed meanwhile
        # waits for that one build only, and then reaches the screen it was pressed on
        for mode in self.BUILT_AHEAD:
            build = self.BuildMode(mode)
            self.post_message(build)
            await build.done.wait()
        # what is alive now lives as long as the app (the screens, their widgets, the
        # modules): out of the collector's sight, or each full collection walks it all
        # again, a pause of 100-200 ms landing on whatever key comes next
        gc.freeze()

    @on(BuildMode)
    async def _build_mode(self, message: BuildMode) -> None:
        """Build and mount ``message.mode``'s screen without showing it, so its first
        visit costs what a later one does (k9s and lazygit keep their views mounted)."""
        try:
            here = self.current_mode
            # a modal open (a confirm, the help) is left alone: the screen waits for its visit
            if (
                message.mode in self.built_modes
                or len(self.screen_stack) > 1
                or not self.is_running
            ):
                return
            with self.batch_update():  # nothing is drawn until the screen we left is back
                await self.switch_mode(message.mode)
                if not self.is_running:  # the app quit meanwhile: its modes are gone
                    return
                # the new screen's styles are counted as current: Textual would re-read
                # every stylesheet at its first visit otherwise
                self.refresh_css(animate=False)
                await self.switch_mode(here)
        finally:
            message.done.set()

    @work(thread=True, exclusive=True, group="warm-up", exit_on_error=False)
    def _warm_up(self) -> None:
        # the first live run would otherwise import the adapters, the transport and the
        # simulator inside the event loop and freeze the screen for a moment
        for name in (
            "toolstand.tui.screens.run",
            "toolstand.tui.model.live",
            "toolstand.sim",
            "httpcore",  # httpx imports its connection machinery on the first request
            "anyio._backends._asyncio",
        ):
            with contextlib.suppress(ImportError):
                importlib.import_module(name)

    @work(thread=True, exclusive=True, group="verdicts", exit_on_error=False)
    def _load_verdicts(self) -> None:
        verdicts, _ = last_verdicts(self.project.runs_dir)
        self.post_message(self.VerdictsLoaded(verdicts))

    @on(VerdictsLoaded)
    def _verdicts_loaded(self, message: VerdictsLoaded) -> None:
        self.take_verdicts(message.verdicts)

    # --- what screens ask for elsewhere: the app alone switches and hands it over ------

    @on(OpenCase)
    async def _open_case(self, message: OpenCase) -> None:
        from toolstand.tui.screens.cases import CasesScreen

        self.selected_case_id = message.case_id
        await self.switch_mode("cases")
        screen = self.screen
        if isinstance(screen, CasesScreen):
            screen.show_case(message.case_id)

    @on(RunCase)
    async def _run_case(self, message: RunCase) -> None:
        from toolstand.tui.screens.run import RunScreen

        self.selected_case_id = message.case_id  # the case the Run screen shows on resume
        await self.switch_mode("run")
        screen = self.screen
        if isinstance(screen, RunScreen):
            screen.prepare(message.case_id, message.target, message.mode, run=message.run)

    @on(PromoteToCase)
    async def _promote(self, message: PromoteToCase) -> None:
        from toolstand.tui.screens.cases import CasesScreen

        await self.switch_mode("cases")
        screen = self.screen
        if not isinstance(screen, CasesScreen):
            self.notify("The Cases screen cannot take a new case.", severity="error")
            return
        screen.open_new(message.data, message.path)
        where = f" in {message.path.name}" if message.path is not None else ""
        said = visible(f"New case {message.data['id']}{where}: {message.said}. Ctrl+S saves it.")
        self.notify(said, markup=False)

    def get_css_variables(self) -> dict[str, str]:
        """The theme's variables, with a cursor row that 256 colours keep apart from focus.

        Textual's blurred cursor is the primary colour at 30%, which the 256-colour palette
        maps to a teal close to the focused cursor's blue: a grey says "not focused" instead.
        """
        variables = super().get_css_variables()
        if "block-cursor-blurred-background" in self.current_theme.variables:
            return variables
        try:
            surface = Color.parse(variables["surface"])
            foreground = Color.parse(variables["foreground"])
        except (KeyError, ColorParseError):
            return variables
        if surface.ansi is None and foreground.ansi is None:
            blurred = surface.blend(foreground, BLURRED_CURSOR)
            variables["block-cursor-blurred-background"] = blurred.hex
        return variables

    async def action_mode(self, mode: str) -> None:
        await self.switch_mode(mode)

    def action_help(self) -> None:
        """The current screen's keys by task and the three walkthroughs."""
        from toolstand.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen, self.remapped))

    def set_keymap(self, keymap: dict[str, str]) -> None:  # type: ignore[override]
        self.remapped = dict(keymap)
        super().set_keymap(keymap)

    def action_jump(self) -> None:
        """Letter every pane that takes focus; the letter pressed focuses its pane."""
        from toolstand.tui.widgets.jump_overlay import JumpOverlay, jump_targets

        if isinstance(self.screen, JumpOverlay):
            return
        below = self.screen

        def jumped(widget: Widget | None) -> None:
            if widget is not None and widget.screen is below:
                widget.focus()

        self.push_screen(JumpOverlay(jump_targets(below)), jumped)

    def action_messages(self) -> None:
        """The screen's status line whole, with what it said before."""
        from toolstand.tui.widgets.status_line import StatusLine

        lines = [line for line in self.screen.query(StatusLine) if line.region.area]
        if lines:
            lines[0].show_log()
        else:
            self.notify("No status line on this screen.", markup=False)

    def action_maximize(self) -> None:
        """Fill the screen with the focused pane, or put it back."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        pane = pane_of(screen.focused) if screen.focused is not None else None
        if pane is None:
            self.notify("Nothing here to maximize: focus a pane first (Tab).", markup=False)
        else:
            screen.maximized = pane  # Textual's own maximize refuses containers

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close_keys":
            # asked on every binding update: only the screen's own children, where Textual
            # mounts it; by name, as Textual's own help actions do (importing HelpPanel
            # would load the Markdown widget, markdown-it, before the first paint)
            return bool(self.screen.query_children("HelpPanel"))
        return True

    def action_close_keys(self) -> None:
        self.action_hide_help_panel()

    async def action_quit(self) -> None:
        from toolstand.tui.screens.modals import ConfirmModal

        if not self.unsaved:
            self.exit(0)
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.exit(0)

        await self.push_screen(
            ConfirmModal(f"Quit and lose {self.unsaved}?", yes="Quit, discard", no="Keep editing"),
            answered,
        )


def load_keymap(path: str | None) -> dict[str, str]:
    """{binding id: keys} from a JSON file, e.g. {"cases.save": "ctrl+w,f2"}."""
    if not path:
        return {}
    try:
        data: Any = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror}") from None
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ValueError(f'{path}: give an object of binding id -> keys, e.g. {{"run.go": "f9"}}')
    return {str(k): v for k, v in data.items()}


def make_app(
    config: str | None = None,
    cases: str | None = None,
    tools: str | None = None,
    *,
    root: Path | None = None,
    start_mode: str | None = None,
    keymap: dict[str, str] | None = None,
    history: str | None = None,
) -> ToolstandApp:
    """The app over the project in ``root`` (the current directory by default), on the
    screen of ``start_mode`` (Cases by default); with ``history``, that run file open in
    History and Report, the app on History unless ``start_mode`` says another screen."""
    project = load_project(root or Path.cwd(), config, cases, tools)
    app = ToolstandApp(project, start_mode=start_mode or ("history" if history else "cases"))
    if history:
        app.history_path = os.path.abspath(history)
    if keymap:
        app.set_keymap(keymap)
    return app


def run_app(
    config: str | None = None,
    cases: str | None = None,
    tools: str | None = None,
    history: str | None = None,
) -> int:
    """Run the TUI (``history``: open that run file in History); 2 when the project's
    files cannot be used (the problems on stderr)."""
    try:
        keymap = load_keymap(os.environ.get(KEYMAP_ENV))
    except ValueError as exc:
        print(f"error: {KEYMAP_ENV}={exc}", file=sys.stderr)
        return 2
    try:
        app = make_app(config, cases, tools, keymap=keymap, history=history)
        result = app.run()
    finally:  # an app that never drew a frame did not release it
        release_collector()
    if app.contract_problems:  # main prints them and returns 2, as for any LoadError
        raise LoadError(app.contract_problems)
    return result if isinstance(result, int) else 0
