"""The Cases screen: the case list with filters beside the form editor.

The screen owns the editing state (which line the form shows, its saved version, the
draft) and routes messages; the checking is the core's, saving is casefile_edit's, and
both file writes and re-reads happen in thread workers that post messages back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import orjson
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Select, Static, TextArea

from toolstand.spec.casefile_edit import (
    EditRefused,
    EditResult,
    append_line,
    delete_line,
    replace_line,
)
from toolstand.spec.cases import CATEGORIES, CaseFile, load_cases
from toolstand.tui.messages import RunCase
from toolstand.tui.model.case_rows import BROKEN
from toolstand.tui.model.draft import Draft, FormValues, values_from_case
from toolstand.tui.model.templates import TEMPLATES, duplicate, from_template
from toolstand.tui.screens.base import PaletteCommand
from toolstand.tui.screens.case_listing import CaseListing
from toolstand.tui.widgets.case_form import CaseForm
from toolstand.tui.widgets.case_list import CaseTable
from toolstand.tui.widgets.footer import Footer
from toolstand.tui.widgets.nav import NavBar
from toolstand.tui.widgets.status_line import StatusLine
from toolstand.util.printable import visible, visible_lines

KIND_FILTER = [("tool_call", "tool_call"), ("text", "text"), ("refusal", "refusal"),
               ("broken lines", BROKEN)]  # fmt: skip


class CasesScreen(CaseListing):
    AUTO_FOCUS = "#case-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        # the footer shows what fits at 80 columns; the rest are in the help (?) and palette
        Binding("ctrl+s", "save", "Save", tooltip="Save the case", id="cases.save"),
        Binding("ctrl+n", "new", "New", tooltip="New case from a template", id="cases.new"),
        Binding(
            "ctrl+t",
            "duplicate",
            "Duplicate",
            show=False,
            tooltip="Duplicate this case",
            id="cases.duplicate",
        ),
        Binding(
            "f8", "delete", "Delete", show=False, tooltip="Delete this case", id="cases.delete"
        ),
        Binding(
            "ctrl+r",
            "revert",
            "Revert",
            show=False,
            tooltip="Revert the draft to the saved case",
            id="cases.revert",
        ),
        Binding("ctrl+g", "run_case", "Run it", tooltip="Run this case live", id="cases.run"),
        # "/" as well, but not where it is a character: in a text field it types a slash,
        # and the footer does not offer Search there
        Binding(
            "slash",
            "search_slash",
            "Search",
            tooltip="Search the cases by id or text",
            id="cases.search.slash",
        ),
        Binding(
            "ctrl+f",
            "search",
            "Search",
            tooltip="Search the cases by id or text",
            id="cases.search",
        ),
        Binding(
            "ctrl+l",
            "reload",
            "Reload file",
            show=False,
            tooltip="Reload the case file",
            id="cases.reload",
        ),
        Binding(
            "escape",
            "focus_list",
            "Back to the list",
            show=False,
            tooltip="Go back to the case list",
            id="cases.list",
        ),
    ]

    @dataclass
    class Written(Message):
        """A save or delete reached the disk."""

        result: EditResult
        data: dict[str, Any] | None

    @dataclass
    class Refused(Message):
        reason: str

    @dataclass
    class Reloaded(Message):
        casefile: CaseFile

    def __init__(self) -> None:
        super().__init__()
        self.line: int | None = None  # the case line the form shows; None: a new case
        self.original: dict[str, Any] | None = None
        self.draft: Draft | None = None
        self._note = ""  # the outcome of the last action, shown until the next edit
        self._next_note: str | None = None  # a note for the draft about to be loaded
        self.where: str | None = None  # the run and mode whose verdicts "last" shows
        self._listed_wheres: list[str] = []
        self.stale = False  # verdicts came while another screen was shown: re-list on return

    def compose(self) -> ComposeResult:
        yield NavBar("cases", str(self.app.project.cases_path.name))
        with Horizontal(id="cases-body"):
            with Vertical(id="list-pane"):
                project = self.app.project
                files = project.case_files
                # a config with several files (BFCL) only: with one there is nothing to
                # choose, and a Select (with its overlay) is ~10 ms of the first paint
                if len(files) > 1:
                    yield Select(
                        [(visible(p.name), str(p)) for p in files],
                        value=str(project.cases_path)
                        if project.cases_path in files
                        else Select.NULL,
                        prompt="case file",
                        id="case-file",
                        compact=True,
                    )
                yield Input(placeholder="search id or text", id="search", compact=True)
                with Horizontal(id="filters"):
                    yield Select(
                        [(c, c) for c in CATEGORIES],
                        prompt="any category",
                        id="filter-category",
                        compact=True,
                    )
                    yield Select(KIND_FILTER, prompt="any kind", id="filter-kind", compact=True)
                yield Select([], prompt="last: no run yet", id="filter-where", compact=True)
                yield Static("", id="case-caption", markup=False)
                yield CaseTable(id="case-table")
            with Vertical(id="edit-pane"):
                yield StatusLine("", id="draft-status")
                yield CaseForm(
                    self.app.project.contract, id="case-form", sound=self.app.check_contract
                )
        yield Footer()

    def on_mount(self) -> None:
        # new verdicts (a live run, the runs folder scanned) re-list the cases: now if
        # shown, else on the return here (a rerun on the Run screen need not wait for it)
        self.watch(self.app, "verdicts_version", lambda _: self._verdicts_changed(), init=False)
        self.show_verdicts()
        self.count_files()
        table = self.query_one(CaseTable)
        if table.current_line is not None:
            self._open_line(table.current_line)

    async def ready_for_input(self) -> None:
        # the form is built after the first frame (widgets/case_form.py): a key pressed
        # before that builds it now and then goes where it would have
        await self.query_one(CaseForm).build()

    async def built_after_first_frame(self) -> None:
        await self.query_one(CaseForm).wait_built()

    def _verdicts_changed(self) -> None:
        self.stale = not self.is_current
        if not self.stale:
            self.show_verdicts()

    def on_screen_resume(self) -> None:
        if self.stale:
            self.stale = False
            self.show_verdicts()

    # --- the list ----------------------------------------------------------------------

    @on(DataTable.RowHighlighted, "#case-table")
    @on(DataTable.RowSelected, "#case-table")  # Enter on a row a filter left under the cursor
    def _highlighted(self, event: DataTable.RowHighlighted | DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key is None or int(key) == self.line:
            return
        self._leave_draft_then(partial(self._open_line, int(key)), back_to=self.line)

    # --- the form ----------------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        return self.draft is not None and self.draft.changed

    def _leave_draft_then(
        self,
        go: Callable[[], None],
        back_to: int | None = None,
        on_keep: Callable[[], None] | None = None,
    ) -> None:
        """Run ``go`` now, or after the user agrees to drop the unsaved draft."""
        if not self.dirty:
            go()
            return

        from toolstand.tui.screens.modals import ConfirmModal  # not needed to draw the list

        def answered(discard: bool | None) -> None:
            if discard:  # the draft is gone: focus leaves the editor (go may take it back)
                self.query_one(CaseTable).focus()
                go()
            elif back_to is not None:
                self.query_one(CaseTable).select_line(back_to)
            if not discard and on_keep is not None:
                on_keep()

        self.app.push_screen(
            ConfirmModal(f"Discard {self._draft_name()}?", yes="Discard", no="Keep editing"),
            answered,
        )

    def _draft_name(self) -> str:
        name = (self.draft.data or {}).get("id") if self.draft else None
        where = "new case" if self.line is None else "changes to case"
        return f"the unsaved {where} {visible(str(name or ''))}".rstrip()

    def _open_line(self, number: int) -> None:
        casefile = self.app.project.casefile
        line = next((ln for ln in casefile.lines if ln.number == number), None)
        if line is None:
            return
        try:
            data = orjson.loads(line.text)
        except orjson.JSONDecodeError:
            data = None
        if not isinstance(data, dict):
            data = {}  # a broken line: start from blank, saving replaces it
        problem = next((p.message for p in casefile.problems if p.line == number), "")
        note = f"this line does not load ({problem}); saving replaces it" if problem else ""
        self._edit(values_from_case(data), number, data if line.case else None, note)
        if line.case is not None:
            self.app.selected_case_id = line.case.id

    def _edit(
        self,
        values: FormValues,
        line: int | None,
        original: dict[str, Any] | None,
        note: str = "",
    ) -> None:
        self.line, self.original = line, original
        self._next_note = note
        self.query_one(CaseForm).load(values, self.app.project.casefile, line, original)

    @on(CaseForm.DraftChanged)
    def _draft_changed(self, event: CaseForm.DraftChanged) -> None:
        if self._next_note is not None:
            self._note, self._next_note = self._next_note, None
        elif self.draft is None or event.draft.data != self.draft.data:
            self._note = ""  # an edit makes the last "saved"/"not saved" note stale
        self.draft = event.draft
        self.app.unsaved = self._draft_name() if self.dirty else None
        self._status(self._note)

    def forget_draft(self) -> None:
        self.line, self.original, self.draft = None, None, None

    def _status(self, note: str = "") -> None:
        self._note = note
        d = self.draft
        where = f"line {self.line}" if self.line is not None else "new case"
        if d is None:
            text = where
        elif not d.valid:
            text = f"{where} · cannot save: {d.reason}"
        elif d.changed:
            text = f"{where} · modified (ctrl+s saves)"
        else:
            text = f"{where} · saved"
        if d is not None and d.warnings and d.valid:
            text += f" · warning: {d.warnings[0]}"
        status = self.query_one("#draft-status", Static)
        shown = visible_lines(f"{text}\n{note}" if note else text)
        if str(status.content) != shown:
            status.update(shown)
        status.set_class(d is not None and not d.valid, "-invalid")

    # --- actions -----------------------------------------------------------------------

    def action_focus_list(self) -> None:
        self.query_one(CaseTable).focus()

    def action_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_search_slash(self) -> None:
        self.action_search()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "search_slash":
            return not isinstance(self.focused, Input | TextArea)
        return True

    def action_new(self) -> None:
        from toolstand.tui.screens.modals import TemplateModal

        def chosen(name: str | None) -> None:
            if name is not None:
                self._leave_draft_then(partial(self._start, name))

        self.app.push_screen(TemplateModal(), chosen)

    def _start(self, template: str) -> None:
        taken = set(self.app.project.casefile.by_id())
        data = from_template(template, self.app.project.contract, taken)
        # the template's words for the user's message are a placeholder: typing replaces
        # them, and a case is not saved with them
        hint = str(data.pop("user", "") or "")
        self._edit(values_from_case(data), None, None, f"new case from the {template} template")
        user = self.query_one("#f-user", TextArea)
        user.placeholder = hint
        user.focus()

    def action_duplicate(self) -> None:
        source = (self.draft.data if self.draft else None) or self.original
        if not source:
            return
        copied = duplicate(source, set(self.app.project.casefile.by_id()))
        self._leave_draft_then(partial(self._edit, values_from_case(copied), None, None))

    def action_revert(self) -> None:
        """Back to the saved version; an unsaved new case has none, so it is dropped
        only after asking, as ctrl+q asks."""
        if self.line is None and self.dirty:
            self._leave_draft_then(self._revert)
            return
        self._revert()

    def _revert(self) -> None:
        line = self.line if self.line is not None else self.query_one(CaseTable).current_line
        if line is not None:
            self._open_line(line)
            self._next_note = self._next_note or "reverted to the saved version"

    def action_save(self) -> None:
        d = self.draft
        if d is None or not d.valid or d.text is None:
            reason = d.reason if d else "nothing to save"
            self._status(f"not saved: {reason}")
            self.notify(f"Not saved: {visible_lines(reason)}", severity="error", markup=False)
            return
        if not d.changed and self.line is not None:
            self._status("nothing changed")
            return
        project = self.app.project
        self._write(
            partial(replace_line, project.cases_path, self.line, d.text)
            if self.line is not None
            else partial(append_line, project.cases_path, d.text),
            project.casefile.sha256,
            d.data,
        )

    def action_delete(self) -> None:
        from toolstand.tui.screens.modals import ConfirmModal

        if self.line is None:
            self.action_revert()
            return
        line, name = self.line, visible(str((self.original or {}).get("id", f"line {self.line}")))
        path = self.app.project.cases_path

        def answered(yes: bool | None) -> None:
            if yes:
                self._write(
                    partial(delete_line, path, line), self.app.project.casefile.sha256, None
                )

        self.app.push_screen(
            ConfirmModal(f"Delete case {name} (line {line}) from {path.name}?", yes="Delete"),
            answered,
        )

    @work(thread=True, exclusive=True, group="casefile", exit_on_error=False)
    def _write(
        self, edit: Callable[[str], EditResult], sha: str, data: dict[str, Any] | None
    ) -> None:
        try:
            self.post_message(self.Written(edit(sha), data))
        except EditRefused as exc:
            self.post_message(self.Refused(exc.reason))

    @on(Written)
    def _written(self, event: Written) -> None:
        project = self.app.project
        project.casefile = event.result.casefile(project.cases_path)
        self.count_files()  # a case more or fewer in the chooser's count
        if event.data is None:  # deleted: the cursor moves to a neighbour
            self.line, self.original, self.draft = None, None, None
            self.app.unsaved = None
            self.show_verdicts()
            current = self.query_one(CaseTable).current_line
            if current is not None:
                self._open_line(current)
            self.notify("Deleted.", markup=False)
            return
        self.line, self.original = event.result.line, event.data
        self.show_verdicts()
        self.query_one(CaseForm).rebase(project.casefile, self.line, self.original)
        self._status(f"saved to {project.cases_path.name}:{self.line}")
        self.notify(f"Saved {visible(str(event.data.get('id')))}.", markup=False)

    @on(Refused)
    def _refused(self, event: Refused) -> None:
        self._status(f"not saved: {event.reason}")
        self.notify(f"Not saved: {visible_lines(event.reason)}", severity="error", markup=False)

    def action_reload(self) -> None:
        self._reload()

    @work(thread=True, exclusive=True, group="casefile", exit_on_error=False)
    def _reload(self) -> None:
        try:
            casefile = load_cases(self.app.project.cases_path, strict=False)
        except Exception as exc:  # LoadError: the file is gone or unreadable
            self.post_message(self.Refused(str(exc)))
            return
        self.post_message(self.Reloaded(casefile))

    @on(Reloaded)
    def _reloaded(self, event: Reloaded) -> None:
        """Take the file as it is on disk now; the draft stays, re-aimed at its case."""
        self.app.project.casefile = event.casefile
        if self.original is not None:
            wanted = self.original.get("id")
            found = [
                ln.number
                for ln in event.casefile.lines
                if ln.case is not None and ln.case.id == wanted
            ]
            self.line = found[0] if found else None
            if self.line is None:
                self.original = None
        self.query_one(CaseForm).rebase(event.casefile, self.line, self.original)
        self.show_verdicts()
        self._status("reloaded from disk")

    def action_run_case(self) -> None:
        if self.original is not None:
            self.post_message(RunCase(str(self.original.get("id"))))

    def palette_commands(self) -> Iterator[PaletteCommand]:
        for name in TEMPLATES:
            yield (
                f"New case: {name}",
                "start a new case from the template",
                partial(self._leave_draft_then, partial(self._start, name)),
            )
        yield ("Reload the case file", "re-read it from disk, keeping the draft", self._reload)

    def open_new(self, data: dict[str, Any], path: Path | None = None) -> None:
        """Open ``data`` in the form as a new, unsaved case (History's "promote"), in the
        config's case file ``path`` when given (the file of the case it came from)."""
        self._leave_draft_then(partial(self._open_new_in, data, path))

    def _open_new_in(self, data: dict[str, Any], path: Path | None) -> None:
        project = self.app.project
        if path is not None and path != project.cases_path and path in project.case_files:
            self.open_file(path)
            with self.prevent(Select.Changed):  # none when the config had one file at start
                for chooser in self.query("#case-file").results(Select):
                    chooser.value = str(path)
        self._edit(values_from_case(data), None, None)
