"""Line diffs of two attempts' bodies, one section per turn: lines only in A marked ``-``,
only in B ``+``, long unchanged runs folded. Long lines wrap, never cut."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from toolstand.tui.model.body_diff import Section
from toolstand.util.line_diff import DiffLine

_STYLE = {"removed": "$error", "added": "$success", "folded": "dim italic", "same": ""}


def _number(n: int | None) -> str:
    return f"{n:>4}" if n is not None else "    "


def diff_line(line: DiffLine) -> Content:
    """``- 12      │ text``: the sign, A's and B's line numbers, the line."""
    if line.tag == "folded":
        return Content.styled(f"  … {line.text} …", _STYLE["folded"])
    head = f"{line.sign} {_number(line.a)} {_number(line.b)} │ "
    style = _STYLE[line.tag]
    return Content.styled(head, style + " bold" if style else "dim") + Content.styled(
        line.text, style
    )


class LineDiffView(VerticalScroll, can_focus=True):
    """The sections of one part (raw bodies or decisions), scrolled with the keys."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sections: list[Section] = []

    def show(self, sections: list[Section]) -> None:
        self.sections = sections
        self.remove_children()
        widgets = []
        for s in sections:
            count = f"{s.changed} line{'s' if s.changed != 1 else ''} differ"
            title = Content.styled(f"{s.title} · {count if s.changed else 'the same'}", "bold")
            body = Content("\n").join(diff_line(x) for x in s.lines) if s.lines else Content("")
            widgets.append(Static(title, classes="diff-title"))
            widgets.append(Static(body, classes="diff-body"))
        self.mount_all(widgets)
