"""The attempt detail and the diff of two attempts, pushed over the History screen.

Both read their records in thread workers; every action on an attempt is the History
screen's (``HistoryActions``), so the list and the detail offer the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static, TabbedContent, TabPane

from toolstand.history import read_record
from toolstand.tui.model.body_diff import Part, body_sections
from toolstand.tui.screens.base import ToolstandScreen
from toolstand.tui.widgets.attempt_detail import AttemptDetail
from toolstand.tui.widgets.attempt_diff import AttemptDiff
from toolstand.tui.widgets.footer import Footer
from toolstand.tui.widgets.line_diff_view import LineDiffView
from toolstand.tui.widgets.nav import NavBar
from toolstand.util.printable import visible


class HistoryActions(Protocol):
    """What the History screen does for an attempt, wherever the key was pressed."""

    path: str | None

    def offset_of(self, row: int) -> int: ...
    def step(self, row: int, delta: int) -> int | None: ...
    def mark_row(self, row: int) -> None: ...
    def diff_row(self, row: int) -> None: ...
    def promote_row(self, row: int) -> None: ...
    def rerun_row(self, row: int) -> None: ...
    def rejudge_row(self, row: int) -> None: ...
    def copy_row(self, row: int) -> None: ...
    def act_on(self, what: str, row: int) -> None: ...


ATTEMPT_BINDINGS: list[BindingType] = [
    Binding("m", "act('mark')", "Mark", tooltip="Mark this attempt for a diff", id="history.mark"),
    Binding(
        "d",
        "act('diff')",
        "Diff",
        tooltip="Diff this attempt with the marked one",
        id="history.diff",
    ),
    Binding(
        "p",
        "act('promote')",
        "Promote",
        tooltip="Promote this attempt to a new case",
        id="history.promote",
    ),
    Binding(
        "ctrl+g",
        "act('rerun')",
        "Rerun live",
        show=False,
        tooltip="Rerun this attempt's case live",
        id="history.rerun",
    ),
    Binding(
        "J",
        "act('rejudge')",
        "Re-judge",
        show=False,
        tooltip="Re-judge it with the current code",
        id="history.rejudge",
    ),
    Binding(
        "y",
        "act('copy')",
        "Copy JSON",
        show=False,
        tooltip="Copy the attempt as JSON",
        id="history.copy",
    ),
]


@dataclass
class RecordLoaded(Message):
    row: int
    rec: dict[str, Any] | None
    error: str = ""


class AttemptScreen(ToolstandScreen):
    """One attempt: raw and normalized side by side, the judgement explained."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,q", "app.pop_screen", "Back", tooltip="Back to the list", id="attempt.back"
        ),
        Binding(
            "r",
            "toggle_request",
            "Request",
            tooltip="Switch between the request and the response",
            id="attempt.request",
        ),
        Binding(
            "h",
            "toggle_headers",
            "Headers",
            show=False,
            tooltip="Show the URL or status, the headers and the tries (or the body)",
            id="attempt.headers",
        ),
        Binding(
            "t",
            "toggle_turn",
            "Turn 1/2",
            tooltip="Switch between turn 1 and turn 2",
            id="attempt.turn",
        ),
        Binding(
            "right_square_bracket",
            "step(1)",
            "Next",
            show=False,
            tooltip="Next attempt",
            id="attempt.next",
        ),
        Binding(
            "left_square_bracket",
            "step(-1)",
            "Previous",
            show=False,
            tooltip="Previous attempt",
            id="attempt.prev",
        ),
        *ATTEMPT_BINDINGS,
    ]

    def __init__(self, history: HistoryActions, row: int) -> None:
        super().__init__()
        self.history = history
        self.row = row

    def compose(self) -> ComposeResult:
        yield NavBar("history", "attempt · Esc back")
        yield AttemptDetail(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "rejudged", self._rejudged, init=False)
        self._load(self.row)

    @work(thread=True, exclusive=True, group="record", exit_on_error=False)
    def _load(self, row: int) -> None:
        assert self.history.path is not None
        try:
            rec = read_record(self.history.path, self.history.offset_of(row))
        except (OSError, ValueError) as exc:
            self.post_message(RecordLoaded(row, None, str(exc)))
            return
        self.post_message(RecordLoaded(row, rec))

    @on(RecordLoaded)
    def _loaded(self, event: RecordLoaded) -> None:
        if event.row != self.row:
            return
        if event.rec is None:
            self.notify(
                visible(f"Cannot read the attempt: {event.error}"), severity="error", markup=False
            )
            return
        self.query_one(AttemptDetail).show(event.rec)

    def watch_maximized(self) -> None:
        """F11 on the judgement pane: its values whole (cut to a line beside the others)."""
        judgement = self.query_one("#detail-judgement")
        self.query_one(AttemptDetail).show_whole(self.maximized is judgement)

    def _rejudged(self, rejudged: tuple[int, dict[str, Any]] | None) -> None:
        """The History screen re-judged a row: show the fresh judgement if it is ours."""
        detail = self.query_one(AttemptDetail)
        if rejudged is not None and rejudged[0] == self.row and detail.rec is not None:
            detail.show(detail.rec, rejudged=rejudged[1])

    def action_toggle_headers(self) -> None:
        self.query_one(AttemptDetail).toggle_headers()

    def action_toggle_request(self) -> None:
        self.query_one(AttemptDetail).toggle_request()

    def action_toggle_turn(self) -> None:
        if not self.query_one(AttemptDetail).toggle_turn():
            self.notify("This attempt had one turn only.", markup=False)

    def action_step(self, delta: int) -> None:
        row = self.history.step(self.row, delta)
        if row is not None and row != self.row:
            self.row = row
            self._load(row)

    def action_act(self, what: str) -> None:
        self.history.act_on(what, self.row)


