"""The History screen: a virtualised list of the attempts of one run file, with filters.

A thread worker grows the index (history.index) and posts coalescing progress messages;
another runs each query (history.query) over the rows indexed so far, then over each
batch of new rows, so the list paints before indexing ends and follows a live file.
The screen owns the state (index, query, result) and routes messages; nothing here
reads the file on the UI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, SelectionList, Static
from textual.worker import get_current_worker

from toolstand.history import (
    HistoryIndex,
    Query,
    QueryResult,
    list_run_files,
    read_record,
    run_query,
    sidecar,
)
from toolstand.tui.screens.attempt import AttemptScreen, DiffScreen
from toolstand.tui.screens.base import PaletteCommand, ToolstandScreen
from toolstand.tui.screens.history_actions import AttemptActions
from toolstand.tui.screens.history_keys import HISTORY_BINDINGS
from toolstand.tui.screens.run_picker import RunPicker
from toolstand.tui.widgets.attempt_list import AttemptList
from toolstand.tui.widgets.filter_bar import LISTED, FilterBar
from toolstand.tui.widgets.footer import Footer
from toolstand.tui.widgets.nav import NavBar
from toolstand.tui.widgets.status_line import StatusLine
from toolstand.util.printable import visible

FIRST_BYTES = 1 << 18  # the first batch is small: the list paints after a few ms
BATCH_BYTES = 1 << 22
POLL_S = 1.0
QUERY_SLICE = 1 << 17  # rows per query pass
PROGRESS_S = 0.25
SAVE_ROWS = 200_000  # a cold index saves its sidecar every so many new rows


def not_a_history(ix: HistoryIndex, indexing: bool) -> bool:
    """Read to the end and found neither a run header nor an attempt."""
    return not indexing and ix.rows == 0 and not ix.headers and (ix.end > 0 or bool(ix.warnings))


def today() -> date:
    """The local date "today" means (tests replace it)."""
    return datetime.now().date()


class HistoryScreen(AttemptActions, ToolstandScreen):
    CSS_PATH = "../history.tcss"
    AUTO_FOCUS = "#attempts"
    BINDINGS: ClassVar[list[BindingType]] = HISTORY_BINDINGS

    @dataclass
    class Progress(Message):
        """The index grew (or finished); replaces any older one still queued."""

        index: HistoryIndex
        done: bool

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, HistoryScreen.Progress) and message.index is self.index

    @dataclass
    class Failed(Message):
        """The file could not be read (or was replaced)."""

        index: HistoryIndex | None
        reason: str

    @dataclass
    class Queried(Message):
        """A query pass ended: ``full`` for the whole file, else only the new rows."""

        index: HistoryIndex
        result: QueryResult
        full: bool

    @dataclass
    class Chosen(Message):
        """The newest run file (None: there is none)."""

        path: str | None

    # what the status line and the list show; the watchers keep them in step
    indexing: reactive[bool] = reactive(False, init=False)
    marked: reactive[int | None] = reactive(None, init=False)
    query_: reactive[Query] = reactive(Query, always_update=True, init=False)  # a re-run too

    def __init__(self) -> None:
        super().__init__()
        self.path: str | None = None
        self.index: HistoryIndex | None = None
        self.result: QueryResult | None = None
        self.querying = False
        self.warned = 0  # the index's warnings already told
        self.to_top = False  # the next full result is a new filter's: show it from the top

    def compose(self) -> ComposeResult:
        yield NavBar("history")
        yield StatusLine("no history open · o opens one", id="history-status")
        with Horizontal(id="history-body"):
            yield FilterBar(today, id="history-filters")
            with Vertical(id="list-box"):
                yield AttemptList(id="attempts")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(FilterBar).display = False
        wanted = self.app.history_path
        if wanted:
            self.open(wanted)
        else:
            self._newest()
        self.set_interval(POLL_S, self._poll)

    @work(thread=True, exclusive=True, group="pick", exit_on_error=False)
    def _newest(self) -> None:
        files = list_run_files(self.app.project.runs_dir)
        self.post_message(self.Chosen(files[0].path if files else None))

    @on(Chosen)
    def _chosen(self, event: Chosen) -> None:
        if event.path and self.path is None:
            self.open(event.path)

    # --- opening and indexing ----------------------------------------------------------

    def open(self, path: str) -> None:
        """Show ``path``: a fresh index, grown by a thread worker."""
        self.path = path
        self.app.history_path = path  # the Report screen's default
        self.index = HistoryIndex(path)
        self.result = None
        self.marked = None
        self.warned = 0
        # everything derived from the last file goes: its facet values, counts and filters
        self.query_one(FilterBar).reset()
        self.set_reactive(HistoryScreen.query_, Query())  # no query to run: nothing indexed
        self.querying = False
        lst = self.query_one(AttemptList)
        lst.follow = False
        lst.cursor = 0
        lst.show(self.index)
        self.query_one(NavBar).set_detail(visible(Path(path).name))
        self._grow(self.index)

    def on_screen_resume(self) -> None:
        # the Report screen (or the CLI) may have opened another history meanwhile
        wanted = self.app.history_path
        if wanted and self.path is not None and wanted != self.path:
            self.open(wanted)
        else:
            self._poll()  # what was appended while away: only the new tail is read

    def _poll(self) -> None:
        """Follow a file still being written: the worker stats it and reads the new tail.
        Only while shown: a screen kept mounted out of sight catches up on its return."""
        if self.index is not None and not self.indexing and self.is_current:
            self._grow(self.index)

    def _grow(self, ix: HistoryIndex) -> None:
        self.indexing = True
        self._index_worker(ix)

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _index_worker(self, ix: HistoryIndex) -> None:
        worker = get_current_worker()
        if ix.end == 0 and sidecar.load(ix):
            ix.persisted = ix.rows
            self.post_message(self.Progress(ix, False))
        budget = FIRST_BYTES if ix.rows == 0 else BATCH_BYTES
        try:
            size = ix.size()
            if size < ix.end:
                self.post_message(self.Failed(ix, "the file shrank: it was replaced; reopening"))
                return
            posted, last = False, 0.0
            while not worker.is_cancelled:
                before, tail = ix.end, ix.tail
                ix.update(max_bytes=budget)
                budget = BATCH_BYTES
                moved = ix.end != before or ix.tail != tail
                done = ix.end >= size or not moved
                # a few repaints a second: each one costs the UI thread a layout pass
                now = time.monotonic()
                if not posted or done or (moved and now - last >= PROGRESS_S):
                    self.post_message(self.Progress(ix, done))
                    posted, last = True, now
                grown = ix.rows - ix.persisted
                # the next session starts from here: a long cold index is saved as it
                # goes (one left half-way is not lost), the rest at the end when it is
                # worth a rewrite (a live file's few new rows are not)
                worth = grown >= sidecar.MIN_ROWS or ix.rows > ix.persisted * 1.25
                due = grown >= SAVE_ROWS or (done and worth)
                if due and sidecar.save(ix) is not None:
                    ix.persisted = ix.rows
                if done:
                    return
        except OSError as exc:
            self.post_message(self.Failed(ix, f"cannot read {ix.path}: {exc.strerror}"))

    @on(Progress)
    def _progress(self, event: Progress) -> None:
        if event.index is not self.index:
            return
        self.indexing = not event.done
        if not self.query_.active:
            self.query_one(AttemptList).grew()  # every row shows: no need to wait for counts
        self._refresh_rows()
        self._status()
        self._warn(event.index)

    def watch_indexing(self) -> None:
        self._status()

    def _warn(self, ix: HistoryIndex) -> None:
        """Say once which lines the index skipped (a bare or unknown record, bad JSON)."""
        new = ix.warnings[self.warned :]
        if not new or not_a_history(ix, self.indexing):
            return
        self.warned = len(ix.warnings)
        shown = "\n".join(visible(f"line {w.line}: {w.message}") for w in new[:3])
        more = f"\n… and {len(new) - 3} more" if len(new) > 3 else ""
        self.notify(
            f"{len(new)} line(s) of {visible(Path(ix.path).name)} skipped:\n{shown}{more}",
            severity="warning",
            markup=False,
        )

    @on(Failed)
    def _failed(self, event: Failed) -> None:
        if event.index is not self.index:
            return
        self.indexing = False
        self.notify(visible(event.reason), severity="error", markup=False)  # names the file
        if "reopening" in event.reason and self.path:
            self.open(self.path)

    # --- querying ----------------------------------------------------------------------

    def _refresh_rows(self) -> None:
        """Bring the result up to the rows indexed now (a query over the new rows only)."""
        ix = self.index
        if ix is None or self.querying:
            return
        start = 0 if self.result is None else self.result.end
        if start < ix.rows:
            self.querying = True
            self._query_worker(ix, self.query_, start, start == 0)

    @work(thread=True, exclusive=True, group="query", exit_on_error=False)
    def _query_worker(self, ix: HistoryIndex, q: Query, start: int, full: bool) -> None:
        worker = get_current_worker()
        end = ix.rows
        # in slices: each C-level pass holds the GIL, and the UI thread needs it to paint
        result = run_query(ix, q, start, min(end, start + QUERY_SLICE))
        while result.end < end and not worker.is_cancelled:
            result.extend(run_query(ix, q, result.end, min(end, result.end + QUERY_SLICE)))
        if not worker.is_cancelled:
            self.post_message(self.Queried(ix, result, full))

    @on(Queried)
    def _queried(self, event: Queried) -> None:
        if event.index is not self.index or event.result.query != self.query_:
            return
        self.querying = False
        lst = self.query_one(AttemptList)
        if event.full or self.result is None:
            self.result = event.result
            lst.show(event.index, self.result.rows if self.query_.active else None, self.to_top)
            self.to_top = False
        elif event.result.start == self.result.end:
            self.result.extend(event.result)
            lst.view = self.result.rows if self.query_.active else None
            lst.grew()
        self._counts()
        self._status()
        self._refresh_rows()

    @on(FilterBar.Changed)
    def _filter(self, event: FilterBar.Changed) -> None:
        self.set_query(event.query)

    def set_query(self, q: Query) -> None:
        """Show the rows matching ``q`` (counted and listed by a worker)."""
        self.query_ = q

    def watch_query_(self) -> None:
        self.result = None
        self.querying = False
        self.to_top = True
        self._refresh_rows()
        self._status()

    def _counts(self) -> None:
        ix, result = self.index, self.result
        # a hidden panel is filled when it opens; choose() lists values it has not seen
        if ix is None or result is None or not self.query_one(FilterBar).display:
            return
        known: dict[str, list[Any]] = {
            "verdict": list(ix.verdict.values[:3]),
            "error": sorted({str(c) for codes in ix.errors.values for c in codes or ()}),
            "run": ix.facets["run"].values,
        }
        for f in LISTED:
            if f not in known:
                known[f] = ix.facets[f].values
        self.query_one(FilterBar).show_counts(result.counts, known)

    def _status(self) -> None:
        ix = self.index
        if ix is None:
            return
        status = self.query_one("#history-status", Static)
        if not_a_history(ix, self.indexing):
            first = ix.all_warnings()[:1]
            why = f" (line {first[0].line}: {first[0].message})" if first else ""
            status.update(
                visible(f"{Path(ix.path).name} is not a toolstand history: no run header "
                        f"and no attempt line{why}")
            )  # fmt: skip
            return
        parts = [f"{ix.rows:,} attempts"]
        # only while something is left to read: a poll of a file that did not grow
        # (once a second) would flash "indexing 100%" and take it back
        if self.indexing and ix.end < ix.size_hint:
            parts.append(f"indexing {100 * ix.end // ix.size_hint}%")
        if self.result is not None and self.query_.active:
            parts.append(f"{len(self.result.rows):,} match: {self.query_.describe()}")
        elif self.query_.active:
            parts.append(f"filtering: {self.query_.describe()}")
        if self.marked is not None:
            parts.append("1 marked ◆ · d on another diffs them")
        warnings = ix.all_warnings()
        if warnings:
            parts.append(f"⚠ {warnings[-1].message} ({len(warnings)})")
        status.update(visible(" · ".join(parts)))

    # --- keys --------------------------------------------------------------------------

    def action_open_file(self) -> None:
        def chosen(path: str | None) -> None:
            if path:
                self.open(path)

        self.app.push_screen(RunPicker(self.app.project.runs_dir, self.path), chosen)

    def action_filters(self) -> None:
        bar = self.query_one(FilterBar)
        bar.display = not bar.display
        if bar.display:
            self._counts()
            first = bar.query_one("#f-verdict", SelectionList)
            if first.highlighted is None and first.option_count:
                first.highlighted = 0
            # the panel opens at its top, the verdicts in view: a focus that scrolled
            # before the panel's first layout would hide the text box and the time
            bar.scroll_home(animate=False)
            first.focus(scroll_visible=False)
        else:
            self.action_focus_list()

    def action_search(self) -> None:
        bar = self.query_one(FilterBar)
        if not bar.display:
            bar.display = True
            self._counts()
        bar.query_one("#f-text", Input).focus()

    def action_clear_filters(self) -> None:
        self.query_one(FilterBar).clear()

    def action_failures(self) -> None:
        bar = self.query_one(FilterBar)
        bar.choose("verdict", set() if self.query_.verdict == {"fail"} else {"fail"})

    def action_cycle_time(self) -> None:
        order = ("any", "today", "yesterday")
        bar = self.query_one(FilterBar)
        current = str(bar.query_one("#f-time").value)  # type: ignore[attr-defined]
        nxt = order[(order.index(current) + 1) % 3] if current in order else "any"
        bar.set_time(nxt)

    def action_focus_list(self) -> None:
        self.query_one(AttemptList).focus()

    @on(AttemptList.Chosen)
    def _open_attempt(self, event: AttemptList.Chosen) -> None:
        self.app.push_screen(AttemptScreen(self, event.row))

    def action_act_current(self, what: str) -> None:
        row = self.query_one(AttemptList).current_row
        if row is None:
            self.notify("No attempt under the cursor.", markup=False)
            return
        self.act_on(what, row)

    def act_on(self, what: str, row: int) -> None:
        """Do ``what`` (an action of the attempt keys) to index row ``row``."""
        actions: dict[str, Callable[[int], None]] = {
            "mark": self.mark_row,
            "diff": self.diff_row,
            "promote": self.promote_row,
            "rerun": self.rerun_row,
            "rejudge": self.rejudge_row,
            "copy": self.copy_row,
        }
        actions[what](row)

    # --- what the detail screen asks ---------------------------------------------------

    def offset_of(self, row: int) -> int:
        assert self.index is not None
        return self.index.offsets[row]

    def step(self, row: int, delta: int) -> int | None:
        lst = self.query_one(AttemptList)
        if lst.current_row != row:
            return row
        return lst.neighbour(delta)

    def mark_row(self, row: int) -> None:
        self.marked = None if self.marked == row else row
        # the status line says it where it shows (a toast there covered the diff it
        # was about); the attempt screen has none
        if self.marked is not None and self.app.screen is not self:
            self.notify("Marked: d on another attempt diffs the two.", markup=False)

    def watch_marked(self, marked: int | None) -> None:
        self.query_one(AttemptList).marked = marked
        self._status()

    def diff_row(self, row: int) -> None:
        if self.marked is None or self.path is None:
            self.notify("Mark an attempt first (m), then press d on another.", markup=False)
            return
        if self.marked == row:
            self.notify("That is the marked attempt: choose another.", markup=False)
            return
        self.app.clear_notifications()  # the diff is what they were about
        self.app.push_screen(
            DiffScreen(self.path, (self.offset_of(self.marked), self.offset_of(row)))
        )

    def load_record(self, row: int, then: Callable[[dict[str, Any]], None]) -> None:
        """Read one record in a thread worker, then call ``then`` on the UI thread."""
        assert self.path is not None
        self._read(self.path, self.offset_of(row), then)

    @work(thread=True, group="records", exit_on_error=False)
    def _read(self, path: str, offset: int, then: Callable[[dict[str, Any]], None]) -> None:
        try:
            rec = read_record(path, offset)
        except (OSError, ValueError) as exc:
            self.app.call_from_thread(
                self.notify,
                visible(f"Cannot read the attempt: {exc}"),
                severity="error",
                markup=False,
            )
            return
        self.app.call_from_thread(then, rec)

    def palette_commands(self) -> Iterator[PaletteCommand]:
        yield ("History: show failures only", "verdict = fail (F)", self.action_failures)
        yield ("History: today's attempts", "time = today", lambda: self._time("today"))
        yield ("History: yesterday's attempts", "time = yesterday", lambda: self._time("yesterday"))

    def _time(self, preset: str) -> None:
        self.query_one(FilterBar).set_time(preset)
