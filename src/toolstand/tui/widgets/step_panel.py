"""The fake executor's result for each call of turn 1, editable before turn 2 is sent."""

from __future__ import annotations

from typing import Any

import orjson
from textual import on
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, Select, Static, TextArea

from toolstand.adapters.base import ToolResult
from toolstand.executor import canned_results


def _pretty(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()


class StepPanel(VerticalScroll):
    """One row per call: a canned-result picker and the result as editable JSON."""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.calls: list[ToolResult] = []
        self._canned = canned_results()
        self.border_title = "turn 2: tool results to send (ctrl+t sends)"

    def open(self, results: list[ToolResult]) -> None:
        self.calls = list(results)
        self.remove_children()
        rows = []
        areas = []
        for i, r in enumerate(results):
            area = TextArea(
                _pretty(r.result),
                id=f"result-{i}",
                language="json",
                compact=True,
                tab_behavior="focus",
            )
            areas.append(area)
            rows.append(
                Vertical(
                    Label(f"{r.name} · call {r.call_id or i}", classes="field-label"),
                    Select(
                        [(name, name) for name in self._canned],
                        prompt="replace with a canned result…",
                        id=f"canned-{i}",
                        compact=True,
                    ),
                    area,
                    Static("", id=f"result-error-{i}", classes="field-error", markup=False),
                    classes="result-row",
                )
            )
        self.mount_all(rows)
        self.add_class("-open")
        if areas:  # the next thing to do is edit the first result
            self.call_after_refresh(areas[0].focus)

    def close(self) -> None:
        self.calls = []
        self.remove_children()
        self.remove_class("-open")

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    @on(Select.Changed)
    def _canned_chosen(self, event: Select.Changed) -> None:
        event.stop()
        if event.value is Select.NULL or not event.select.id:
            return
        i = event.select.id.removeprefix("canned-")
        self.query_one(f"#result-{i}", TextArea).load_text(_pretty(self._canned[str(event.value)]))
        event.select.clear()

    def results(self) -> list[ToolResult] | None:
        """The edited results, or None (each bad one marked at its field)."""
        out: list[ToolResult] = []
        ok = True
        for i, call in enumerate(self.calls):
            error = self.query_one(f"#result-error-{i}", Static)
            text = self.query_one(f"#result-{i}", TextArea).text
            problem: str | None = None
            try:
                value = orjson.loads(text)
            except orjson.JSONDecodeError as exc:
                value, problem = None, f"invalid_json: {exc}"
            if problem is None and not isinstance(value, dict):
                problem = "a tool result is a JSON object"
            error.update(problem or "")
            error.display = problem is not None
            if problem is not None:
                ok = False
                continue
            out.append(ToolResult(call.call_id, call.call_id_synthesized, call.name, value))
        return out if ok else None
