"""The case list: one row per case line, its last known verdict beside it."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from toolstand.tui.caselist import Row
from toolstand.tui.fit import fit_id

_VERDICT_STYLE = {"pass": "green", "FAIL": "bold red", "err!": "yellow"}
ID_WIDTH, CATEGORY_WIDTH, EXPECTS_WIDTH = 17, 10, 9  # all four columns in a 40-column pane


class CaseTable(DataTable[str | Text]):
    """Rows keyed by line number; highlighting a row is how a case gets chosen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete", "screen.delete", "Delete", show=False, id="cases.list.delete")
    ]

    def __init__(self, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)

    def on_mount(self) -> None:
        # fixed widths keep all four columns in view in a 40-column pane
        self.add_column("id", key="id", width=ID_WIDTH)
        self.add_column("category", key="category", width=CATEGORY_WIDTH)
        self.add_column("expects", key="expects", width=EXPECTS_WIDTH)
        self.add_column("last", key="last", width=4)

    def show(self, rows: list[Row], keep_line: int | None = None) -> None:
        """Replace the rows, keeping the cursor on ``keep_line`` when it is still listed.

        A refresh is not the user choosing a case: its highlight messages are dropped."""
        with self.prevent(DataTable.RowHighlighted):
            self._fill(rows, keep_line)

    def _fill(self, rows: list[Row], keep_line: int | None) -> None:
        self.clear()
        for row in rows:
            style = _VERDICT_STYLE.get(row.verdict, "")
            self.add_row(
                Text(fit_id(row.case_id, ID_WIDTH), style="bold red" if row.problem else ""),
                Text(fit_id(row.category, CATEGORY_WIDTH)),
                Text(fit_id(row.expected, EXPECTS_WIDTH)),
                Text(row.verdict, style=style),
                key=str(row.line),
            )
        if keep_line is not None:
            self.select_line(keep_line)

    def select_line(self, line: int) -> bool:
        try:
            index = self.get_row_index(str(line))
        except RowDoesNotExist:  # filtered out
            return False
        self.move_cursor(row=index)
        return True

    @property
    def current_line(self) -> int | None:
        if self.row_count == 0:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return int(key) if key is not None else None
