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
from toolstand.tui.fit import cut_middle
from toolstand.tui.model.verdicts import UNKNOWN, has_repairs, repair_of, repair_outcome
from toolstand.tui.widgets.columns import Column, pick_layout
from toolstand.util.printable import visible

# (title, least width): the content columns are sized to their content above that;
# "provider/model" (one cell of both) stands in for the two where they do not both fit
COLUMNS: tuple[tuple[str, int | None], ...] = (
    ("time", 14),
    ("provider", 8),
    ("model", 10),
    ("provider/model", None),
    ("case", 12),
    ("mode", 8),
    ("#", 2),
    ("verdict", 7),
    ("errors", 10),
    ("network", 7),
)
# what gives way, in turn, when the width is short: the provider's own column (it joins
# the model's: which run an attempt is of stays on the row, the simulator's "sim" costs
# four cells, not a title's nine), the date, the network time, the time, the attempt
# number, the mode; the verdict (its title whole) and the errors stay (80x24 with the filter panel open)
_FOLDED: dict[str, int | None] = {"provider": None, "model": None, "provider/model": 10}
_NO_TIME: dict[str, int | None] = {**_FOLDED, "network": None, "time": None}
FALLBACKS: tuple[dict[str, int | None], ...] = (
    {},
    _FOLDED,
    {**_FOLDED, "time": 8},
    {**_FOLDED, "time": 8, "network": None},
    _NO_TIME,
    {**_NO_TIME, "#": None},
    {**_NO_TIME, "#": None, "mode": None},
    {**_NO_TIME, "#": None, "mode": None, "provider/model": 8, "case": 8, "errors": 6},
)
CUT_MIDDLE = ("case", "model", "provider", "provider/model")  # ids: their ends tell them apart
# raised to their content in turn
CONTENT = ("case", "model", "provider/model", "provider", "mode", "errors")
ERRORS_GOAL = 15  # a code such as unexpected_call whole: a list may be longer still
VERDICT_WORDS = {"pass": "pass", "fail": "FAIL", "error": "err"}
# turn 1's verdict (the attempt's), then how its repair turns ended, in lower case after
# an arrow: "FAIL→pass" is a failure that a repair turn fixed, never a pass
REPAIRED = "{verdict}→{repair}"


def layout(width: int, wants: dict[str, int] | None = None) -> list[tuple[str, int]]:
    """The columns shown at ``width`` cells and their widths (one space between), each
    content column (``wants``: its longest value) sized to its content where it fits: the
    fullest set of columns in which the case ids and the error codes are whole, the rest
    to the errors."""
    wants = wants or {}
    stages = []
    for change in FALLBACKS:
        shown = [(t, change.get(t, least)) for t, least in COLUMNS]
        stages.append(
            [
                Column(t, _want(t, wants) if t in wants else int(least), _least(t, least, wants))
                for t, least in shown
                if least is not None
            ]
        )
    raised = [sorted(stage, key=_raise_order) for stage in stages]
    goals = {"case": wants.get("case", 0), "errors": min(ERRORS_GOAL, wants.get("errors", 0))}
    # the run whole too, where the time can give way for it (not the case ids, not the codes)
    run = {**goals, "provider/model": wants.get("provider/model", 0)}
    for wanted in (run, goals):
        # a space before each column and the mark: one cell each
        widths = pick_layout(width, raised, gap=1, goals=wanted, rest="errors")
        if all(widths[k] >= g for k, g in wanted.items() if k in widths):
            break
    return [(t, widths[t]) for t, _ in COLUMNS if t in widths]


def _want(key: str, wants: dict[str, int]) -> int:
    """A column's width for its content and its title (the folded column's title, which
    depends on the content, is counted in its want)."""
    return wants[key] if key == "provider/model" else max(len(key), wants[key])


def _least(key: str, least: int | None, wants: dict[str, int]) -> int:
    """A column's least width: its own, or for a verdict with its repair's outcome
    beside it, the whole of that ("FAIL→pass" cut would read as a verdict)."""
    return max(int(least or 0), wants.get(key, 0) if key == "verdict" else 0)


def _raise_order(column: Column) -> int:
    return CONTENT.index(column.key) if column.key in CONTENT else len(CONTENT)


def content_widths(ix: HistoryIndex) -> dict[str, int]:
    """The longest value of each content column in ``ix``, from its distinct values."""
    wants = {
        f: max((len(visible(str(v))) for v in ix.facets[f].values), default=0)
        for f in ("case", "model", "provider", "mode")
    }
    # one provider in the file (the simulator's "sim"): the title names it, the cells
    # hold the models alone
    # hold the models alone (title_of): the title's width is counted here
    if _one_provider(ix) is not None:
        wants["provider/model"] = max(len("model"), wants["model"])
    else:
        wants["provider/model"] = max(len("provider/model"), wants["provider"] + 1 + wants["model"])
    wants["errors"] = max(
        (len(visible(",".join(map(str, v)))) for v in ix.errors.values), default=0
    )
    if has_repairs(ix):
        wants["verdict"] = len(REPAIRED.format(verdict="FAIL", repair="pass"))
    return wants


def _one_provider(ix: HistoryIndex) -> str | None:
    """The provider of every attempt in ``ix``, when there is one only."""
    values = ix.facets["provider"].values
    return visible(str(values[0])) if len(values) == 1 else None


def title_of(ix: HistoryIndex | None, key: str, width: int) -> str:
    """A column's title: the folded provider/model column, with one provider, is the
    models' column, its title naming the provider where it fits."""
    one = None if ix is None or key != "provider/model" else _one_provider(ix)
    if one is None:
        return key
    named = f"model ({one})"
    return named if len(named) <= width else "model"


