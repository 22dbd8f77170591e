from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Select, Static, TextArea

from tests.support.tui import SIZE, wait_for
from toolstand.spec.cases import load_cases
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.modals import ConfirmModal, TemplateModal
from toolstand.tui.widgets.case_form import CaseForm
from toolstand.tui.widgets.case_list import CaseTable

AppFor = Callable[..., ToolstandApp]


def text_of(app: ToolstandApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def choose_template(pilot: Pilot[Any], app: ToolstandApp, name: str) -> None:
    await pilot.press("ctrl+n")
    await wait_for(pilot, lambda: isinstance(app.screen, TemplateModal))
    options = app.screen.query_one(OptionList)
    options.highlighted = next(
        i for i in range(options.option_count) if options.get_option_at_index(i).id == name
    )
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))


async def test_new_boundary_case_is_checked_as_typed_then_saved(
    app_for: AppFor, project: Path
) -> None:
    cases = project / "cases" / "delivery.jsonl"
    before = cases.read_bytes()
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await choose_template(pilot, app, "boundary")
        form = app.screen.query_one(CaseForm)
        assert form.values().id == "boundary_new"
        assert form.values().tool == "quote_delivery"

        args = app.screen.query_one("#f-arguments", TextArea)
        # the first arguments in by an edit, the rest typed key by key (each key ~0.2 s
        # of a Pilot press): the check must follow the keys as they come
        args.focus()
        args.clear()
        args.insert('{"origin":"K","destination":"S","weight_kg":0,')
        await pilot.pause()
        assert "invalid_arguments" not in text_of(app, "#err-arguments")  # not JSON yet
        await pilot.press(*'"service":"x"}')
        error = text_of(app, "#err-arguments")
        assert "invalid_arguments.range at $.weight_kg" in error
        assert "invalid_arguments.enum at $.service" in error
        assert app.screen.query_one("#err-arguments").display

        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "not saved: arguments: invalid_arguments" in text_of(app, "#draft-status")
        assert cases.read_bytes() == before  # an invalid draft is never written
        assert form.values().arguments.endswith('"service":"x"}')  # and it is kept

        args.clear()  # the fix arrives as a terminal paste (to the app, which forwards it)
        app.post_message(
            events.Paste('{"origin":"K","destination":"S","weight_kg":1000,"service":"standard"}')
        )
        await wait_for(pilot, lambda: "standard" in args.text)
        assert text_of(app, "#err-arguments") == ""
        assert not app.screen.query_one("#err-arguments").display
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: cases.read_bytes() != before)
        await wait_for(pilot, lambda: "saved to delivery.jsonl" in text_of(app, "#draft-status"))
        assert app.unsaved is None

    after = cases.read_bytes()
    assert after.startswith(before)  # every old line byte-identical
    added = after[len(before) :]
    assert added.count(b"\n") == 1 and added.endswith(b"\n")
    new = orjson.loads(added)
    assert new["id"] == "boundary_new"
    assert new["category"] == "boundary"
    assert new["expect"]["arguments"] == {
        "origin": "K",
        "destination": "S",
        "weight_kg": 1000,
        "service": "standard",
    }
    reloaded = load_cases(cases)  # strict: the whole file still loads
    assert reloaded.by_id()["boundary_new"].expect.tool == "quote_delivery"


async def test_editing_one_case_leaves_the_other_lines_alone(
    app_for: AppFor, project: Path
) -> None:
    cases = project / "cases" / "delivery.jsonl"
    before = cases.read_bytes().split(b"\n")
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(CaseTable)
        table.focus()
        await pilot.press("down", "down")  # line 3: quote_complete
        await wait_for(pilot, lambda: app.screen.query_one(CaseForm).own_line == 3)
        note = app.screen.query_one("#f-note", Input)
        note.focus()
        await pilot.press(*"weight written with a comma")
        assert "modified" in text_of(app, "#draft-status")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "saved to" in text_of(app, "#draft-status"))
    after = cases.read_bytes().split(b"\n")
    assert len(after) == len(before)
    assert [ln for i, ln in enumerate(after) if i != 2] == [
        ln for i, ln in enumerate(before) if i != 2
    ]
    edited = orjson.loads(after[2])
    assert list(edited) == ["id", "user", "expect", "note"]  # the line's own key order
    assert edited["note"] == "weight written with a comma"


async def test_quitting_with_unsaved_changes_asks(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one("#f-note", Input).focus()
        await pilot.press("x")
        assert app.unsaved is not None
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("escape")  # keep editing
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        assert app.is_running
        assert app.screen.query_one("#f-note", Input).value == "x"
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running)
    assert app.return_value == 0


async def test_quitting_without_changes_does_not_ask(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running)


async def test_delete_asks_first(app_for: AppFor, project: Path) -> None:
    cases = project / "cases" / "delivery.jsonl"
    before = cases.read_bytes().split(b"\n")
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f8")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        assert cases.read_bytes().split(b"\n") == before
        await pilot.press("f8")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: cases.read_bytes().split(b"\n") == before[1:])
        # the list moved on to the next case
        await wait_for(pilot, lambda: app.screen.query_one(CaseForm).values().id == "missing_id")


