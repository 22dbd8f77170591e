"""The one-line bar naming the screens and their jump keys, the current one lit."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class NavBar(Static):
    """F1 Cases  F2 Run  F3 History  F4 Report, with the active mode highlighted."""

    def __init__(self, active: str, detail: str = "") -> None:
        super().__init__(id="nav")
        self.active = active
        self.detail = detail

    def on_mount(self) -> None:
        self.update(self._content())

    def set_detail(self, detail: str) -> None:
        self.detail = detail
        self.update(self._content())

    def _content(self) -> Content:
        from toolstand.tui.registry import SCREENS  # the registry imports this module

        parts: list[tuple[str, str] | str] = [("toolstand ", "bold")]
        for entry in SCREENS:
            lit = entry.mode == self.active
            parts.append(("▌" if lit else " ", "$accent" if lit else ""))
            parts.append(
                (
                    f"{entry.key.upper()} {entry.title} ",
                    "bold $text on $accent" if lit else "$text-muted",
                )
            )
        if self.detail:
            parts.append((f"  {self.detail}", "italic $text-muted"))
        return Content.assemble(*parts)