def _fit(text: str, width: int, right: bool = False, middle: bool = False) -> str:
    if len(text) > width:
        return cut_middle(text, width) if middle else text[: max(0, width - 1)] + "…"
    return text.rjust(width) if right else text.ljust(width)


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
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(512)
        self._width = 80
        self._wants: dict[str, int] = {}  # the content columns' widths, from the index
        self._counted: tuple[int, ...] = ()  # the distinct values they were measured on
        self._layout: list[tuple[str, int]] = layout(80)
        # repair outcomes the index cannot tell (report_rows' odd lines), read from the
        # records of the rows painted, by a worker: row -> outcome, and the rows asked
        self._repairs: dict[int, str | None] = {}
        self._asked: set[int] = set()

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
            self._repairs, self._asked = {}, set()
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
                len(ix.report.kinds),  # a repair arm's first outcome widens the verdict
            )
        )
        if counted == self._counted:
            return
        self._counted = counted
        self._wants = {} if ix is None else content_widths(ix)
        self._layout = layout(self._width, self._wants)
        self._cache.clear()

    def _resize(self) -> None:
        self.virtual_size = Size(self.size.width, self.count + 1)

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
            self._width, self._layout = width, layout(width, self._wants)
        if y == 0:
            return self._header(width)
        i = self.scroll_offset.y + y - 1
        if i >= self.count or self.index is None:
            return Strip.blank(width, self.rich_style)
        row = i if self.view is None else self.view[i]
        # the cursor's colour depends on focus: a line cached while blurred must not be
        # what a focused list draws (nor the other way round)
        cursor = 0 if i != self.cursor else (6 if self.has_focus else 2)
        state = cursor + (1 if row == self.marked else 0)
        key = (row, width, state)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._paint(row, width, state)
        return strip

    def _header(self, width: int) -> Strip:
        style = self.get_component_rich_style("attempt-list--header")
        titles = [(title_of(self.index, t, w), t, w) for t, w in self._layout]
        text = " " + " ".join(_fit(n, w, right=t in ("network", "#")) for n, t, w in titles)
        return Strip([Segment(_fit(text, width), style)], width)

    def _paint(self, row: int, width: int, state: int) -> Strip:
        ix = self.index
        assert ix is not None
        base = self.rich_style
        if state & 2:
            base = base + self.get_component_rich_style("attempt-list--cursor", partial=True)
        verdict = ix.verdict_of(row)
        dim = self.get_component_rich_style("attempt-list--dim", partial=True)
        segs: list[Segment] = []
        mark_style = self.get_component_rich_style("attempt-list--mark", partial=True)
        segs.append(Segment("◆" if state & 1 else " ", base + mark_style))
        for n, (title, w) in enumerate(self._layout):
            if title == "verdict":
                segs += self._verdict(ix, row, verdict, w, base)
            else:
                text, secondary = self._cell(ix, row, title, w)
                cell = _fit(text, w, right=title in ("network", "#"), middle=title in CUT_MIDDLE)
                segs.append(Segment(cell, base + dim if secondary else base))
            if n < len(self._layout) - 1:
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
            return [Segment(_fit(word, width), base + self._outcome_style(verdict))]
        after = _fit(REPAIRED.format(verdict="", repair=repair), max(0, width - len(word)))
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
        if row not in self._asked:
            self._asked.add(row)
            if len(self._asked) - len(self._repairs) == 1:  # the first of this paint
                self.call_after_refresh(self._read_asked, ix)
        return self._repairs.get(row)

    def _read_asked(self, ix: HistoryIndex) -> None:
        rows = sorted(self._asked.difference(self._repairs))
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
            return visible(",".join(map(str, ix.errors_of(row)))), False
        if title == "network":  # the attempt's total over all its turns (elapsed_ms)
            ms = ix.latency[row]
            return ("" if math.isnan(ms) else f"{ms:.0f}ms"), True
        if title == "provider/model":
            provider, model = ix.value("provider", row), ix.value("model", row)
            model = "?" if model is None else visible(str(model))
            if _one_provider(ix) is not None:
                return model, False
            return f"{'?' if provider is None else visible(str(provider))}/{model}", False
        facet = {"provider": "provider", "model": "model", "case": "case", "mode": "mode"}[title]
        value = ix.value(facet, row)
        return ("?" if value is None else visible(str(value))), title == "provider"

    # --- moving ------------------------------------------------------------------------

    def validate_cursor(self, cursor: int) -> int:
        return max(0, min(self.count - 1, cursor))

    def watch_cursor(self, old: int, new: int) -> None:
        self.follow = self.count > 0 and new >= self.count - 1
        top = self.scroll_offset.y
        body = max(1, self.size.height - 1)
        if new < top:
            self.scroll_to(y=new, animate=False)
        elif new >= top + body:
            self.scroll_to(y=new - body + 1, animate=False)
        self.refresh()

    def action_move(self, step: int) -> None:
        if self.count:
            self.cursor += step

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.size.height - 2))

    def action_jump(self, where: int) -> None:
        if self.count:
            self.cursor = 0 if where == 0 else self.count - 1

    def action_choose(self) -> None:
        row = self.current_row
        if row is not None:
            self.post_message(self.Chosen(row))

    def on_click(self, event: events.Click) -> None:
        i = self.scroll_offset.y + event.y - 1
        if 0 <= i < self.count:
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
