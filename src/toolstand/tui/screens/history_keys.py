"""The History screen's keys, each with its tooltip and id (a keymap remaps them by id).

The attempt keys (mark, diff, promote, …) are the detail screen's too: on the list they
act on the row under the cursor.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

from toolstand.tui.screens.attempt import ATTEMPT_BINDINGS

HISTORY_BINDINGS: list[BindingType] = [
    # the footer shows what fits at 80 columns; the rest are in the help (?) and palette
    Binding("o", "open_file", "Open file", tooltip="Open a run file", id="history.open_file"),
    Binding(
        "f",
        "filters",
        "Filters",
        show=False,
        tooltip="Show or hide the filters",
        id="history.filters",
    ),
    Binding(
        "slash",
        "search",
        "Search",
        show=False,
        tooltip="Search case ids and user messages",
        id="history.search",
    ),
    Binding(
        "x",
        "clear_filters",
        "Clear filters",
        show=False,
        tooltip="Clear every filter",
        id="history.clear",
    ),
    Binding(
        "F",
        "failures",
        "Failures",
        tooltip="Show failures only (again: everything)",
        id="history.failures",
    ),
    Binding(
        "T",
        "cycle_time",
        "Today / yesterday",
        show=False,
        tooltip="Cycle the date filter: any day, today, yesterday",
        id="history.time",
    ),
    Binding(
        "escape",
        "focus_list",
        "Back to the list",
        show=False,
        tooltip="Go back to the attempt list",
        id="history.list",
    ),
    *[
        Binding(
            b.key,
            b.action.replace("act(", "act_current("),
            b.description,
            show=b.show,
            tooltip=b.tooltip,
            id=b.id,
        )
        for b in ATTEMPT_BINDINGS
        if isinstance(b, Binding)
    ],
]