async def test_search_and_filters_narrow_the_list(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(CaseTable)
        total = table.row_count
        await pilot.press("/")
        await pilot.press(*"cancel")
        assert 0 < table.row_count < total
        ids = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert "cancel_explicit" in ids and "direct_lookup" not in ids


async def test_a_stale_file_is_refused_and_the_draft_kept(app_for: AppFor, project: Path) -> None:
    cases = project / "cases" / "delivery.jsonl"
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one("#f-note", Input).focus()
        await pilot.press(*"mine")
        changed = cases.read_bytes() + b'{"id":"theirs","user":"x","expect":{"kind":"text"}}\n'
        cases.write_bytes(changed)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "changed on disk" in text_of(app, "#draft-status"))
        assert cases.read_bytes() == changed
        assert app.screen.query_one("#f-note", Input).value == "mine"


async def test_revert_on_an_unsaved_new_case_asks_first(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await choose_template(pilot, app, "boundary")
        form = app.screen.query_one(CaseForm)
        assert form.own_line is None and app.unsaved is not None
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("escape")  # keep editing: the new case stays
        await wait_for(pilot, lambda: isinstance(app.screen, CasesScreen))
        assert form.own_line is None and form.values().id == "boundary_new"
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")  # discard: back to the case under the cursor
        await wait_for(pilot, lambda: form.own_line is not None)
        assert form.values().id != "boundary_new" and app.unsaved is None


HOSTILE = "\x1b]0;TITLE\x07\x1b[2J"


async def test_long_ids_go_on_two_lines_and_escapes_spelled(app_for: AppFor, project: Path) -> None:
    cases = project / "cases" / "delivery.jsonl"
    # two promotions of one case: cut at the end they read the same, cut in the middle
    # they lost it; whole, on two lines broken after a separator, they differ at the end
    long_a: dict[str, Any] = {
        "id": "recovery_after_timeout_regression",
        "user": "a",
        "expect": {"kind": "text"},
    }
    long_b = dict(long_a, id="recovery_after_timeout_regression_2")
    evil = {"id": "evil", "user": f"где{HOSTILE}\x9b заказ?", "expect": {"kind": "text",
            "contains_any": [f"ORD{HOSTILE}"]}, "note": f"n{HOSTILE}"}  # fmt: skip
    lines = [orjson.dumps(x) for x in (long_a, long_b, evil)]
    cases.write_bytes(cases.read_bytes() + b"\n".join(lines) + b"\n")
    before = cases.read_bytes()
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(CaseTable)
        cells = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        ids = [c.replace("\n", "") for c in cells]
        assert table.widths["id"] < len(long_a["id"])
        assert ids[-3:-1] == [long_a["id"], long_b["id"]]
        assert [c.split("\n") for c in cells[-3:-1]] == [
            ["recovery_after_timeout_", "regression"],
            ["recovery_after_timeout_", "regression_2"],
        ]
        table.focus()
        table.move_cursor(row=ids.index("evil"))
        form = app.screen.query_one(CaseForm)
        await wait_for(pilot, lambda: form.values().id == "evil")
        await pilot.pause()
        user = app.screen.query_one("#f-user", TextArea).text
        assert "\x1b" not in user and "\x9b" not in user and "\\x1b]0;TITLE\\x07" in user
        assert app.screen.query_one("#f-note", Input).value == "n\\x1b]0;TITLE\\x07\\x1b[2J"
        assert "\\x1b" in app.screen.query_one("#f-contains", TextArea).text
        painted = app.export_screenshot()
        assert "\x1b" not in painted and "\x9b" not in painted
        # shown spelled, left as shown: the case is unchanged, its values exact
        assert form.draft is not None and not form.draft.changed
        assert "saved" in text_of(app, "#draft-status")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert cases.read_bytes() == before


async def test_at_80x24_the_list_keeps_the_last_verdict_in_view(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one(CaseTable)
        await pilot.pause()
        keys = [str(k.value) for k in table.columns]
        assert keys[0] == "id" and keys[-1] == "last"
        used = sum(c.get_render_width(table) for c in table.columns.values())
        # no column scrolled out of sight
        assert used <= table.size.width - table.styles.scrollbar_size_vertical


async def test_switching_the_kind_to_tool_call_clears_what_contradicts_it(
    app_for: AppFor, project: Path
) -> None:
    # hfix F1: missing_data's must_not_call: true and contains_any stayed behind, and
    # save was refused by a field scrolled off-screen
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await choose_template(pilot, app, "missing_data")
        form = app.screen.query_one(CaseForm)
        assert (form.values().must_not_call, form.values().kind) == ("all", "text")
        assert form.values().contains_any
        form.query_one("#f-kind", Select).value = "tool_call"
        await wait_for(pilot, lambda: form.values().must_not_call == "unset")
        assert form.values().contains_any == ""
        assert form.draft is not None and "kind" not in form.draft.field_errors
        form.query_one("#f-tool", Select).value = "quote_delivery"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "saved to" in text_of(app, "#draft-status"))
    saved = orjson.loads((project / "cases" / "delivery.jsonl").read_bytes().splitlines()[-1])
    assert saved["expect"] == {"kind": "tool_call", "tool": "quote_delivery"}
