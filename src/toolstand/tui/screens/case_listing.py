"""The list side of the Cases screen: the case file chosen, the filters, the "last"
verdict column, and which case is shown; a base of CasesScreen, which owns the form.

The form's steps it needs (``_leave_draft_then``, ``_open_line``, ``_status``) are the
screen's; they are declared here so the list reads on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from textual import on, work
from textual.message import Message
from textual.widgets import Input, Select, Static

from toolstand.tui.model.case_rows import rows
from toolstand.tui.model.project import count_cases
from toolstand.tui.screens.base import ToolstandScreen
from toolstand.tui.widgets.case_list import CaseTable
from toolstand.tui.widgets.nav import NavBar
from toolstand.util.printable import visible


def file_label(path: Path, count: int | None) -> str:
    """A case file as the file chooser lists it: its name and how many cases it holds."""
    if count is None:
        return visible(path.name)
    return visible(f"{path.name} · {count:,} case{'' if count == 1 else 's'}")


class CaseListing(ToolstandScreen):
    """Which cases are listed, from which file, and the one chosen."""

    DEFAULT_CSS = """
    #case-caption { height: auto; padding-left: 1; color: $text-muted; }
    """

    @dataclass
    class FilesCounted(Message):
        """The config's case files were counted (a thread worker): label the chooser."""

        counts: dict[Path, int | None]

    line: int | None
    where: str | None
    _listed_wheres: list[str]

    def _leave_draft_then(
        self,
        go: Callable[[], None],
        back_to: int | None = None,
        on_keep: Callable[[], None] | None = None,
    ) -> None:
        raise NotImplementedError

    def _open_line(self, number: int) -> None:
        raise NotImplementedError

    def _status(self, note: str = "") -> None:
        raise NotImplementedError

    def forget_draft(self) -> None:
        """Show no case: the form's case and draft dropped (another file is opening)."""
        raise NotImplementedError

    def _filters(self) -> dict[str, Any]:
        def chosen(selector: str) -> Any:
            value = self.query_one(selector, Select).value
            return None if value is Select.NULL else value

        return {
            "query": self.query_one("#search", Input).value,
            "category": chosen("#filter-category"),
            "kind": chosen("#filter-kind"),
        }

    def show_verdicts(self) -> None:
        """Re-list the cases (after a filter change, a save, or new verdicts)."""
        app = self.app
        where = self._where()
        listed = rows(app.project.casefile, app.verdicts, where=where, **self._filters())
        self.query_one(CaseTable).show(listed, keep_line=self.line)
        self._caption()

    @on(CaseTable.Laid)
    def _caption(self) -> None:
        """Say the category every listed case shares, when the table has no room for it
        (a BFCL file: one category, as long as its ids)."""
        shared = self.query_one(CaseTable).shared_category
        caption = self.query_one("#case-caption", Static)
        caption.display = shared is not None
        caption.update(visible(f"all in category {shared}") if shared else "")

    def _where(self) -> str | None:
        """The run and mode of the "last" column: the one chosen, else the newest run's;
        the selector lists every run and mode with a verdict."""
        verdicts = self.app.verdicts
        where = self.where if self.where in verdicts.wheres() else verdicts.latest
        select = self.query_one("#filter-where", Select)
        options = [(visible(f"last: {w}"), w) for w in verdicts.wheres()]
        with self.prevent(Select.Changed):
            if verdicts.wheres() != self._listed_wheres:
                select.set_options(options)
                self._listed_wheres = verdicts.wheres()
            if where is not None and select.value != where:
                select.value = where
        return where

    def count_files(self) -> None:
        """Count the cases of each file of a config with several (BFCL's eleven, 9 MB)
        off the event loop; the chooser lists each with its count."""
        files = self.app.project.case_files
        if len(files) > 1:
            self._count_files(list(files))

    @work(thread=True, exclusive=True, group="case-counts", exit_on_error=False)
    def _count_files(self, files: list[Path]) -> None:
        self.post_message(self.FilesCounted({p: count_cases(p) for p in files}))

    @on(FilesCounted)
    def _files_counted(self, event: FilesCounted) -> None:
        chooser = self.query_one("#case-file", Select)
        value = chooser.value
        with self.prevent(Select.Changed):  # new options blank the value: put it back
            chooser.set_options([(file_label(p, n), str(p)) for p, n in event.counts.items()])
            if value is not Select.NULL and value in {str(p) for p in event.counts}:
                chooser.value = value

    @on(Select.Changed, "#case-file")
    def _file_chosen(self, event: Select.Changed) -> None:
        event.stop()
        project = self.app.project
        if event.value is Select.NULL or Path(str(event.value)) == project.cases_path:
            return
        path = Path(str(event.value))

        def back() -> None:  # the draft stays: so does its file
            with self.prevent(Select.Changed):
                self.query_one("#case-file", Select).value = str(project.cases_path)

        self._leave_draft_then(partial(self.open_file, path), on_keep=back)

    def open_file(self, path: Path) -> None:
        """Edit another case file of the config: its cases listed, the first opened."""
        project = self.app.project
        project.cases_path = path
        project.reload_cases()
        self.forget_draft()
        self.app.unsaved = None
        self.query_one(NavBar).set_detail(path.name)
        self.show_verdicts()
        table = self.query_one(CaseTable)
        if table.current_line is not None:
            self._open_line(table.current_line)
        self._status(visible(f"{path.name}: {len(project.casefile.cases)} cases"))

    @on(Select.Changed, "#filter-where")
    def _where_chosen(self, event: Select.Changed) -> None:
        event.stop()
        self.where = None if event.value is Select.NULL else str(event.value)
        self.show_verdicts()

    @on(Input.Changed, "#search")
    @on(Select.Changed, "#filter-category")
    @on(Select.Changed, "#filter-kind")
    def _filter(self, event: Message) -> None:
        event.stop()
        self.show_verdicts()

    @on(Input.Submitted, "#search")
    def _search_done(self) -> None:
        self.query_one(CaseTable).focus()

    def show_case(self, case_id: str) -> None:
        """Open ``case_id`` in the form (after asking about a draft), its row selected."""
        line = next(
            (ln.number for ln in self.app.project.casefile.lines
             if ln.case is not None and ln.case.id == case_id),
            None,
        )  # fmt: skip
        if line is None:
            self._status(visible(f"case {case_id} is not in this file"))
            return
        self.query_one(CaseTable).select_line(line)
        if line != self.line:
            self._leave_draft_then(partial(self._open_line, line))
