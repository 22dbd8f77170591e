"""The judge and the repair feedback name every schema fault alike (issue 27, bug 3).

Every keyword that the Draft 2020-12 meta-schema allows, taken from jsonschema's own
meta-schema and vocabularies (never a hand list), gets a schema that uses it and a value
that breaks it where it can be broken. The judge's ``invalid_arguments`` errors and the
feedback's violations must then be the same (sub-code, place) pairs, and the ones this
file expects: a keyword that only annotates gives none on either side.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema_specifications import REGISTRY

from toolstand.attempt.feedback import faults
from toolstand.decision import ModelDecision, ToolCall
from toolstand.judge.verdict import judge
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract, ToolSpec

DRAFT = "https://json-schema.org/draft/2020-12/"


def meta_schema_keywords() -> set[str]:
    """Every property of the 2020-12 meta-schema and of each vocabulary it is made of."""
    meta = Draft202012Validator.META_SCHEMA
    names = set(meta.get("properties", {}))
    for part in meta["allOf"]:
        names |= set(REGISTRY.contents(DRAFT + part["$ref"]).get("properties", {}))
    return names


# keyword -> (the schema of parameter "v", a value for it, the faults expected as
# (sub-code, JSON pointer)); a keyword that cannot fail on its own expects none
S = {"type": "string"}
EXAMPLES: dict[str, tuple[dict[str, Any], Any, list[tuple[str, str]]]] = {
    # core: references reach a schema that fails on its own keyword
    "$ref": ({"$defs": {"s": S}, "$ref": "#/properties/v/$defs/s"}, 1, [("wrong_type", "/v")]),
    "$defs": ({"$defs": {"s": S}, "$ref": "#/properties/v/$defs/s"}, 1, [("wrong_type", "/v")]),
    "$anchor": ({"$defs": {"s": {**S, "$anchor": "s"}}, "$ref": "#s"}, 1, [("wrong_type", "/v")]),
    "$dynamicAnchor": (
        {"$defs": {"s": {**S, "$dynamicAnchor": "d"}}, "$dynamicRef": "#d"},
        1,
        [("wrong_type", "/v")],
    ),
    "$dynamicRef": (
        {"$defs": {"s": {**S, "$dynamicAnchor": "d"}}, "$dynamicRef": "#d"},
        1,
        [("wrong_type", "/v")],
    ),
    "$id": ({"$id": "urn:toolstand:v", **S}, 1, [("wrong_type", "/v")]),
    "$schema": ({"$schema": DRAFT + "schema"}, 1, []),
    "$vocabulary": ({"$vocabulary": {DRAFT + "vocab/core": True}}, 1, []),
    "$comment": ({"$comment": "a note"}, 1, []),
    # the meta-schema's compatibility keywords: only definitions is reached (by $ref)
    "definitions": (
        {"definitions": {"s": S}, "$ref": "#/properties/v/definitions/s"},
        1,
        [("wrong_type", "/v")],
    ),
    "dependencies": ({"dependencies": {"a": ["b"]}}, {"a": 1}, []),
    "$recursiveAnchor": ({"$recursiveAnchor": True}, 1, []),
    "$recursiveRef": ({"$recursiveRef": "#"}, 1, []),
    # applicator
    "additionalProperties": (
        {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
        {"a": 1, "b": 2, "c": 3},
        [("additional_property", "/v/b"), ("additional_property", "/v/c")],
    ),
    "allOf": ({"allOf": [S]}, 1, [("wrong_type", "/v")]),
    "anyOf": ({"anyOf": [S, {"type": "boolean"}]}, 1, [("wrong_type", "/v")]),
    "oneOf": ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1, [("wrong_type", "/v")]),
    "not": ({"not": {"type": "integer"}}, 1, [("wrong_type", "/v")]),
    "contains": ({"type": "array", "contains": S}, [1], [("wrong_type", "/v")]),
    "dependentSchemas": (
        {"dependentSchemas": {"a": {"required": ["b"]}}},
        {"a": 1},
        [("missing_required", "/v/b")],
    ),
    "if": ({"if": S, "then": {"minLength": 3}}, "ab", [("length", "/v")]),
    "then": ({"if": S, "then": {"minLength": 3}}, "ab", [("length", "/v")]),
    "else": ({"if": S, "else": {"minimum": 10}}, 5, [("range", "/v")]),
    "items": ({"type": "array", "items": S}, ["a", 1], [("wrong_type", "/v/1")]),
    "prefixItems": ({"prefixItems": [S]}, [1], [("wrong_type", "/v/0")]),
    "patternProperties": (
        {"patternProperties": {"^n_": {"type": "integer"}}},
        {"n_a": "x"},
        [("wrong_type", "/v/n_a")],
    ),
    "properties": ({"properties": {"a": S}}, {"a": 1}, [("wrong_type", "/v/a")]),
    "propertyNames": ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"A1": 1}, [("pattern", "/v")]),
    # unevaluated: bug 3, additional_property in the judge, wrong_type in the feedback
    "unevaluatedProperties": (
        {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False},
        {"a": 1, "b": 2},
        [("additional_property", "/v/b")],
    ),
    "unevaluatedItems": (
        {"prefixItems": [S], "unevaluatedItems": False},
        ["a", 1],
        [("wrong_type", "/v")],
    ),
    # validation
    "const": ({"const": "a"}, "b", [("enum", "/v")]),
    "enum": ({"enum": ["a"]}, "b", [("enum", "/v")]),
    "type": (S, 1, [("wrong_type", "/v")]),
    "required": (
        {"type": "object", "required": ["a", "b"]},
        {},
        [("missing_required", "/v/a"), ("missing_required", "/v/b")],
    ),
    "dependentRequired": (
        {"dependentRequired": {"a": ["b"]}},
        {"a": 1},
        [("missing_required", "/v/b")],
    ),
    "maximum": ({"maximum": 1}, 2, [("range", "/v")]),
    "minimum": ({"minimum": 1}, 0, [("range", "/v")]),
    "exclusiveMaximum": ({"exclusiveMaximum": 1}, 1, [("range", "/v")]),
    "exclusiveMinimum": ({"exclusiveMinimum": 1}, 1, [("range", "/v")]),
    "multipleOf": ({"multipleOf": 2}, 3, [("range", "/v")]),
    "maxLength": ({"maxLength": 1}, "ab", [("length", "/v")]),
    "minLength": ({"minLength": 2}, "a", [("length", "/v")]),
    "maxItems": ({"maxItems": 1}, [1, 2], [("length", "/v")]),
    "minItems": ({"minItems": 2}, [1], [("length", "/v")]),
    "maxProperties": ({"maxProperties": 1}, {"a": 1, "b": 2}, [("length", "/v")]),
    "minProperties": ({"minProperties": 2}, {"a": 1}, [("length", "/v")]),
    "maxContains": ({"contains": S, "maxContains": 1}, ["a", "b"], [("length", "/v")]),
    "minContains": ({"contains": S, "minContains": 2}, ["a", 1], [("length", "/v")]),
    "pattern": ({"pattern": "^a"}, "b", [("pattern", "/v")]),
    "uniqueItems": ({"uniqueItems": True}, [1, 1], [("wrong_type", "/v")]),
    # annotations only: the contract's validator asserts no format
    "format": ({"format": "email"}, "not an address", []),
    "contentEncoding": ({"contentEncoding": "base64"}, "%%", []),
    "contentMediaType": ({"contentMediaType": "application/json"}, "{", []),
    "contentSchema": ({"contentMediaType": "application/json", "contentSchema": S}, "1", []),
    "default": ({"default": 1}, "x", []),
    "deprecated": ({"deprecated": True}, "x", []),
    "description": ({"description": "d"}, "x", []),
    "examples": ({"examples": [1]}, "x", []),
    "readOnly": ({"readOnly": True}, "x", []),
    "writeOnly": ({"writeOnly": True}, "x", []),
    "title": ({"title": "t"}, "x", []),
}


def test_every_meta_schema_keyword_has_its_example() -> None:
    keywords = meta_schema_keywords()
    assert set(Draft202012Validator.VALIDATORS) <= keywords  # jsonschema checks no other
    assert set(EXAMPLES) == keywords


def _tool(schema: dict[str, Any]) -> ToolSpec:
    parameters = {"type": "object", "properties": {"v": schema}}
    return ToolSpec(name="t", description="", parameters=parameters)


def _judge_faults(spec: ToolSpec, arguments: dict[str, Any]) -> list[tuple[str, str]]:
    case = Case.model_validate(
        {"id": "c", "user": "u", "expect": {"kind": "tool_call", "tool": "t"}}
    )
    call = ToolCall(name="t", arguments=arguments, raw_arguments=None, call_id="c0")
    contract = Contract(name="k", version="1", tools=[spec])
    j = judge(case, ModelDecision(kind="tool_call", calls=[call]), contract)
    return sorted(
        (e["subcode"], _pointer(e["path"])) for e in j["errors"] if e["code"] == "invalid_arguments"
    )


def _pointer(path: str) -> str:
    """The judge's JSON path ($.v.a[0]) as the feedback's RFC 6901 pointer (/v/a/0)."""
    return path.removeprefix("$").replace("[", ".").replace("]", "").replace(".", "/")


def _feedback_faults(spec: ToolSpec, arguments: dict[str, Any]) -> list[tuple[str, str]]:
    call = ToolCall(name="t", arguments=arguments, raw_arguments=None, call_id="c0")
    return sorted((f["kind"], f["pointer"]) for f in faults(call, spec))


@pytest.mark.parametrize("keyword", sorted(EXAMPLES))
def test_the_judge_and_the_feedback_agree_on_each_keyword(keyword: str) -> None:
    schema, value, expected = EXAMPLES[keyword]
    spec = _tool(schema)
    arguments = {"v": value}
    assert _judge_faults(spec, arguments) == _feedback_faults(spec, arguments)
    assert _judge_faults(spec, arguments) == sorted(expected)
