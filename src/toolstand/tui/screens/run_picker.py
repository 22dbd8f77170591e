"""Pick a history file: each runs/*.jsonl with its size, date, models and attempt count.

The listing is read in a thread worker (a header line and a sample per file), so a
folder of large or live files opens at once.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from toolstand.history_files import RunFile, list_run_files

LIVE_S = 30  # a file written this recently may still be growing


def human_size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def describe(rf: RunFile, now: float) -> str:
    when = (rf.started_at or "")[:16].replace("T", " ") or time.strftime(
        "%Y-%m-%d %H:%M", time.localtime(rf.mtime)
    )
    count = f"{rf.attempts:,}" if rf.exact else f"~{rf.attempts:,}"
    models = ", ".join(m.split("/", 1)[-1] for m in rf.models) or "?"
    live = " · live" if now - rf.mtime < LIVE_S else ""
    sim = " (simulated)" if rf.simulated else ""
    return f"{Path(rf.path).name} · {human_size(rf.size)} · {when} · {count} attempts{live}\n  {models}{sim}"


class RunPicker(ModalScreen[str | None]):
    """Returns the chosen file's path, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Cancel", id="picker.cancel"),
    ]

    class Listed(Message):
        def __init__(self, files: list[RunFile]) -> None:
            super().__init__()
            self.files = files

    def __init__(self, folder: Path, current: str | None = None) -> None:
        super().__init__()
        self.folder = folder
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="picker"):
            yield Label(f"Open a history from {self.folder}", classes="question")
            yield OptionList(id="picker-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).loading = True
        self._list()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _list(self) -> None:
        self.post_message(self.Listed(list_run_files(self.folder)))

    @on(Listed)
    def _listed(self, event: Listed) -> None:
        ol = self.query_one(OptionList)
        ol.loading = False
        now = time.time()
        ol.set_options(Option(Content(describe(rf, now)), id=rf.path) for rf in event.files)
        if not event.files:
            ol.add_option(Option(Content(f"no *.jsonl in {self.folder}"), disabled=True))
            return
        paths = [rf.path for rf in event.files]
        ol.highlighted = paths.index(self.current) if self.current in paths else 0
        ol.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
