"""The step panel's editors: what the user edits is what is sent, and outside text in it
never drives the terminal."""

from __future__ import annotations

import orjson
from textual.app import App, ComposeResult
from textual.widgets import Select, TextArea

from toolstand.adapters.base import ToolResult
from toolstand.tui.widgets.step_panel import StepPanel


class PanelApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StepPanel([], id="step")


async def test_del_and_c1_in_a_result_are_escaped_and_sent_unchanged() -> None:
    # a model's argument echoed in the feedback (received: ...) may hold a one-byte CSI
    value = {"ok": False, "error": {"received": "x\x9b2J\x7f\x85"}}
    app = PanelApp()
    async with app.run_test() as pilot:
        panel = app.query_one(StepPanel)
        panel.open([ToolResult("c1", False, "evil\x9bname", value)])
        await pilot.pause()
        text = panel.query_one("#result-0", TextArea).text
        assert not any(0x7F <= ord(ch) <= 0x9F for ch in text)
        assert "\\u009b2J\\u007f\\u0085" in text
        assert "evil\\x9bname" in str(panel.query_one(".field-label").render())
        results = panel.results()
        assert results is not None and results[0].result == value


async def test_the_picker_shows_the_choice_loaded() -> None:
    # hfix F4: the Select read "feedback style…" again after a style was picked
    app = PanelApp()
    choices = [{"feedback: traceback": {"error": "Tr"}, "feedback: allowed": {"error": "al"}}]
    async with app.run_test() as pilot:
        panel = app.query_one(StepPanel)
        panel.open([ToolResult("c1", False, "t", {"error": "Tr"})], choices, prompt="style…")
        await pilot.pause()
        select = panel.query_one("#canned-0", Select)
        select.value = "feedback: allowed"
        await pilot.pause()
        assert orjson.loads(panel.query_one("#result-0", TextArea).text) == {"error": "al"}
        assert select.value == "feedback: allowed"  # the field shows it, not the prompt