@dataclass
class DiffLoaded(Message):
    a: dict[str, Any] | None
    b: dict[str, Any] | None
    error: str


class DiffScreen(Screen[None]):
    """Two attempts compared: the summary fields (differing ones marked ≠), and each
    turn's raw response body and normalized decision line by line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Back", tooltip="Back to the list", id="diff.back"),
        Binding("f", "part('fields')", "Fields", tooltip="The summary fields", id="diff.fields"),
        Binding(
            "b",
            "part('raw')",
            "Raw bodies",
            tooltip="The raw response bodies, line by line",
            id="diff.raw",
        ),
        Binding(
            "n",
            "part('decision')",
            "Decisions",
            tooltip="The normalized decisions, line by line",
            id="diff.decision",
        ),
    ]

    def __init__(self, path: str, offsets: tuple[int, int]) -> None:
        super().__init__()
        self.path, self.offsets = path, offsets
        self.rows: list[Any] = []

    def compose(self) -> ComposeResult:
        yield NavBar("history", "diff · f fields · b raw bodies · n decisions · Esc back")
        yield Static("", id="diff-head", markup=False)
        with TabbedContent(id="diff-parts", initial="fields"):
            with TabPane("fields", id="fields"):
                yield AttemptDiff(id="diff", cursor_type="row", zebra_stripes=True)
            with TabPane("raw bodies", id="raw"):
                yield LineDiffView(id="diff-raw")
            with TabPane("decisions", id="decision"):
                yield LineDiffView(id="diff-decision")
        yield Footer()

    def on_mount(self) -> None:
        self._load()

    def action_part(self, part: str) -> None:
        """Show one part of the diff and focus it, so the keys scroll it."""
        self.query_one("#diff-parts", TabbedContent).active = part
        target = "#diff" if part == "fields" else f"#diff-{part}"
        self.query_one(target).focus()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _load(self) -> None:
        try:
            a, b = (read_record(self.path, o) for o in self.offsets)
        except (OSError, ValueError) as exc:
            self.post_message(DiffLoaded(None, None, str(exc)))
            return
        self.post_message(DiffLoaded(a, b, ""))

    @on(DiffLoaded)
    def _loaded(self, event: DiffLoaded) -> None:
        if event.a is None or event.b is None:
            self.notify(
                visible(f"Cannot read the attempts: {event.error}"), severity="error", markup=False
            )
            return
        self.rows = self.query_one(AttemptDiff).show(event.a, event.b)
        differ = sum(not r.same for r in self.rows)
        counts = []
        parts: tuple[tuple[Part, str], ...] = (("raw", "raw bodies"), ("decision", "decisions"))
        for part, name in parts:
            sections = body_sections(event.a, event.b, part)
            self.query_one(f"#diff-{part}", LineDiffView).show(sections)
            counts.append(f"{name} {sum(s.changed for s in sections)} lines")
        self.query_one("#diff-head", Static).update(
            f"A: {visible(_who(event.a))}\nB: {visible(_who(event.b))}\n"
            f"{differ} of {len(self.rows)} fields differ · {' · '.join(counts)} differ"
        )
        self.query_one(AttemptDiff).focus()


def _who(rec: dict[str, Any]) -> str:
    return (
        f"{rec.get('provider')}/{rec.get('model')} · {rec.get('mode')} · "
        f"{rec.get('case_id')} #{rec.get('attempt')} · {rec.get('started_at')}"
    )
