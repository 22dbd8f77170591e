"""The case list: one row per case line, its last known verdict beside it."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import RowDoesNotExist

from toolstand.tui.model.case_rows import Row
from toolstand.tui.widgets.columns import (
    Column,
    fewest_two_line,
    pick_layout,
    two_line_width,
    two_lines,
)
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
        self.shared_category: str | None = None  # every row's, said above the table

    def on_mount(self) -> None:
        self._columns(self.size.width)

    def on_resize(self) -> None:
        if self._columns(self.size.width):
            self.show(self.listed, self.current_line)

    class Laid(Message):
        """The columns changed: the category may have left them (``shared_category``)."""

    def _columns(self, width: int) -> bool:
        """Columns sized to the rows' content in ``width`` cells, the last verdict always
        among them. All four where each is whole on one line; else without the category
        (the filter above offers it, the form shows the case's, and a category every row
        shares is said above the table), the ids and the expected tools whole on two
        lines where one is too narrow (broken after a separator), their room split where
        the fewest rows take two. True when they changed."""
        rows = self.listed
        content = {
            "id": [r.case_id for r in rows],
            "category": [r.category for r in rows],
            "expects": [r.expected for r in rows],
            "last": [r.verdict for r in rows],
        }
        cols, two_line = {}, {}
        for key, values in content.items():
            texts = [visible(str(v)) for v in values]
            want = max(len(TITLES[key]), max(map(len, texts), default=0))
            cols[key] = Column(key, want, LEAST[key])
            if key in ("id", "expects"):  # the two that go on to a second line
                least = max((two_line_width(t) for t in texts), default=0)
                two_line[key] = min(want, max(len(TITLES[key]), least))
        order = [cols["id"], cols["expects"], cols["category"], cols["last"]]
        # each cell is padded by one on both sides
        room = max(0, width - self.styles.scrollbar_size_vertical)
        whole = {c.key: c.want for c in order}
        fitted = pick_layout(room, [order], gap=2, goals=whole, rest="id")
        if any(fitted[k] < w for k, w in whole.items()):
            rest = [c for c in order if c.key != "category"]
            fitted = pick_layout(room, [rest], gap=2, goals=two_line, rest="id")
            lengths = [(len(visible(r.case_id)), len(visible(r.expected))) for r in rows]
            fitted = fewest_two_line(("id", "expects"), lengths, fitted, two_line)
        widths = {k: fitted[k] for k in TITLES if k in fitted}  # in the table's order
        self.shared_category = None if "category" in widths else self._shared(content["category"])
        if widths == self.widths:
            return False
        self.widths = widths
        self.clear(columns=True)
        for key, w in widths.items():
            self.add_column(TITLES[key], key=key, width=w)
        self.post_message(self.Laid())
        return True

    @staticmethod
    def _shared(categories: list[str]) -> str | None:
        """The category of every row, when they share one (a BFCL file's)."""
        distinct = set(categories)
        return distinct.pop() if len(distinct) == 1 and categories[0] else None

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
            lines = {
                key: two_lines(visible(str(value)), w.get(key, 0))
                for key, value in (
                    ("id", row.case_id),
                    ("category", row.category),
                    ("expects", row.expected),
                )
            }
            cells: dict[str, str | Text] = {
                key: Text("\n".join(text), style="bold red" if key == "id" and row.problem else "")
                for key, text in lines.items()
            }
            cells["last"] = Text(row.verdict, style=_VERDICT_STYLE.get(row.verdict, ""))
            height = max(len(lines[k]) for k in w if k in lines)
            self.add_row(*(cells[k] for k in w), key=str(row.line), height=height)
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
