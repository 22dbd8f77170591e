"""How the simulator reads cases that carry their own tools and ``accept`` lists (BFCL).

The personas answer from ``expect.arguments``; here an ``accept`` expectation becomes
the arguments a careful model would give: for each parameter the first acceptable value
that its schema allows (BFCL lists ``None`` for some defaults, which no schema-valid call
can send), a parameter that may be omitted and has no such value left out. A case that
takes any call names its first own tool, so careful calls it. Cases are found by
conversation *and* offered tools (names and parameter names): BFCL asks one question
with different functions in different categories (417 of its 3,491 questions repeat).
"""

from __future__ import annotations

from typing import Any

from toolstand.sim.turn import CaseIndex
from toolstand.spec.cases import Case, Expectation, ExpectedCall
from toolstand.spec.contract import ToolSpec, validator_for

Conversation = tuple[tuple[str, str], ...]
# each offered tool as (name, its parameter names): what every wire keeps of a tool
Signature = frozenset[tuple[str, frozenset[str]]]


def signature(tools: dict[str, dict[str, Any]]) -> Signature:
    """The offered tools' names and parameter names (descriptions do not cross every wire)."""
    return frozenset(
        (name, frozenset((schema.get("properties") or {}) if isinstance(schema, dict) else {}))
        for name, schema in tools.items()
    )


def careful_arguments(exp: ExpectedCall, tool: ToolSpec | None) -> dict[str, Any] | None:
    """The arguments careful sends for an expected call (its own for ``arguments``)."""
    if exp.accept is None:
        return exp.arguments
    props = (tool.parameters.get("properties") or {}) if tool is not None else {}
    omissible = set(exp.may_omit or [])
    out: dict[str, Any] = {}
    for name, values in exp.accept.items():
        schema = props.get(name)
        valid = [v for v in values if schema is None or validator_for(schema).is_valid(v)]
        if valid:
            out[name] = valid[0]
        elif name not in omissible:
            out[name] = values[0]
    return out


def sim_view(case: Case, contract_tools: tuple[ToolSpec, ...] = ()) -> Case:
    """The case as the personas read it: ``accept`` as concrete arguments, checked
    against the case's own tools, else the contract's."""
    tools = {t.name: t for t in (case.tools if case.tools is not None else contract_tools)}
    expect = case.expect
    if expect.any_call and case.tools:
        view = Expectation(kind="tool_call", tool=case.tools[0].name)
    elif expect.kind == "tool_call" and (expect.accept is not None or expect.calls):
        calls = [
            ExpectedCall(tool=c.tool, arguments=careful_arguments(c, tools.get(c.tool)))
            for c in expect.expected_calls
        ]
        view = expect.model_copy(
            update={
                "calls": calls,
                "tool": None,
                "arguments": None,
                "accept": None,
                "may_omit": None,
            }
        )
    else:
        return case
    return case.model_copy(update={"expect": view})


class OwnToolsIndex:
    """Cases by id (the header a run sends), by conversation and offered tool names; the
    rest as CaseIndex finds them. A case with its own tools is indexed as written and
    read as the personas read it (``sim_view``) only when asked: a run of one BFCL case
    checks one case's accept lists, not 3,491."""

    def __init__(self, cases: list[Case], contract_tools: tuple[ToolSpec, ...] = ()) -> None:
        plain = [sim_view(c, contract_tools) for c in cases if c.tools is None]
        self._plain = CaseIndex(plain)
        self._by_id = {c.id: c for c in plain}
        self._own: dict[tuple[Conversation, Signature], Case] = {}
        self._own_by_text: dict[Conversation, Case] = {}  # when no tool was sent
        self._views: dict[int, Case] = {}  # id() of a case with own tools -> its view
        for case in cases:
            if case.tools is not None:
                key = tuple((m["role"], m["content"].strip()) for m in case.conversation)
                tools = signature({t.name: t.parameters for t in case.tools})
                self._by_id.setdefault(case.id, case)
                self._own.setdefault((key, tools), case)
                self._own_by_text.setdefault(key, case)

    def _view(self, case: Case) -> Case:
        """The personas' reading of a case from the maps (a plain one is one already)."""
        if case.tools is None:
            return case
        view = self._views.get(id(case))
        if view is None:
            view = self._views[id(case)] = sim_view(case)
        return view

    def find(
        self,
        conversation: Conversation,
        offered: dict[str, dict[str, Any]],
        case_id: str | None = None,
    ) -> Case | None:
        """The case asked: by its id, else by conversation and offered tools, else by
        conversation."""
        if case_id is not None and case_id in self._by_id:
            return self._view(self._by_id[case_id])
        if self._own:
            case = self._own.get((conversation, signature(offered)))
            if case is None and not offered:
                case = self._own_by_text.get(conversation)
            if case is not None:
                return self._view(case)
        return self._plain.find(conversation)
