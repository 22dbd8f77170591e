"""The case list: one row per case line, its last known verdict beside it."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from toolstand.tui.fit import fit_id
from toolstand.tui.model.case_rows import Row

_VERDICT_STYLE = {"pass": "green", "FAIL": "bold red", "err!": "yellow"}
CATEGORY_WIDTH, EXPECTS_WIDTH = 10, 9
MIN_ID = 14  # narrower than this, the category column gives way to the id


class CaseTable(DataTable[str | Text]):
    """Rows keyed by line number; highlighting a row is how a case gets chosen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete", "screen.delete", "Delete", show=False, id="cases.list.delete")
    ]

    def __init__(self, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.listed: list[Row] = []
        self.widths: dict[str, int] = {}

    def on_mount(self) -> None:
        self._columns(self.size.width)

    def on_resize(self) -> None:
        if self._columns(self.size.width):
            self.show(self.listed, self.current_line)

    def _columns(self, width: int) -> bool:
        """Columns that fit ``width`` cells, the last verdict always among them: the id
        takes what is left, and a narrow pane (80 columns) drops the category, which
        the filter above still offers. True when they changed."""
        room = max(0, width - 2)  # the vertical scrollbar
        widths = {"id": 0, "category": CATEGORY_WIDTH, "expects": EXPECTS_WIDTH, "last": 4}
        if room - 2 * len(widths) - sum(widths.values()) < MIN_ID:
            del widths["category"]
        widths["id"] = max(MIN_ID, room - 2 * len(widths) - sum(widths.values()))
        if widths == self.widths:
            return False
        self.widths = widths
        self.clear(columns=True)
        for key, w in widths.items():
            self.add_column(key, key=key, width=w)
        return True

    def show(self, rows: list[Row], keep_line: int | None = None) -> None:
        """Replace the rows, keeping the cursor on ``keep_line`` when it is still listed.

        A refresh is not the user choosing a case: its highlight messages are dropped."""
        self.listed = rows
        with self.prevent(DataTable.RowHighlighted):
            self._fill(rows, keep_line)

    def _fill(self, rows: list[Row], keep_line: int | None) -> None:
        self.clear()
        w = self.widths
        for row in rows:
            cells: dict[str, str | Text] = {
                "id": Text(fit_id(row.case_id, w["id"]), style="bold red" if row.problem else ""),
                "category": Text(fit_id(row.category, w.get("category", 0))),
                "expects": Text(fit_id(row.expected, w["expects"])),
                "last": Text(row.verdict, style=_VERDICT_STYLE.get(row.verdict, "")),
            }
            self.add_row(*(cells[k] for k in w), key=str(row.line))
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
