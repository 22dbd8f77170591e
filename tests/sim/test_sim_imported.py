"""The simulator's reading of cases with their own tools and accept lists (BFCL)."""

from __future__ import annotations

from typing import Any

from toolstand.sim.imported import OwnToolsIndex, careful_arguments, sim_view
from toolstand.spec.cases import Case


def tool(name: str, **props: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": name,
        "parameters": {"type": "object", "properties": props},
    }


def case(cid: str, tools: list[dict[str, Any]], expect: dict[str, Any]) -> Case:
    return Case.model_validate(
        {"id": cid, "user": "Same question?", "tools": tools, "expect": expect}
    )


def test_careful_gives_the_first_schema_valid_value_and_leaves_out_what_it_may() -> None:
    c = case(
        "a",
        [
            tool(
                "f",
                color={"type": "string"},
                size={"type": "string", "enum": ["XL"]},
                brand={"type": "string"},
            )
        ],
        {
            "kind": "tool_call",
            "tool": "f",
            "accept": {"color": [None, "red"], "size": ["Extra Large", "XL"], "brand": [None]},
            "may_omit": ["brand"],
        },
    )
    (exp,) = c.expect.expected_calls
    spec = c.tools[0] if c.tools else None
    assert careful_arguments(exp, spec) == {"color": "red", "size": "XL"}
    (view,) = sim_view(c).expect.expected_calls
    assert view.arguments == {"color": "red", "size": "XL"} and view.accept is None


def test_one_question_with_other_tools_is_another_case() -> None:
    irrelevant = case(
        "irr", [tool("g", q={"type": "string"})], {"kind": "text", "must_not_call": True}
    )
    asks = case(
        "call",
        [tool("f", x={"type": "integer"})],
        {"kind": "tool_call", "tool": "f", "accept": {"x": [1]}},
    )
    anything = case("any", [tool("f", y={"type": "integer"})], {"kind": "tool_call"})
    index = OwnToolsIndex([irrelevant, asks, anything])
    conversation = (("user", "Same question?"),)
    found = index.find(conversation, {"f": {"type": "object", "properties": {"x": {}}}})
    assert found is not None and found.id == "call"
    assert found.expect.expected_calls[0].arguments == {"x": 1}
    found = index.find(conversation, {"f": {"type": "object", "properties": {"y": {}}}})
    assert found is not None and found.id == "any" and found.expect.tool == "f"
    found = index.find(conversation, {"g": {"properties": {"q": {}}}})
    assert found is not None and found.id == "irr"
    found = index.find(conversation, {})  # the no_tools control: by conversation alone
    assert found is not None and found.id == "irr"
