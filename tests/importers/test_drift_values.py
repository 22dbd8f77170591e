"""Drift sees every change the model sees: property names starting with x- are names,
values are compared with their JSON types, and lists whose order means nothing
(required, type, enum, anyOf/oneOf/allOf members) are compared as sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.importers import Cli, contract_of
from toolstand.importers.drift import compare


def _tool(**schema: Any) -> dict[str, Any]:
    return {"name": "f", "description": "d", "parameters": {"type": "object", **schema}}


def _lines(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    contract = contract_of([{**_tool(**old), "effect": "read"}])
    return [str(d) for d in compare(contract, [_tool(**new)], annotated=False)]


def test_a_property_named_x_something_is_drift() -> None:
    old = {"properties": {"id": {"type": "string"}}}
    new = {"properties": {"id": {"type": "string"}, "x-request-id": {"type": "string"}}}
    assert _lines(old, new) == [
        'f: $.tools[0].parameters.properties.x-request-id: added in the source: {"type":"string"}'
    ]
    # a property named x-... inside a nested object is a name too
    deep = {"properties": {"o": {"type": "object", "properties": {"x-a": {"type": "string"}}}}}
    assert _lines(deep, {"properties": {"o": {"type": "object", "properties": {}}}}) == [
        "f: $.tools[0].parameters.properties.o.properties.x-a: removed from the source "
        '(was {"type":"string"})'
    ]


def test_the_stands_own_keywords_at_any_depth_are_still_skipped() -> None:
    old = {"properties": {"o": {"type": "object", "x-normalize": ["strip"]}}}
    assert _lines(old, {"properties": {"o": {"type": "object"}}}) == []


def test_values_compare_with_their_json_types() -> None:
    old = {"properties": {"level": {"enum": [0, 1]}, "tags": {"type": "array", "default": [1]}}}
    new = {
        "properties": {
            "level": {"enum": [False, True]},
            "tags": {"type": "array", "default": [1.0]},
        }
    }
    assert _lines(old, new) == [
        "f: $.tools[0].parameters.properties.level.enum: changed: [0,1] → [false,true]",
        "f: $.tools[0].parameters.properties.tags.default[0]: changed: 1 → 1.0",
    ]


def test_lists_whose_order_means_nothing_compare_as_sets() -> None:
    old = {
        "properties": {
            "a": {"type": ["string", "null"], "enum": ["x", "y", None]},
            "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["a", "b"],
    }
    new = {
        "properties": {
            "a": {"type": ["null", "string"], "enum": ["y", None, "x"]},
            "b": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
        "required": ["b", "a"],
    }
    assert _lines(old, new) == []
    new["required"] = ["b"]
    assert _lines(old, new) == ['f: $.tools[0].parameters.required: changed: ["a","b"] → ["b"]']


def test_lists_whose_order_matters_still_compare_in_order() -> None:
    old = {
        "properties": {
            "p": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
        }
    }
    new = {
        "properties": {
            "p": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}
        }
    }
    assert _lines(old, new) == [
        'f: $.tools[0].parameters.properties.p.prefixItems[0].type: changed: "string" → "integer"',
        'f: $.tools[0].parameters.properties.p.prefixItems[1].type: changed: "integer" → "string"',
    ]


def test_live_drift_against_tool_files(tmp_path: Path, cli: Cli) -> None:
    """The issue's own inputs: x-request-id added, the enum's type changed, required reordered."""

    def write(name: str, params: dict[str, Any]) -> str:
        path = tmp_path / name
        fn = {"name": "get_thing", "description": "Get a thing", "parameters": params}
        path.write_text(json.dumps([{"type": "function", "function": fn}]), encoding="utf-8")
        return str(path)

    props = {"id": {"type": "string"}, "level": {"enum": [0, 1]}}
    v1 = write("v1.json", {"type": "object", "properties": props, "required": ["id", "level"]})
    out = tmp_path / "c.json"
    ran = cli(
        "contract",
        "import",
        "--from",
        "openai",
        v1,
        "--name",
        "t",
        "--version",
        "1",
        "--out",
        str(out),
    )
    assert ran.code == 0, ran.err
    props2 = {**props, "x-request-id": {"type": "string"}, "level": {"enum": [False, True]}}
    v2 = write("v2.json", {"type": "object", "properties": props2, "required": ["level", "id"]})
    ran = cli("check", "--tools", str(out), "--against", v2, "--from", "openai")
    assert ran.code == 1
    assert ran.out.splitlines() == [
        "get_thing: $.tools[0].parameters.properties.level.enum: changed: [0,1] → [false,true]",
        'get_thing: $.tools[0].parameters.properties.x-request-id: added in the source: {"type":"string"}',
    ]
    v3 = write("v3.json", {"type": "object", "properties": props, "required": ["level", "id"]})
    ran = cli("check", "--tools", str(out), "--against", v3, "--from", "openai")
    assert ran.code == 0 and ran.out == "" and "drift ok" in ran.err
