"""Pick a history file: each runs/*.jsonl with its size, date, models and attempt count.

The listing is read in a thread worker (a header line and a sample per file), so a
folder of large or live files opens at once.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from toolstand.history import RunFile, list_run_files
from toolstand.tui.model.run_files import FileFacts, file_facts
from toolstand.util.printable import visible

LIVE_S = 30  # a file written this recently may still be growing


def human_size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def describe(rf: RunFile, now: float, facts: FileFacts | None = None) -> str:
    """Two lines for the picker: name, size, date, count; the models the file names."""
    when = (rf.started_at or "")[:16].replace("T", " ") or time.strftime(
        "%Y-%m-%d %H:%M", time.localtime(rf.mtime)
    )
    name = visible(Path(rf.path).name)
    if not rf.is_history:
        return f"{name} · {human_size(rf.size)} · {when} · not a toolstand history\n  -"
    facts = facts or file_facts(rf)
    shown = visible(", ".join(facts.models)) or "?"
    models = shown if facts.all_models else f"{shown}, … (models of the part read)"
    live = " · live" if now - rf.mtime < LIVE_S else ""
    sim = " (simulated)" if rf.simulated else ""
    return f"{name} · {human_size(rf.size)} · {when} · {facts.count}{live}\n  {models}{sim}"


def _unreadable(path: Path) -> str:
    """Why ``path`` cannot be opened as a history, or "" when it can be tried."""
    if not path.exists():
        return "no such file"
    if not path.is_file():
        return "not a file"
    if not os.access(path, os.R_OK):
        return "not readable"
    return ""


class RunPicker(ModalScreen[str | None]):
    """Returns the chosen file's path, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Cancel", id="picker.cancel"),
        Binding("down", "to_list", "To the list", show=False, id="picker.list"),
    ]

    @dataclass
    class Listed(Message):
        files: list[RunFile]
        facts: list[FileFacts | None]

    def __init__(self, folder: Path, current: str | None = None) -> None:
        super().__init__()
        self.folder = folder
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="picker"):
            yield Label(visible(f"Open a history from {self.folder}"), classes="question")
            yield Input(
                placeholder="or type a path and press Enter (relative to the project)",
                id="picker-path",
            )
            yield Static("", id="picker-problem", markup=False)
            yield OptionList(id="picker-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).loading = True
        self._list()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _list(self) -> None:
        files = list_run_files(self.folder)
        facts = [file_facts(rf) if rf.is_history else None for rf in files]
        self.post_message(self.Listed(files, facts))

    @on(Listed)
    def _listed(self, event: Listed) -> None:
        ol = self.query_one(OptionList)
        ol.loading = False
        now = time.time()
        ol.set_options(
            Option(Content(describe(rf, now, f)), id=rf.path)
            for rf, f in zip(event.files, event.facts, strict=True)
        )
        if not event.files:
            ol.add_option(Option(Content(f"no *.jsonl in {self.folder}"), disabled=True))
            return
        paths = [rf.path for rf in event.files]
        ol.highlighted = paths.index(self.current) if self.current in paths else 0
        # the path box keeps focus: what is typed goes there, never opens a listed file
        self.query_one("#picker-path", Input).focus()

    @on(Input.Submitted, "#picker-path")
    def _typed(self, event: Input.Submitted) -> None:
        """A path typed in: opened when it is a readable file, else said why not."""
        event.stop()
        text = event.value.strip()
        if not text:  # nothing typed: Enter opens the highlighted file, as in the list
            ol = self.query_one(OptionList)
            option = ol.highlighted_option
            if option is not None and option.id is not None and not option.disabled:
                self.dismiss(option.id)
            return
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = self.folder.parent / path  # the project root: runs/ is its child
        problem = _unreadable(path)
        if problem:
            self.query_one("#picker-problem", Static).update(visible(f"{text}: {problem}"))
            return
        self.dismiss(str(path))

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_to_list(self) -> None:
        self.query_one(OptionList).focus()

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
