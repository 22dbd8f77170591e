"""The filter panel: free text, a time range and one checklist per facet, with counts.

It only builds a Query and shows counts it is given; the History screen runs the query
(history.query, in a worker) and hands the counts back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Label, Select, SelectionList, Static
from textual.widgets.selection_list import Selection

from toolstand.history import FACETS, TIME_PRESETS, Query, day_range, shown_label, value_label
from toolstand.util.printable import visible

# days get the time selector instead; the category (BFCL's main axis, a category per
# question file) right after the verdict and the error, where 80x24 shows it unscrolled
FIRST = ("verdict", "error", "category")
LISTED = (*FIRST, *(f for f in FACETS if f not in (*FIRST, "day")))


def _parse_day(text: str) -> date | None:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        return None


class FilterBar(VerticalScroll):
    """Facet checklists (value and count), a time selector and a text box."""

    @dataclass
    class Changed(Message):
        query: Query

    def __init__(self, today: Callable[[], date], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.today = today
        self.values: dict[str, list[str]] = {f: [] for f in LISTED}
        self._debounce: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="text in case id or user message", id="f-text", compact=True)
        yield Label("time", classes="facet-title")
        yield Select(
            [(p, p) for p in TIME_PRESETS], value="any", allow_blank=False, id="f-time",
            compact=True,
        )  # fmt: skip
        with Horizontal(id="f-range"):
            yield Input(placeholder="from YYYY-MM-DD", id="f-from", compact=True)
            yield Input(placeholder="to YYYY-MM-DD", id="f-to", compact=True)
        yield Static("", id="f-days", markup=False)
        for facet in LISTED:
            yield Label(facet, classes="facet-title", id=f"t-{facet}")
            yield SelectionList[str](id=f"f-{facet}", classes="facet", compact=True)

    def on_mount(self) -> None:
        self.query_one("#f-range").display = False

    # --- the query ---------------------------------------------------------------------

    def current(self) -> Query:
        chosen: dict[str, Any] = {
            f: frozenset(self.query_one(f"#f-{f}", SelectionList).selected) for f in LISTED
        }
        preset = str(self.query_one("#f-time", Select).value)
        days: tuple[date | None, date | None] | None = day_range(preset, self.today())
        if preset == "range":
            lo = _parse_day(self.query_one("#f-from", Input).value)
            hi = _parse_day(self.query_one("#f-to", Input).value)
            days = (lo, hi) if lo or hi else None
        return Query(**chosen, days=days, text=self.query_one("#f-text", Input).value)

    def _changed(self) -> None:
        self.post_message(self.Changed(self.current()))

    @on(SelectionList.SelectedChanged)
    def _picked(self, event: SelectionList.SelectedChanged[str]) -> None:
        event.stop()
        self._changed()

    @on(Select.Changed, "#f-time")
    def _time(self, event: Select.Changed) -> None:
        event.stop()
        self.query_one("#f-range").display = event.value == "range"
        self._changed()

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if self._debounce is not None:
            self._debounce.stop()
        # a query per keystroke would queue work on a million rows: wait for a pause
        self._debounce = self.set_timer(0.25, self._changed)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._debounce is not None:
            self._debounce.stop()
        self._changed()

    def set_time(self, preset: str) -> None:
        self.query_one("#f-time", Select).value = preset

    def choose(self, facet: str, values: set[str]) -> None:
        """Tick exactly ``values`` in a facet's list (a value not seen yet is listed)."""
        sl = self.query_one(f"#f-{facet}", SelectionList)
        with self.prevent(SelectionList.SelectedChanged):
            sl.deselect_all()
            for v in values:
                if v not in self.values[facet]:
                    self.values[facet].append(v)
                    sl.add_option(Selection(_prompt(facet, v, 0), v))
                sl.select(v)
        self._changed()

    def reset(self) -> None:
        """Forget every value and choice: another history is open (no Changed posted)."""
        with self.prevent(SelectionList.SelectedChanged, Select.Changed, Input.Changed):
            for facet in LISTED:
                self.query_one(f"#f-{facet}", SelectionList).clear_options()
                self.values[facet] = []
                self.query_one(f"#t-{facet}", Label).update(facet)
            self.query_one("#f-time", Select).value = "any"
            for name in ("#f-text", "#f-from", "#f-to"):
                self.query_one(name, Input).value = ""
        self.query_one("#f-range").display = False
        self.query_one("#f-days", Static).update("")

    def clear(self) -> None:
        with self.prevent(SelectionList.SelectedChanged, Select.Changed, Input.Changed):
            for facet in LISTED:
                self.query_one(f"#f-{facet}", SelectionList).deselect_all()
            self.query_one("#f-time", Select).value = "any"
            for name in ("#f-text", "#f-from", "#f-to"):
                self.query_one(name, Input).value = ""
        self.query_one("#f-range").display = False
        self._changed()

    # --- counts ------------------------------------------------------------------------

    def show_counts(self, counts: dict[str, Counter[Any]], known: dict[str, list[Any]]) -> None:
        """Label every value with its count; values seen for the first time are added."""
        for facet in LISTED:
            sl = self.query_one(f"#f-{facet}", SelectionList)
            have = self.values[facet]
            c = counts.get(facet, Counter())
            new = list(dict.fromkeys(value_label(v) for v in known.get(facet, [])))
            new = [v for v in new if v not in have]
            with self.prevent(SelectionList.SelectedChanged):
                for i, v in enumerate(have):
                    sl.replace_option_prompt_at_index(i, _prompt(facet, v, c.get(v, 0)))
                if new:
                    have.extend(new)
                    sl.add_options(Selection(_prompt(facet, v, c.get(v, 0)), v) for v in new)
            self.query_one(f"#t-{facet}", Label).update(f"{facet} ({len(have)})")
        days = counts.get("day", Counter())
        # an attempt without a readable time has no day: it is counted, not sorted
        dated = sorted((d, n) for d, n in days.items() if isinstance(d, date))
        text = "  ".join(f"{d:%m-%d} {n}" for d, n in dated[-7:])
        undated = sum(n for d, n in days.items() if not isinstance(d, date))
        if undated:
            text += f"  no date {undated}"
        self.query_one("#f-days", Static).update(text.strip())


def _prompt(facet: str, value: str, count: int) -> Content:
    # never markup, never a control character; "?" in words where it means one
    return Content(f"{visible(shown_label(facet, value))}  {count:,}")
