from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from textual.command import CommandPalette
from textual.message import Message
from textual.widgets import Input, Static, TextArea

from tests.support.tui import SIZE, settle, wait_for
from toolstand.tui.app import ToolstandApp, load_keymap
from toolstand.tui.messages import OpenCase, PromoteToCase, RunCase
from toolstand.tui.registry import ScreenEntry, factory
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets.case_form import CaseForm
from toolstand.tui.widgets.case_list import CaseTable

AppFor = Callable[..., ToolstandApp]


def test_a_missing_screen_module_is_not_hidden() -> None:
    entry = ScreenEntry("later", "Later", "f9", "9", "toolstand.tui.screens.not_there", "X")
    with pytest.raises(ModuleNotFoundError):
        factory(entry)()


def test_a_broken_screen_module_is_not_hidden() -> None:
    entry = ScreenEntry("bad", "Bad", "f9", "9", "toolstand.tui.screens.cases", "NoSuchScreen")
    with pytest.raises(AttributeError):
        factory(entry)()


async def test_jump_keys_switch_screens(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        await pilot.press("1")  # digits work when no text field has focus
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        app.screen.query_one("#f-note", Input).focus()
        await pilot.press("2")  # ... and type into a text field otherwise
        assert isinstance(app.screen, CasesScreen)
        assert app.screen.query_one("#f-note", Input).value == "2"


async def test_the_palette_offers_the_templates(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"New case: boundary")
        await settle(pilot)  # the palette searches in a worker
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        await wait_for(pilot, lambda: app.screen.query_one(CaseForm).values().id == "boundary_new")


async def test_bindings_can_be_remapped_by_id(app_for: AppFor, tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_bytes(orjson.dumps({"cases.new": "f9"}))
    app = app_for(keymap=load_keymap(str(keys)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f9")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TemplateModal")


def test_a_bad_keymap_is_refused_with_its_reason(tmp_path: Path) -> None:
    bad = tmp_path / "keys.json"
    bad.write_text('["f9"]')
    with pytest.raises(ValueError, match="binding id -> keys"):
        load_keymap(str(bad))


async def test_the_list_shows_the_last_known_verdicts(app_for: AppFor, project: Path) -> None:
    lines = [
        {"type": "attempt", "run_id": "r", "case_id": "direct_lookup", "provider": "p",
         "model": "m", "mode": "auto", "attempt": 1, "judgement": {"verdict": "pass"},
         "transport_error": None},
        {"type": "attempt", "run_id": "r", "case_id": "direct_lookup", "provider": "p",
         "model": "m", "mode": "auto", "attempt": 2, "judgement": {"verdict": "fail"},
         "transport_error": None},
        {"type": "attempt", "run_id": "r", "case_id": "missing_id", "provider": "p",
         "model": "m", "mode": "auto", "attempt": 1, "judgement": None,
         "transport_error": {"code": "rate_limited", "message": "slow down"}},
        {"type": "attempt", "case_id": "quote_complete"},  # skipped: no field but its case
    ]  # fmt: skip
    (project / "runs" / "old.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(CaseTable)
        await wait_for(pilot, lambda: "direct_lookup" in app.verdicts)
        await pilot.pause()
        last = {
            str(table.get_row_at(i)[0]): str(table.get_row_at(i)[table.get_column_index("last")])
            for i in range(3)
        }
        assert last == {"direct_lookup": "FAIL", "missing_id": "err!", "quote_complete": ""}


async def test_without_a_config_cases_still_work_and_run_says_why(
    app_for: AppFor, project: Path
) -> None:
    (project / "config.example.json").unlink()
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        assert app.screen.query_one(CaseTable).row_count > 0
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        status = str(app.screen.query_one("#run-status", Static).render())
        assert "live runs need a config" in status


async def test_a_broken_line_is_listed_and_can_be_fixed_in_place(
    app_for: AppFor, project: Path
) -> None:
    cases = project / "cases" / "delivery.jsonl"
    good = cases.read_bytes()
    cases.write_bytes(good + b'{"id": "half", "user": \n')
    broken = good.count(b"\n") + 1
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(CaseTable)
        await pilot.press("/")
        await pilot.press(*"half", "enter", "enter")
        await wait_for(pilot, lambda: app.screen.query_one(CaseForm).own_line == broken)
        assert str(table.get_row_at(0)[0]) == f"line {broken}"
        app.screen.query_one("#f-id", Input).value = "half"
        app.screen.query_one("#f-user", TextArea).load_text("Где мой заказ?")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: cases.read_bytes() != good + b'{"id": "half", "user": \n')
    fixed = '{"id":"half","user":"Где мой заказ?","expect":{"kind":"text"}}\n'
    assert cases.read_bytes() == good + fixed.encode()


async def test_screens_ask_the_app_through_messages_never_each_other(
    app_for: AppFor, project: Path
) -> None:
    # issue 27: navigation and promotion are messages the app alone handles
    seen: list[Message] = []

    def hook(message: Message) -> None:
        # a message bubbles through each node on its way: keep it once
        ours = isinstance(message, OpenCase | RunCase | PromoteToCase)
        if ours and not any(m is message for m in seen):
            seen.append(message)

    app = app_for()
    async with app.run_test(size=(100, 30), message_hook=hook) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        cases = app.screen
        assert isinstance(cases, CasesScreen)
        cases.show_case("missing_id")
        await pilot.pause()
        await pilot.press("ctrl+g")  # Cases: run this case
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen))
        run = app.screen
        assert isinstance(run, RunScreen)
        await wait_for(pilot, lambda: "recorded in" in str(run.query_one("#run-status").render()))
        assert run.query_one("#run-case").value == "missing_id"  # type: ignore[attr-defined]
        (title, _, open_it) = next(c for c in run.palette_commands() if "Cases" in c[0])
        assert title == "Edit this case in Cases"
        open_it()
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        form = app.screen.query_one(CaseForm)
        await wait_for(
            pilot, lambda: form.original is not None and form.original["id"] == "missing_id"
        )
    assert [type(m).__name__ for m in seen] == ["RunCase", "OpenCase"]
    assert isinstance(seen[0], RunCase) and seen[0].case_id == "missing_id" and seen[0].run
    assert isinstance(seen[1], OpenCase) and seen[1].case_id == "missing_id"
