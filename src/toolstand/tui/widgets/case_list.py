"""The case list: one row per case line, its last known verdict beside it."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from toolstand.tui.fit import fit_id
from toolstand.tui.model.case_rows import Row
from toolstand.tui.widgets.columns import Column, pick_layout
from toolstand.util.printable import visible

_VERDICT_STYLE = {"pass": "green", "FAIL": "bold red", "err!": "yellow"}
LEAST = {"id": 14, "category": 6, "expects": 6, "last": 4}  # narrower, a column is no use
# "expect", the case format's own word, fits the column's least width at 80 columns
TITLES = {"id": "id", "category": "category", "expects": "expect", "last": "last"}


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
        """Columns sized to the rows' content in ``width`` cells, the last verdict always
        among them: the id is raised to its longest first and takes what is left; when
        it cannot be whole, the category (which the filter above still offers) gives way.
        True when they changed."""
        rows = self.listed
        content = {
            "id": (r.case_id for r in rows),
            "category": (r.category for r in rows),
            "expects": (r.expected for r in rows),
            "last": (r.verdict for r in rows),
        }
        cols = {
            key: Column(
                key,
                max(len(TITLES[key]), max((len(visible(str(v))) for v in values), default=0)),
                LEAST[key],
            )
            for key, values in content.items()
        }
        order = [cols["id"], cols["expects"], cols["category"], cols["last"]]
        stages = [order, [c for c in order if c.key != "category"]]
        # the vertical scrollbar takes 2; each cell is padded by one on both sides
        fitted = pick_layout(
            max(0, width - 2), stages, gap=2, goals={"id": cols["id"].want}, rest="id"
        )
        widths = {k: fitted[k] for k in TITLES if k in fitted}  # in the table's order
        if widths == self.widths:
            return False
        self.widths = widths
        self.clear(columns=True)
        for key, w in widths.items():
            self.add_column(TITLES[key], key=key, width=w)
        return True

    def show(self, rows: list[Row], keep_line: int | None = None) -> None:
        """Replace the rows, keeping the cursor on ``keep_line`` when it is still listed.

        A refresh is not the user choosing a case: its highlight messages are dropped."""
        self.listed = rows
        self._columns(self.size.width)
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
