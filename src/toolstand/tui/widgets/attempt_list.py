"""The virtualised attempt list: a ScrollView painting rows straight from the index.

Nothing is read from disk to paint: every cell comes from the index's columns, so a
million rows scroll as fast as twenty, and rows appear while the index still grows.
Painted rows live in a small LRU cache keyed by row, width and state.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.theme import Theme

from toolstand.history import HistoryIndex, read_record
from toolstand.tui.model.verdicts import UNKNOWN, repair_of, repair_outcome
from toolstand.tui.widgets.attempt_layout import (
    CUT_MIDDLE,
    INDENT,
    REPAIRED,
    VERDICT_WORDS,
    Line,
    content_widths,
    fit,
    fit_codes,
    lines,
    one_provider,
    title_of,
)
from toolstand.util.printable import visible


class AttemptList(ScrollView, can_focus=True):
    """Rows of a HistoryIndex, all of them or those a query picked."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last (follow)", show=False),
        Binding("enter", "choose", "Open", id="history.open_attempt"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "attempt-list--header",
        "attempt-list--cursor",
        "attempt-list--pass",
        "attempt-list--fail",
        "attempt-list--error",
        "attempt-list--mark",
        "attempt-list--dim",
    }
    DEFAULT_CSS = """
    AttemptList { height: 1fr; overflow-x: hidden; }
    AttemptList > .attempt-list--header { text-style: bold; color: $text-muted; }
    AttemptList > .attempt-list--cursor { background: $block-cursor-blurred-background; }
    AttemptList:focus > .attempt-list--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    AttemptList > .attempt-list--pass { color: $success; }
    AttemptList > .attempt-list--fail { color: $error; text-style: bold; }
    AttemptList > .attempt-list--error { color: $warning; }
    AttemptList > .attempt-list--mark { color: $accent; text-style: bold; }
    AttemptList > .attempt-list--dim { color: $text-muted; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, init=False)
    marked: reactive[int | None] = reactive(None, init=False)  # an index row marked for a diff

    @dataclass
    class Chosen(Message):
        """Enter (or a click) on a row: ``row`` is the index row number."""

        row: int

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.index: HistoryIndex | None = None
        self.view: array[int] | None = None  # None: every indexed row
        self.follow = True  # keep the cursor on the newest row while it grows
        self._cache: LRUCache[tuple[int, int, int, int], Strip] = LRUCache(512)
        self._width = 80
        self._wants: dict[str, int] = {}  # the content columns' widths, from the index
        self._counted: tuple[int, ...] = ()  # the distinct values they were measured on
        self._lines: list[Line] = lines(80)  # each row's lines: one, or two where narrow
        # repair outcomes the index cannot tell (report_rows' odd lines), read from the
        # records of the rows painted, by a worker: row -> outcome, and the rows to read
        self._repairs: dict[int, str | None] = {}
        self._asked: list[int] = []

    # --- what is shown -----------------------------------------------------------------

    @property
    def count(self) -> int:
        if self.index is None:
            return 0
        return self.index.rows if self.view is None else len(self.view)

    def show(
        self, index: HistoryIndex | None, view: array[int] | None = None, top: bool = False
    ) -> None:
        """Show ``index`` (all rows, or the rows in ``view``); keeps the cursor's row, or
        with ``top`` (a new filter) starts at the first row."""
        keep = None if top else self.current_row
        if index is not self.index:
            self._repairs, self._asked = {}, []
        self.index, self.view = index, view
        self._cache.clear()
        self._measure()
        self._resize()
        if top:
            self.follow = False
            self.cursor = 0
            self.scroll_to(y=0, animate=False)
        elif keep is not None and view is not None:
            self.cursor = _bisect(view, keep)
        elif keep is not None:
            self.cursor = keep
        else:
            self.cursor = self.cursor  # clamped to the rows shown now
        self.refresh()

    def grew(self) -> None:
        """More rows were indexed (or matched): resize, and follow the tail if asked."""
        self._measure()
        self._resize()
        if self.follow and self.count:
            self.cursor = self.count - 1
        self.refresh()

    def _measure(self) -> None:
        """Size the columns to the index's content again when it has new distinct values."""
        ix = self.index
        counted = (
            ()
            if ix is None
            else (
                *(len(ix.facets[f].values) for f in ("case", "model", "provider", "mode")),
                len(ix.errors.values),
                len(ix.facets["feedback"].values),  # a repair arm: the verdict widens
            )
        )
        if counted == self._counted:
            return
        self._counted = counted
        self._wants = {} if ix is None else content_widths(ix)
        self._lines = lines(self._width, self._wants)
        self._cache.clear()
        self._resize()

    @property
    def per_row(self) -> int:
        """Lines a row takes (and the header): two where one cannot hold it whole."""
        return len(self._lines)

    def _resize(self) -> None:
        k = self.per_row
        self.virtual_size = Size(self.size.width, k * (self.count + 1))

    def line_of(self, position: int) -> int:
        """The line of the list (0: the header's first) where the row at ``position``
        (in the rows shown) begins, as painted now; off the list when scrolled away."""
        return self.per_row * (position + 1) - self.scroll_offset.y

    @property
    def current_row(self) -> int | None:
        """The index row under the cursor, if any."""
        if not self.count:
            return None
        c = min(self.cursor, self.count - 1)
        return c if self.view is None else self.view[c]

    def neighbour(self, step: int) -> int | None:
        """Move the cursor by ``step`` and return the row now under it."""
        if not self.count:
            return None
        self.cursor += step
        return self.current_row

    def watch_marked(self) -> None:
        self._cache.clear()
        self.refresh()

    # --- painting ----------------------------------------------------------------------

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, theme: Theme) -> None:
        self._cache.clear()  # the cached lines carry the old theme's colours
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._cache.clear()
        self._resize()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if width != self._width:
            self._width, self._lines = width, lines(width, self._wants)
            self._resize()
        k = self.per_row
        if y < k:
            return self._header(width, y)
        # the scroll offset counts lines (a whole row at the top when the cursor moved it)
        i, part = divmod(self.scroll_offset.y + y - k, k)
        if i >= self.count or self.index is None:
            return Strip.blank(width, self.rich_style)
        row = i if self.view is None else self.view[i]
        # the cursor's colour depends on focus: a line cached while blurred must not be
        # what a focused list draws (nor the other way round)
        cursor = 0 if i != self.cursor else (6 if self.has_focus else 2)
        state = cursor + (1 if row == self.marked else 0)
        key = (row, width, state, part)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._paint(row, width, state, part)
        return strip

    def _header(self, width: int, part: int) -> Strip:
        style = self.get_component_rich_style("attempt-list--header")
        titles = [(title_of(self.index, t, w), t, w) for t, w in self._lines[part]]
        text = " " * (1 + INDENT * part) + " ".join(
            fit(n, w, right=t in ("network", "#")) for n, t, w in titles
        )
        return Strip([Segment(fit(text, width), style)], width)

    def _paint(self, row: int, width: int, state: int, part: int) -> Strip:
        """Line ``part`` of a row: the mark and its columns (the second line indented)."""
        ix = self.index
        assert ix is not None
        base = self.rich_style
        if state & 2:
            base = base + self.get_component_rich_style("attempt-list--cursor", partial=True)
        verdict = ix.verdict_of(row)
        dim = self.get_component_rich_style("attempt-list--dim", partial=True)
        segs: list[Segment] = []
        mark_style = self.get_component_rich_style("attempt-list--mark", partial=True)
        segs.append(Segment("◆" if state & 1 and part == 0 else " ", base + mark_style))
        segs.append(Segment(" " * INDENT * part, base))
        columns = self._lines[part]
        for n, (title, w) in enumerate(columns):
            if title == "verdict":
                segs += self._verdict(ix, row, verdict, w, base)
            else:
                text, secondary = self._cell(ix, row, title, w)
                cell = fit(text, w, right=title in ("network", "#"), middle=title in CUT_MIDDLE)
                segs.append(Segment(cell, base + dim if secondary else base))
            if n < len(columns) - 1:
                segs.append(Segment(" ", base))
        return Strip(segs).adjust_cell_length(width, base)

    def _outcome_style(self, outcome: str) -> Style:
        """pass, fail, or anything else (a transport error) in its colour; partial: a
        cell's colour must not paint over the cursor's background."""
        name = {"pass": "attempt-list--pass", "fail": "attempt-list--fail"}.get(outcome)
        return self.get_component_rich_style(name or "attempt-list--error", partial=True)

    def _verdict(
        self, ix: HistoryIndex, row: int, verdict: str, width: int, base: Style
    ) -> list[Segment]:
        """The verdict cell: turn 1's verdict in its colour, then, for an attempt with
        repair turns, an arrow and how they ended in theirs (not bold: the recorded
        verdict is the one that stands out)."""
        word = VERDICT_WORDS.get(verdict, "?")
        repair = self._repair(ix, row)
        if repair is None:
            return [Segment(fit(word, width), base + self._outcome_style(verdict))]
        after = fit(REPAIRED.format(verdict="", repair=repair), max(0, width - len(word)))
        return [
            Segment(word, base + self._outcome_style(verdict)),
            Segment(after, base + self._outcome_style(repair) + Style(bold=False)),
        ]

    def _repair(self, ix: HistoryIndex, row: int) -> str | None:
        """How the row's repair turns ended, from the index; for a row it cannot tell,
        from its record once read (None until then: the row is painted again)."""
        repair = repair_outcome(ix, row)
        if repair != UNKNOWN:
            return repair
        if row not in self._repairs:
            self._repairs[row] = None  # asked once; a worker reads the asked rows
            self._asked.append(row)
            if len(self._asked) == 1:  # the first since the last read: one read a paint
                self.call_after_refresh(self._read_asked, ix)
        return self._repairs[row]

    def _read_asked(self, ix: HistoryIndex) -> None:
        rows, self._asked = self._asked, []
        if rows and ix is self.index:
            self._read_repairs(ix, rows)

    @work(thread=True, group="repairs", exit_on_error=False)
    def _read_repairs(self, ix: HistoryIndex, rows: list[int]) -> None:
        read: dict[int, str | None] = {}
        for row in rows:
            try:
                read[row] = repair_of(read_record(ix.path, ix.offsets[row]))
            except (OSError, ValueError):  # the detail says why, when opened
                read[row] = None
        self.app.call_from_thread(self._repairs_read, ix, read)

    def _repairs_read(self, ix: HistoryIndex, read: dict[int, str | None]) -> None:
        if ix is self.index:
            self._repairs.update(read)
            self._cache.clear()
            self.refresh()

    @staticmethod
    def _cell(ix: HistoryIndex, row: int, title: str, width: int) -> tuple[str, bool]:
        """A cell's text, and whether it is a secondary (dimmed) value."""
        if title == "time":
            t = ix.local_time(row)
            return ("?" if t is None else t.strftime("%m-%d %H:%M:%S")[-width:]), True
        if title == "#":
            return str(ix.attempt[row]), True
        if title == "errors":
            return fit_codes([visible(str(c)) for c in ix.errors_of(row)], width), False
        if title == "network":  # the attempt's total over all its turns (elapsed_ms)
            ms = ix.latency[row]
            return ("" if math.isnan(ms) else f"{ms:.0f}ms"), True
        if title == "provider/model":
            provider, model = ix.value("provider", row), ix.value("model", row)
            model = "?" if model is None else visible(str(model))
            if one_provider(ix) is not None:
                return model, False
            return f"{'?' if provider is None else visible(str(provider))}/{model}", False
        value = ix.value(title, row)  # a facet: provider, model, case, mode, feedback
        if title == "feedback":  # no arm: a row of a run without repair turns
            return ("none" if value is None else visible(str(value))), True
        return ("?" if value is None else visible(str(value))), title == "provider"

    # --- moving ------------------------------------------------------------------------

    def validate_cursor(self, cursor: int) -> int:
        return max(0, min(self.count - 1, cursor))

    def watch_cursor(self, old: int, new: int) -> None:
        self.follow = self.count > 0 and new >= self.count - 1
        k = self.per_row
        top = self.scroll_offset.y
        body = max(k, self.size.height - k)  # the lines below the header
        first = new * k  # the cursor row's first line, counted below the header
        if first < top:
            self.scroll_to(y=first, animate=False)
        elif first + k > top + body:
            self.scroll_to(y=first + k - body, animate=False)
        self.refresh()

    def action_move(self, step: int) -> None:
        if self.count:
            self.cursor += step

    def action_page(self, direction: int) -> None:
        k = self.per_row
        self.action_move(direction * max(1, (self.size.height - k) // k - 1))

    def action_jump(self, where: int) -> None:
        if self.count:
            self.cursor = 0 if where == 0 else self.count - 1

    def action_choose(self) -> None:
        row = self.current_row
        if row is not None:
            self.post_message(self.Chosen(row))

    def on_click(self, event: events.Click) -> None:
        k = self.per_row
        line = self.scroll_offset.y + event.y - k
        i = line // k
        if line >= 0 and i < self.count:
            if i == self.cursor and event.chain > 1:
                self.action_choose()
            self.cursor = i


def _bisect(view: array[int], row: int) -> int:
    """The position in ``view`` of ``row``, or of the first row after it."""
    lo, hi = 0, len(view)
    while lo < hi:
        mid = (lo + hi) // 2
        if view[mid] < row:
            lo = mid + 1
        else:
            hi = mid
    return min(lo, max(0, len(view) - 1))
