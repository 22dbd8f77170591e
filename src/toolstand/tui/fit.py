"""Fitting outside text into a cell: control characters spelled, long ids cut in the middle.

Case ids of one family share their start and their end (``recovery_no_tools_regression``,
``recovery_no_retry_regression``): cut at the end, two of them look alike, so an id is cut
in the middle, where they differ.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from toolstand.util.printable import visible

__all__ = ["cut_middle", "fit_id", "fit_title"]


def cut_middle(text: str, width: int) -> str:
    """``text`` whole when it fits in ``width`` characters, else its start and end around "…"."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    keep = width - 1
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def fit_id(value: object, width: int) -> str:
    """An id from a case file or a history, visible and cut in the middle to ``width``."""
    return cut_middle(visible(str(value)), width)


def fit_title(choices: Sequence[str], width: int) -> str:
    """The first of ``choices`` (the fullest first) that fits ``width`` cells, else the
    last cut in the middle: a pane's title says what it can in the room it has."""
    for choice in choices:
        if cell_len(choice) <= width:
            return choice
    return cut_middle(choices[-1], width) if choices else ""
