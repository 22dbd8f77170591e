"""Small dialogs: confirm, pick a template, paste a raw provider body."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from toolstand.tui.templates import NEGATIVE, TEMPLATES


class ConfirmModal(ModalScreen[bool]):
    """A yes/no question; Escape answers no, Left/Right move between the buttons."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "answer(False)", "No", id="confirm.no"),
        Binding("y", "answer(True)", "Yes", show=False, id="confirm.yes"),
        # the buttons sit side by side: the arrows move between them as Tab does
        Binding("left", "app.focus_previous", show=False, id="confirm.left"),
        Binding("right", "app.focus_next", show=False, id="confirm.right"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, markup=False, classes="question")
            with Horizontal(classes="buttons"):
                yield Button(self.yes, id="yes", variant="error")
                yield Button(self.no, id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class TemplateModal(ModalScreen[str | None]):
    """Choose the template a new case starts from."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="template.cancel")
    ]

    def compose(self) -> ComposeResult:
        names = [*NEGATIVE, *(n for n in TEMPLATES if n not in NEGATIVE)]
        with Vertical(classes="dialog"):
            yield Label("New case from a template")
            yield OptionList(
                *(
                    Option(f"{name:<16} {TEMPLATES[name].get('note', '')}", id=name)
                    for name in names
                ),
                id="templates",
            )

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


class PasteModal(ModalScreen[tuple[int, str] | None]):
    """A raw provider body, pasted or loaded from a file, with the HTTP status it came with."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="paste.cancel"),
        Binding("ctrl+s", "judge", "Judge it", id="paste.judge"),
        Binding("ctrl+l", "load", "Load file", id="paste.load"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label("Paste a raw response body (or load it from a file)")
            with Horizontal(classes="row"):
                yield Label("HTTP status ")
                yield Input(
                    "200", id="paste-status", restrict=r"[0-9]*", max_length=3, compact=True
                )
                yield Label(" file ")
                yield Input(placeholder="path/to/body.json", id="paste-file", compact=True)
            yield TextArea(id="paste-body", language="json", soft_wrap=True)
            yield Static("", id="paste-error", markup=False, classes="field-error")
            with Horizontal(classes="buttons"):
                yield Button("Judge (ctrl+s)", id="judge", variant="primary")
                yield Button("Load file (ctrl+l)", id="load")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#paste-body", TextArea).focus()

    def _error(self, message: str) -> None:
        self.query_one("#paste-error", Static).update(message)

    @on(Button.Pressed, "#judge")
    def action_judge(self) -> None:
        status_text = self.query_one("#paste-status", Input).value
        status = int(status_text) if status_text.isdigit() else 0
        if not 100 <= status <= 599:
            self._error("HTTP status: give a number from 100 to 599")
            return
        self.dismiss((status, self.query_one("#paste-body", TextArea).text))

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#load")
    @on(Input.Submitted, "#paste-file")
    def action_load(self) -> None:
        name = self.query_one("#paste-file", Input).value.strip()
        if not name:
            self._error("file: type a path first")
            return
        self._read(Path(name).expanduser())

    @work(thread=True, exclusive=True, group="paste-read", exit_on_error=False)
    def _read(self, path: Path) -> None:
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            self.app.call_from_thread(self._error, f"file: cannot read {path}: {exc.strerror}")
            return
        self.app.call_from_thread(self._loaded, text)

    def _loaded(self, text: str) -> None:
        self.query_one("#paste-body", TextArea).load_text(text)
        self._error("")
