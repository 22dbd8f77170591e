"""Issue 31, M1 and M2: a `$ref` cycle that never reaches a value, and a schema nested
past the declared limit, are refused when the contract loads, with their path; a
recursive schema that moves down the data on each step loads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolstand.spec.contract import parse_contract
from toolstand.spec.schema_limits import MAX_SCHEMA_DEPTH
from toolstand.util.problems import LoadError


def contract(parameters: dict[str, Any]) -> bytes:
    tool = {"name": "t", "description": "d", "effect": "read", "parameters": parameters}
    # the stdlib's encoder: orjson's stops at 255 levels, below what the tests need
    return json.dumps({"name": "c", "version": "1", "tools": [tool]}).encode()


def refused(parameters: dict[str, Any]) -> str:
    with pytest.raises(LoadError) as info:
        parse_contract(contract(parameters), "c.json")
    assert len(info.value.problems) == 1
    return str(info.value.problems[0])


def test_a_self_ref_is_refused_with_its_path() -> None:
    said = refused({"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}})
    assert said == (
        "c.json:1: $.tools[0].parameters.properties.a.$ref: $ref cycle that never reaches a"
        " value: #/properties/a → #/properties/a"
    )


def test_a_cycle_through_in_place_applicators_is_refused() -> None:
    defs = {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}}
    said = refused({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}, "$defs": defs})
    assert "$ref cycle that never reaches a value" in said and "#/$defs/a" in said
    assert refused({"type": "object", "$ref": "#"}).endswith("never reaches a value: # → #")


def test_a_recursive_tree_loads_and_judges() -> None:
    node = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
    }
    params = {"type": "object", "properties": {"root": {"$ref": "#/$defs/node"}}}
    params["$defs"] = {"node": node}
    tool = parse_contract(contract(params)).tools[0]
    deep: dict[str, Any] = {"kids": []}
    for _ in range(30):
        deep = {"kids": [deep]}
    assert tool.validator.is_valid({"root": deep})
    assert not tool.validator.is_valid({"root": {"kids": [1]}})


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_nesting_past_the_limit_is_one_line_not_a_traceback() -> None:
    said = refused(_nested(300))
    assert said.startswith("c.json:1: $.tools[0].parameters.properties.a.")
    assert said.endswith(f"nested deeper than {MAX_SCHEMA_DEPTH} levels; flatten it or use $defs")
    # within the limit it loads (two JSON levels a step: the object and its properties)
    parse_contract(contract(_nested(MAX_SCHEMA_DEPTH // 2 - 1)))
    # one level past it is refused too, by the walk orjson could still write
    assert refused(_nested(MAX_SCHEMA_DEPTH // 2)).endswith(
        f"nested deeper than {MAX_SCHEMA_DEPTH} levels; flatten it or use $defs"
    )
