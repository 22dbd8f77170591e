"""Two attempts field by field: who, verdict, decision, and every call's arguments."""

from __future__ import annotations

from typing import Any, NamedTuple

from rich.cells import cell_len, set_cell_size
from textual.content import Content
from textual.widgets import DataTable

from toolstand.history import error_code
from toolstand.tui.fit import cut_middle
from toolstand.util.canonical import canonical_json
from toolstand.util.printable import visible

_MISSING = object()


class DiffRow(NamedTuple):
    field: str
    a: str
    b: str

    @property
    def same(self) -> bool:
        return self.a == self.b


def _show(value: Any) -> str:
    if value is _MISSING:
        return "—"
    if isinstance(value, str):
        return visible(value)
    return visible(canonical_json(value))


def _ms(value: Any) -> str:
    """A latency as a person reads it: whole milliseconds (the record keeps µs digits)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.0f} ms"
    return _show(_MISSING if value is None else value)


def _codes(rec: dict[str, Any]) -> list[str]:
    te = rec.get("transport_error")
    if isinstance(te, dict):
        return [str(te.get("code"))]
    j = rec.get("judgement") or {}
    return [error_code(e) for e in j.get("errors") or []]


def _verdict(rec: dict[str, Any]) -> str:
    if isinstance(rec.get("transport_error"), dict):
        return "error"
    return str((rec.get("judgement") or {}).get("verdict", "?"))


def _decision_rows(prefix: str, a: Any, b: Any) -> list[DiffRow]:
    da = a if isinstance(a, dict) else {}
    db = b if isinstance(b, dict) else {}
    rows = [
        DiffRow(f"{prefix}kind", _show(da.get("kind", _MISSING)), _show(db.get("kind", _MISSING)))
    ]
    for key in ("text", "refusal", "finish_reason"):
        va, vb = da.get(key), db.get(key)
        if va is not None or vb is not None:
            rows.append(DiffRow(f"{prefix}{key}", _show(va), _show(vb)))
    ca, cb = da.get("calls") or [], db.get("calls") or []
    rows.append(DiffRow(f"{prefix}calls", str(len(ca)), str(len(cb))))
    for i in range(max(len(ca), len(cb))):
        x = ca[i] if i < len(ca) else {}
        y = cb[i] if i < len(cb) else {}
        p = f"{prefix}call {i} "
        rows.append(
            DiffRow(p + "name", _show(x.get("name", _MISSING)), _show(y.get("name", _MISSING)))
        )
        args_a = x.get("arguments") if isinstance(x.get("arguments"), dict) else None
        args_b = y.get("arguments") if isinstance(y.get("arguments"), dict) else None
        if args_a is None or args_b is None:
            rows.append(
                DiffRow(p + "raw_arguments", _show(x.get("raw_arguments", _MISSING)),
                        _show(y.get("raw_arguments", _MISSING)))
            )  # fmt: skip
        for key in sorted({*(args_a or {}), *(args_b or {})}):
            rows.append(
                DiffRow(
                    f"{p}$.{visible(str(key))}",
                    _show((args_a or {}).get(key, _MISSING)),
                    _show((args_b or {}).get(key, _MISSING)),
                )
            )
    return rows


def diff_records(a: dict[str, Any], b: dict[str, Any]) -> list[DiffRow]:
    """The fields of two attempt records side by side, decisions and arguments included."""
    rows = [
        DiffRow(k, _show(a.get(k, _MISSING)), _show(b.get(k, _MISSING)))
        for k in ("provider", "model", "api", "mode", "case_id", "attempt", "run_id")
    ]
    rows.append(DiffRow("verdict", _verdict(a), _verdict(b)))
    rows.append(DiffRow("error codes", ", ".join(_codes(a)) or "—", ", ".join(_codes(b)) or "—"))
    rows += _decision_rows("", a.get("decision"), b.get("decision"))
    sa, sb = a.get("second_turn"), b.get("second_turn")
    if isinstance(sa, dict) or isinstance(sb, dict):
        rows += _decision_rows(
            "turn 2 ",
            (sa or {}).get("decision") if isinstance(sa, dict) else None,
            (sb or {}).get("decision") if isinstance(sb, dict) else None,
        )
    # network time of the turns, as the History list and the report show it
    rows.append(DiffRow("elapsed_ms", _ms(a.get("elapsed_ms")), _ms(b.get("elapsed_ms"))))
    for key in ("retries", "usage", "started_at"):
        rows.append(DiffRow(key, _show(a.get(key, _MISSING)), _show(b.get(key, _MISSING))))
    return rows


class AttemptDiff(DataTable[Any]):
    """The rows of diff_records; fields that differ are marked and lit."""

    def show(self, a: dict[str, Any], b: dict[str, Any]) -> list[DiffRow]:
        rows = diff_records(a, b)
        self.clear(columns=True)
        # widths from the values: an auto width would count only the header of a
        # Content cell. Each side gets up to half of what the field column leaves.
        field = max(cell_len(r.field) for r in [*rows, DiffRow("field", "", "")])
        half = max(12, (self.app.size.width - field - 10) // 2)
        self.add_column(" ", key="same", width=1)
        self.add_column("field", key="field", width=field)
        widths = (
            _fit("A (marked)", [r.a for r in rows], half),
            _fit("B", [r.b for r in rows], half),
        )
        self.add_column("A (marked)", key="a", width=widths[0])
        self.add_column("B", key="b", width=widths[1])
        for r in rows:
            style = "" if r.same else "bold $warning"
            self.add_row(
                " " if r.same else "≠",
                Content(r.field),
                Content.styled(_cut(r.a, widths[0], r.field in IDS), style),
                Content.styled(_cut(r.b, widths[1], r.field in IDS), style),
            )
        return rows


# ids of one family share their start (live-20261203T13…): cut in the middle, where
# two of them differ, not at the end
IDS = ("run_id", "case_id")


def _cut(value: str, width: int, middle: bool = False) -> str:
    """A value cut to its column with an ellipsis, so a cut value never reads as whole."""
    if middle and len(value) == cell_len(value):  # one cell a character: cut_middle's count
        return cut_middle(value, width)
    if cell_len(value) <= width:
        return value
    return set_cell_size(value, max(0, width - 1)) + "…"


def _fit(title: str, values: list[str], most: int) -> int:
    return min(most, max(cell_len(v) for v in [title, *values]))
