"""The case editor: one field per case key, each with its problems shown beneath it.

The form only shows a draft: ``draft.check_draft`` builds the case line and says what is
wrong, field by field, on every change; the Cases screen decides what to do with it.

Its hundred-odd widgets are built after the Cases screen's first frame (``build``, by
the ``case-form`` worker FORM_AFTER_S after that frame): composed with the screen,
they and the first case's check were a third of the CPU time to that frame, the case list
waiting behind them. A case loaded before (``load``, ``rebase``) is shown as it is built;
the app holds every key and click until the form is built (``ToolstandApp.on_event``), so
a key pressed at once does what it does on the finished screen, only later.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Label, Select, SelectionList, Static, TextArea
from textual.worker import Worker

from toolstand.attempt.executor import canned_results
from toolstand.spec.cases import CATEGORIES, CaseFile
from toolstand.spec.contract import Contract
from toolstand.tui.model.draft import Draft, FormValues, check_draft
from toolstand.util.printable import visible, visible_lines

KINDS = [("tool_call: the model must call", "tool_call"), ("text: answer or ask", "text"),
         ("refusal", "refusal")]  # fmt: skip
MUST_NOT_CALL = [("not set", "unset"), ("true: no call at all", "all"), ("these tools:", "tools")]
ORDERS = [("order: any", "any"), ("order: strict", "strict")]
FORM_AFTER_S = 0.25  # the form is built this long after the screen's first frame
FIELDS = (
    "id", "category", "prompt", "active_tools", "kind", "tool", "arguments", "calls",
    "must_not_call", "contains_any", "followup", "tool_results", "followup_must_not_call",
    "followup_contains_any", "must_not_contain", "note",
)  # fmt: skip


def _field(name: str, label: str, *controls: Widget) -> Vertical:
    return Vertical(
        Label(label, classes="field-label", id=f"label-{name}"),
        *controls,
        Static("", id=f"err-{name}", classes="field-error", markup=False),
        classes="field",
        id=f"field-{name}",
    )


def _area(id: str, classes: str = "", json: bool = False) -> TextArea:
    return TextArea(
        id=id,
        classes=classes,
        language="json" if json else None,
        soft_wrap=True,
        compact=True,
        tab_behavior="focus",  # Tab moves on, as in every other field
    )


class CaseForm(VerticalScroll):
    """Shows FormValues; posts DraftChanged with the checked draft after every edit."""

    # built after the first frame (see the module's docstring); the tests' conftest sets
    # it False so that a test reads the form as soon as the screen is up, as before
    BUILT_LATER: ClassVar[bool] = True

    @dataclass
    class DraftChanged(Message):
        draft: Draft

    def __init__(
        self, contract: Contract, id: str | None = None, sound: Callable[[], bool] | None = None
    ) -> None:
        super().__init__(id=id)
        self.contract = contract
        # whether the contract passed its meta-schema check (run at the first call: the
        # app's ``check_contract``): nothing is validated against one it refuses
        self.sound = sound
        self.casefile: CaseFile | None = None
        self.own_line: int | None = None
        self.original: dict[str, Any] | None = None
        self._carried: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
        self.draft: Draft | None = None
        self._kind = "text"  # the kind shown, to tell the user's switch from a load
        self._canned = canned_results(contract.tools)
        self._composing = not self.BUILT_LATER  # compose() yields the fields (``build``)
        self._fields = self._composing  # they are mounted
        self._built = asyncio.Event()  # the fields exist and show what was loaded
        self._pending: tuple[FormValues, CaseFile, int | None, dict[str, Any] | None] | None
        self._pending = None  # what ``load`` was asked to show before the fields existed
        self._later: Worker[None] | None = None  # the worker that will build them

    @property
    def built(self) -> bool:
        return self._built.is_set()

    def on_mount(self) -> None:
        if self._fields:
            self._built.set()
        else:
            self._later = self._build_later()

    @work(group="case-form")
    async def _build_later(self) -> None:
        await self.screen.wait_for_refresh()  # the first frame, drawn without the fields
        await asyncio.sleep(FORM_AFTER_S)
        self._later = None
        await self.build()

    async def wait_built(self) -> None:
        """Until the fields are built (by the worker or a ``build`` call)."""
        await self._built.wait()

    async def build(self) -> None:
        """Compose the fields and show what was loaded meanwhile; once (a second call
        waits for the first)."""
        if self._composing:
            await self._built.wait()
            return
        self._composing = True
        if self._later is not None:  # built sooner (a key): the worker has nothing to do
            self._later.cancel()
            self._later = None
        await self.recompose()
        self._fields = True
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.load(*pending)
        self._built.set()

    def compose(self) -> ComposeResult:
        if not self._composing:  # see the module's docstring
            return
        tools = [(t.name, t.name) for t in self.contract.tools]
        yield _field("id", "id", Input(id="f-id", compact=True))
        yield _field(
            "category", "category", Select([], prompt="(none)", id="f-category", compact=True)
        )
        yield Checkbox("a conversation (messages)", id="f-conversation", compact=True)
        yield _field(
            "prompt",
            "user message",
            _area("f-user", "short"),
            _area("f-messages", "tall"),
        )
        yield Checkbox("offer all tools", True, id="f-all-tools", compact=True)
        yield _field(
            "active_tools", "active_tools", SelectionList(*tools, id="f-active-tools", compact=True)
        )
        yield _field(
            "kind",
            "expect.kind",
            Select(KINDS, allow_blank=False, value="text", id="f-kind", compact=True),
        )
        with Vertical(id="call-group"):
            yield Checkbox("several calls (expect.calls)", id="f-several", compact=True)
            yield _field(
                "tool", "expect.tool", Select(tools, prompt="(choose)", id="f-tool", compact=True)
            )
            yield _field(
                "arguments",
                "expect.arguments (JSON; empty: check the tool only)",
                _area("f-arguments", "json", json=True),
            )
            yield _field(
                "calls",
                'expect.calls (JSON: [{"tool", "arguments"}])',
                _area("f-calls", "json", json=True),
                Select(ORDERS, allow_blank=False, value="any", id="f-order", compact=True),
            )
        yield _field(
            "must_not_call",
            "expect.must_not_call",
            Select(MUST_NOT_CALL, allow_blank=False, value="unset", id="f-mnc", compact=True),
            SelectionList(*tools, id="f-mnc-tools", compact=True),
        )
        yield _field("contains_any", "expect.contains_any (one per line)", _area("f-contains"))
        yield _field(
            "followup",
            "followup",
            Checkbox("judge a second turn after the tool result", id="f-followup", compact=True),
        )
        with Vertical(id="followup-group"):
            yield _field(
                "tool_results",
                "followup.tool_results (JSON: tool -> result)",
                Select(
                    [(name, name) for name in self._canned],
                    prompt="insert a canned result…",
                    id="f-canned",
                    compact=True,
                ),
                _area("f-results", "json", json=True),
            )
            yield _field(
                "followup_must_not_call",
                "followup.must_not_call",
                SelectionList(*tools, id="f-fmnc", compact=True),
            )
            yield _field(
                "followup_contains_any",
                "followup.contains_any (one per line)",
                _area("f-fcontains"),
            )
            yield _field(
                "must_not_contain", "followup.must_not_contain (one per line)", _area("f-avoid")
            )
        yield _field("note", "note", Input(id="f-note", compact=True))

    # --- values in and out -------------------------------------------------------------

    def load(
        self,
        values: FormValues,
        casefile: CaseFile,
        own_line: int | None,
        original: dict[str, Any] | None,
    ) -> None:
        """Show a case (or a new draft) and check it against the file it will go to."""
        self.casefile, self.own_line, self.original = casefile, own_line, original
        if not self._fields:
            self._pending = (values, casefile, own_line, original)
            return
        self._carried = (values.carried, values.carried_expect)  # no field shows these
        q = self.query_one
        q("#f-id", Input).value = values.id
        categories = list(CATEGORIES)
        if values.category and values.category not in categories:
            categories.append(values.category)
        category = q("#f-category", Select)
        category.set_options([(visible(c), c) for c in categories])
        category.value = values.category if values.category else Select.NULL
        q("#f-conversation", Checkbox).value = values.conversation
        q("#f-user", TextArea).load_text(values.user)
        q("#f-user", TextArea).placeholder = ""  # a template sets its own after loading
        q("#f-messages", TextArea).load_text(values.messages)
        q("#f-all-tools", Checkbox).value = values.all_tools
        self._select_many("#f-active-tools", values.active_tools)
        q("#f-kind", Select).value = values.kind
        self._kind = values.kind  # the shown case's: only the user's switch clears fields
        q("#f-several", Checkbox).value = values.several
        tool = q("#f-tool", Select)
        known = [t.name for t in self.contract.tools]
        extra = [values.tool] if values.tool and values.tool not in known else []
        tool.set_options([(visible(n), n) for n in [*known, *extra]])
        tool.value = values.tool if values.tool else Select.NULL
        q("#f-arguments", TextArea).load_text(values.arguments)
        q("#f-calls", TextArea).load_text(values.calls)
        q("#f-order", Select).value = values.order
        q("#f-mnc", Select).value = values.must_not_call
        self._select_many("#f-mnc-tools", values.must_not_call_tools)
        q("#f-contains", TextArea).load_text(values.contains_any)
        q("#f-followup", Checkbox).value = values.followup
        q("#f-results", TextArea).load_text(values.tool_results)
        self._select_many("#f-fmnc", values.followup_must_not_call)
        q("#f-fcontains", TextArea).load_text(values.followup_contains_any)
        q("#f-avoid", TextArea).load_text(values.must_not_contain)
        q("#f-note", Input).value = values.note
        self.scroll_home(animate=False)
        self.recheck(values)

    def rebase(
        self, casefile: CaseFile, own_line: int | None, original: dict[str, Any] | None
    ) -> None:
        """Compare the draft with a new saved version (after a save or reload), keeping
        every widget as it is, cursors included."""
        self.casefile, self.own_line, self.original = casefile, own_line, original
        if self._pending is not None:
            self._pending = (self._pending[0], casefile, own_line, original)
        self.recheck()

    def _select_many(self, selector: str, names: list[str]) -> None:
        widget: SelectionList[str] = self.query_one(selector, SelectionList)
        widget.deselect_all()
        for name in names:
            if any(widget.get_option_at_index(i).value == name for i in range(widget.option_count)):
                widget.select(name)

    def values(self) -> FormValues:
        q = self.query_one

        def text(selector: str) -> str:
            return q(selector, TextArea).text

        def chosen(selector: str) -> Any:
            value = q(selector, Select).value
            return None if value is Select.NULL else value

        def many(selector: str) -> list[str]:
            return list(q(selector, SelectionList).selected)

        return FormValues(
            id=q("#f-id", Input).value,
            category=chosen("#f-category"),
            conversation=q("#f-conversation", Checkbox).value,
            user=text("#f-user"),
            messages=text("#f-messages"),
            all_tools=q("#f-all-tools", Checkbox).value,
            active_tools=many("#f-active-tools"),
            kind=chosen("#f-kind") or "text",
            several=q("#f-several", Checkbox).value,
            tool=chosen("#f-tool"),
            arguments=text("#f-arguments"),
            calls=text("#f-calls"),
            order=chosen("#f-order") or "any",
            must_not_call=chosen("#f-mnc") or "unset",
            must_not_call_tools=many("#f-mnc-tools"),
            contains_any=text("#f-contains"),
            followup=q("#f-followup", Checkbox).value,
            tool_results=text("#f-results"),
            followup_must_not_call=many("#f-fmnc"),
            followup_contains_any=text("#f-fcontains"),
            must_not_contain=text("#f-avoid"),
            note=q("#f-note", Input).value,
            carried=self._carried[0],
            carried_expect=self._carried[1],
        )

    # --- checking as you type ----------------------------------------------------------

    def recheck(self, values: FormValues | None = None) -> None:
        if self.casefile is None or not self._fields:
            return
        if self.sound is not None and not self.sound():  # the contract's check first
            return
        v = values or self.values()
        self._arrange(v)
        draft = check_draft(v, self.contract, self.casefile, self.own_line, self.original)
        shown = self.draft.field_errors if self.draft is not None else None
        for name in FIELDS:
            messages = draft.field_errors.get(name, [])
            if shown is not None and shown.get(name, []) == messages:
                continue  # an update re-lays out the whole form: only when it changed
            error = self.query_one(f"#err-{name}", Static)
            error.update(visible_lines("\n".join(messages)))
            error.display = bool(messages)
            self.query_one(f"#field-{name}").set_class(bool(messages), "-invalid")
        self.draft = draft
        self.post_message(self.DraftChanged(draft))

    def _arrange(self, v: FormValues) -> None:
        """Show only the fields that mean something for the current choices."""
        q = self.query_one
        q("#f-user").display = not v.conversation
        q("#f-messages").display = v.conversation
        label = (
            "messages: one 'user:' or 'assistant:' per turn" if v.conversation else "user message"
        )
        prompt = q("#label-prompt", Label)
        if str(prompt.content) != label:
            prompt.update(label)
        q("#field-active_tools").display = not v.all_tools
        q("#call-group").display = v.kind == "tool_call"
        q("#field-tool").display = not v.several
        q("#field-arguments").display = not v.several
        q("#field-calls").display = v.several
        q("#f-mnc-tools").display = v.must_not_call == "tools"
        q("#followup-group").display = v.followup

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Checkbox.Changed)
    @on(SelectionList.SelectedChanged)
    def _edited(self, event: Message) -> None:
        event.stop()
        self.recheck()

    @on(Select.Changed)
    def _chose(self, event: Select.Changed) -> None:
        event.stop()
        if event.select.id == "f-canned":
            if event.value is not Select.NULL:
                self._insert_canned(str(event.value))
            return
        if event.select.id == "f-kind" and event.value != self._kind:
            self._kind = str(event.value)
            if self._kind == "tool_call":
                self._clear_text_only()
        self.recheck()

    def _clear_text_only(self) -> None:
        """Switched to a call: a template's must_not_call: true contradicts it (save
        would be refused) and contains_any is checked on text only (design.md)."""
        q = self.query_one
        cleared = []
        if q("#f-mnc", Select).value == "all":
            q("#f-mnc", Select).value = "unset"
            cleared.append("must_not_call: true")
        if q("#f-contains", TextArea).text:
            q("#f-contains", TextArea).clear()
            cleared.append("contains_any")
        if cleared:
            self.notify(f"kind tool_call: cleared {' and '.join(cleared)}", markup=False)

    def _insert_canned(self, name: str) -> None:
        """Put a canned executor result under the expected tool in tool_results."""
        v = self.values()
        tool = v.tool or (self.contract.tools[0].name if self.contract.tools else "tool")
        area = self.query_one("#f-results", TextArea)
        try:
            current = orjson.loads(area.text) if area.text.strip() else {}
        except orjson.JSONDecodeError:
            current = None
        if not isinstance(current, dict):
            current = {}
        current[tool] = self._canned[name]
        area.load_text(orjson.dumps(current, option=orjson.OPT_INDENT_2).decode())
        self.query_one("#f-canned", Select).clear()
