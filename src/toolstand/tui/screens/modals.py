"""Small dialogs: confirm, pick a template, paste a raw provider body."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Select, Static, TextArea
from textual.widgets.option_list import Option

from toolstand.tui.model.paste_file import read_paste_file
from toolstand.tui.model.templates import NEGATIVE, TEMPLATES
from toolstand.types import Mode
from toolstand.util.printable import visible


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


@dataclass
class PasteForm:
    """The offline judge's fields, kept by the Run screen between openings."""

    target: int | None
    case: str | None
    status: str = "200"
    status_typed: bool = False  # the user set it: the body no longer decides it
    body: str = ""
    file: str = ""
    judge: bool = False  # closed with "judge it" (else cancelled)


class PasteModal(ModalScreen[PasteForm]):
    """A raw provider body, pasted or loaded from a file, judged offline against a chosen
    configured run (its API) and case; the HTTP status defaults from the body."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="paste.cancel"),
        Binding("ctrl+s", "judge", "Judge it", id="paste.judge"),
        Binding("ctrl+l", "load", "Load file", id="paste.load"),
    ]

    def __init__(
        self,
        form: PasteForm,
        targets: list[tuple[str, int]],
        cases: list[str],
        mode: Mode,
        status_of: Callable[[str], int | None],
    ) -> None:
        super().__init__()
        self.form, self.targets, self.cases, self.mode = form, targets, cases, mode
        self.status_of = status_of
        # the status last taken from the body ("" once the user typed one: theirs to keep)
        self._auto = "" if form.status_typed else form.status

    def compose(self) -> ComposeResult:
        form = self.form
        with Vertical(classes="dialog wide", id="paste-dialog"):
            yield Label("Judge a raw response body offline (paste it, or load a file)")
            with Horizontal(classes="row"):
                yield Label("against ")
                yield Select(
                    self.targets, value=self._known(form.target, [i for _, i in self.targets]),
                    id="paste-target", compact=True, prompt="no runs configured",
                )  # fmt: skip
                yield Label(" case ")
                yield Select(
                    [(visible(c), c) for c in self.cases],
                    value=self._known(form.case, self.cases),
                    id="paste-case", compact=True, prompt="case",
                )  # fmt: skip
                yield Label(f" mode {self.mode}")
            with Horizontal(classes="row"):
                yield Label("HTTP status ")
                yield Input(
                    form.status, id="paste-status", restrict=r"[0-9]*", max_length=3, compact=True
                )
                yield Label(" file ")
                yield Input(
                    form.file, placeholder="path/to/body.json", id="paste-file", compact=True
                )
            yield TextArea(form.body, id="paste-body", language="json", soft_wrap=True)
            yield Static("", id="paste-error", markup=False, classes="field-error")
            with Horizontal(classes="buttons"):
                yield Button("Judge (ctrl+s)", id="judge", variant="primary")
                yield Button("Load file (ctrl+l)", id="load")
                yield Button("Cancel", id="cancel")

    @staticmethod
    def _known(value: Any, allowed: list[Any]) -> Any:
        return value if value in allowed else Select.NULL

    def on_mount(self) -> None:
        self.query_one("#paste-body", TextArea).focus()

    def _error(self, message: str) -> None:
        self.query_one("#paste-error", Static).update(message)

    @on(TextArea.Changed, "#paste-body")
    def _body_changed(self) -> None:
        status = self.query_one("#paste-status", Input)
        if status.value != self._auto:  # typed by the user: theirs to keep
            return
        found = self.status_of(self.query_one("#paste-body", TextArea).text)
        if found is not None:
            self._auto = status.value = str(found)

    def _kept(self, judge: bool) -> PasteForm:
        status = self.query_one("#paste-status", Input).value
        target = self.query_one("#paste-target", Select).value
        case = self.query_one("#paste-case", Select).value
        form = self.form
        form.target = int(cast(int, target)) if target is not Select.NULL else None
        form.case = str(case) if case is not Select.NULL else None
        form.status, form.status_typed = status, status != self._auto
        form.body = self.query_one("#paste-body", TextArea).text
        form.file = self.query_one("#paste-file", Input).value
        form.judge = judge
        return form

    @on(Button.Pressed, "#judge")
    def action_judge(self) -> None:
        status_text = self.query_one("#paste-status", Input).value
        status = int(status_text) if status_text.isdigit() else 0
        if not 100 <= status <= 599:
            self._error("HTTP status: give a number from 100 to 599")
            return
        form = self._kept(judge=True)
        if form.target is None or form.case is None:
            self._error("choose the configured run (its API) and the case to judge against")
            return
        self.dismiss(form)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(self._kept(judge=False))

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
            text = read_paste_file(path)
        except ValueError as exc:
            self.app.call_from_thread(self._error, str(exc))
            return
        self.app.call_from_thread(self._loaded, text)

    def _loaded(self, text: str) -> None:
        self.query_one("#paste-body", TextArea).load_text(text)
        self._error("")
