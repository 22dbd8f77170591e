"""The fake executor's result for each call of turn 1, editable before turn 2 is sent."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from textual import on
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Label, Select, Static, TextArea

from toolstand.adapters.base import ToolResult
from toolstand.attempt.executor import canned_results
from toolstand.spec.contract import ToolSpec
from toolstand.tui.widgets.titled import Titled
from toolstand.util.printable import visible

# orjson escapes C0 in strings but leaves DEL and C1 (U+009B is a one-byte CSI); they
# occur in strings only, where the JSON escape keeps the value the user edits and sends
_DEL_C1 = re.compile("[\x7f-\x9f]")


def _pretty(value: Any) -> str:
    text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    return _DEL_C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class StepPanel(VerticalScroll, Titled):
    """One row per call: a canned-result picker and the result as editable JSON."""

    TITLE = (  # the fullest first: the pane shows the first that fits
        "turn 2: tool results to send · ctrl+r edit · ctrl+l canned · ctrl+t sends",
        "turn 2: tool results · ctrl+r edit · ctrl+l canned · ctrl+t sends",
    )

    def __init__(self, tools: list[ToolSpec], id: str | None = None) -> None:
        super().__init__(id=id, classes="pane")  # a pane: F11 fills the screen with it
        self.calls: list[ToolResult] = []
        self._canned = canned_results(tools)
        self._choices: list[dict[str, dict[str, Any]]] = []
        self.picked: str | None = None  # the name of the last choice loaded into an editor
        self.titled(*self.TITLE)

    def open(
        self,
        results: list[ToolResult],
        choices: list[dict[str, dict[str, Any]]] | None = None,
        title: str | Sequence[str] | None = None,
        prompt: str = "canned result…",
        *,
        focus: bool = True,
        chosen: str | None = None,
    ) -> None:
        """One editor per result; ``choices`` replace the canned results, per call (a
        repair turn offers each feedback style of that call's problem); ``chosen``: the
        choice the results are (the pickers show it)."""
        self.calls = list(results)
        self.picked = None
        self._choices = choices if choices is not None else [self._canned for _ in results]
        self.titled_by(title or self.TITLE)
        self.remove_children()
        rows = []
        areas = []
        for i, r in enumerate(results):
            area = TextArea(
                _pretty(r.result),
                id=f"result-{i}",
                classes="result-body",
                language="json",
                compact=True,
                tab_behavior="focus",
            )
            areas.append(area)
            # the picker beside its editor, not above it: scrolling to a long result
            # never hides the picker, and at 80x24 the row costs no extra lines
            side = Vertical(
                # the tool, then its call's id on a line of its own (call_…, toolu_…,
                # gemini-call-0), wrapped in the picker's width, never cut at its edge
                Label(
                    visible(r.name) + "\n" + visible(r.call_id or f"call {i}"),
                    classes="field-label",
                    markup=False,
                ),
                Select(
                    [(name, name) for name in self._choices[i]],
                    prompt=prompt,
                    value=chosen if chosen in self._choices[i] else Select.NULL,
                    id=f"canned-{i}",
                    classes="canned",
                    compact=True,
                ),
                Static("", id=f"result-error-{i}", classes="field-error", markup=False),
                classes="result-side",
            )
            rows.append(Horizontal(side, area, classes="result-row"))
        self.mount_all(rows)
        self.add_class("-open")
        if areas and focus:  # the next thing to do is edit the first result
            self.call_after_refresh(areas[0].focus)

    @dataclass
    class Picked(Message):
        """A choice (a canned result, a feedback style) was loaded into an editor."""

        name: str

    def close(self) -> None:
        self.calls = []
        self.remove_children()
        self.remove_class("-open")

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def focus_result(self) -> None:
        """Focus the next result editor (the first, from outside the panel)."""
        self._focus_next(".result-body")

    def open_canned(self) -> None:
        """Open the next canned-result list (the first, from outside the panel)."""
        select = self._focus_next(".canned")
        if isinstance(select, Select):
            select.expanded = True

    def _focus_next(self, selector: str) -> Widget | None:
        rows = list(self.query(selector))
        if not rows:
            return None
        focused = self.screen.focused
        inside = [focused, *focused.ancestors] if focused is not None else []
        at = next((i for i, w in enumerate(rows) if w in inside), -1)
        chosen = rows[(at + 1) % len(rows)]
        chosen.focus()
        self.scroll_to_widget(chosen, animate=False)
        return chosen

    @on(Select.Changed)
    def _canned_chosen(self, event: Select.Changed) -> None:
        event.stop()
        if event.value is Select.NULL or not event.select.id:
            return
        i = event.select.id.removeprefix("canned-")
        chosen = self._choices[int(i)][str(event.value)]
        self.query_one(f"#result-{i}", TextArea).load_text(_pretty(chosen))
        self.picked = str(event.value)
        self.post_message(self.Picked(self.picked))  # the picker keeps showing the choice

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
