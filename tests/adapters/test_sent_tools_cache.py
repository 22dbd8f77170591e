"""The tool schemas are built once per tools, fit and strict flavor (adapters/tools.py):
every request still gets a body equal to the one built afresh and sharing nothing
mutable with any other request's."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.support.adapters import GET_ORDER, QUOTE_DELIVERY, build
from toolstand.adapters import get_adapter
from toolstand.adapters.base import BuiltRequest
from toolstand.adapters.gemini_parameters import to_gemini_parameters
from toolstand.adapters.schema import check_sent_tools
from toolstand.adapters.tools import sent_tools
from toolstand.types import Api

TOOLS = [GET_ORDER, QUOTE_DELIVERY]
FLAVORS: list[tuple[Api, dict[str, Any]]] = [
    ("openai-chat", {}),
    ("openai-chat", {"strict": True}),
    ("openai-responses", {"strict": True}),
    ("anthropic", {"strict": True}),
    ("gemini", {}),
    ("gemini", {"gemini_schema": "parameters"}),
]


def deface(node: Any) -> None:
    """Change every dict and list inside ``node`` in place."""
    if isinstance(node, dict):
        for value in list(node.values()):
            deface(value)
        node["defaced"] = True
    elif isinstance(node, list):
        for value in list(node):
            deface(value)
        node.append("defaced")


def snapshot(built: BuiltRequest) -> bytes:
    return orjson.dumps([built.http.body, built.schema_notes, built.nullable])


@pytest.mark.parametrize(("api", "options"), FLAVORS)
def test_requests_from_the_same_tools_get_equal_but_independent_bodies(
    api: Api, options: dict[str, Any]
) -> None:
    adapter = get_adapter(api)
    first = build(adapter, TOOLS, options=dict(options))
    pristine = snapshot(first)
    second = build(adapter, TOOLS, options=dict(options))
    assert snapshot(second) == pristine
    assert second.http.body["tools"] is not first.http.body["tools"]

    deface(first.http.body["tools"])
    for note in first.schema_notes:
        note.detail = "defaced"
    deface(first.nullable)

    assert snapshot(second) == pristine
    assert snapshot(build(adapter, TOOLS, options=dict(options))) == pristine


def test_a_second_turn_edited_in_place_changes_no_later_request() -> None:
    adapter = get_adapter("openai-chat")
    first = build(adapter, TOOLS, options={"strict": True})
    pristine = snapshot(first)
    response = {"choices": [{"message": {"role": "assistant", "content": "no tool"}}]}
    decision = adapter.parse_decision(response)
    turn2 = adapter.append_tool_result(
        request_body=first.http.body, response_body=response, decision=decision, results=[]
    )
    deface(turn2["tools"])
    assert snapshot(first) == pristine
    assert snapshot(build(adapter, TOOLS, options={"strict": True})) == pristine


@pytest.mark.parametrize("strict", [None, "openai", "anthropic"])
def test_the_remembered_check_answers_each_sent_body_as_the_check_itself(
    strict: Any,
) -> None:
    schemas = sent_tools(TOOLS, strict=strict)
    faithful = {spec.name: (spec.description, params) for spec, params in schemas}
    lossy = {
        spec.name: (None, {k: v for k, v in params.items() if k != "required"})
        for spec, params in schemas
    }
    for sent in (faithful, lossy, faithful, lossy):
        assert schemas.check(sent) == check_sent_tools(TOOLS, sent, schemas.expected)
    assert schemas.check(faithful) == []
    assert {n.keyword for n in schemas.check(lossy)} == {"description", "required"}
    # a later build's check starts from the same answers
    again = sent_tools(TOOLS, strict=strict)
    assert again.check(lossy) == check_sent_tools(TOOLS, lossy, again.expected)


def test_a_different_fit_or_tool_list_is_built_on_its_own() -> None:
    plain = sent_tools(TOOLS)
    fitted = sent_tools(TOOLS, fit=to_gemini_parameters)
    one = sent_tools([QUOTE_DELIVERY])
    assert [spec.name for spec, _ in one] == ["quote_delivery"]
    # Gemini's ``parameters`` form has no exclusiveMinimum: only the fitted build drops it
    weight = next(p for s, p in plain if s is QUOTE_DELIVERY)["properties"]["weight_kg"]
    fitted_weight = next(p for s, p in fitted if s is QUOTE_DELIVERY)["properties"]["weight_kg"]
    assert "exclusiveMinimum" in weight
    assert "exclusiveMinimum" not in fitted_weight
