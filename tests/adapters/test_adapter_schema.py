"""Schema translation and the sent-schema check."""

from __future__ import annotations

import copy
from typing import Any

from tests.support.adapters import GET_ORDER, QUOTE_DELIVERY
from toolstand.adapters.gemini_parameters import to_gemini_parameters
from toolstand.adapters.schema import (
    check_sent_schema,
    check_sent_tools,
    strip_private,
)


def notes_of(notes: list[Any]) -> list[tuple[str, str, str, str]]:
    return [(n.path, n.action, n.keyword, n.detail) for n in notes]


def test_strip_private_walks_subschemas_but_not_property_names() -> None:
    schema = {
        "type": "object",
        "x-normalize": ["strip"],
        "properties": {
            "x-trace": {"type": "string", "x-normalize": ["casefold"]},
            "tags": {"type": "array", "items": {"type": "string", "x-normalize": ["strip"]}},
            "either": {"anyOf": [{"type": "string", "x-note": 1}, {"type": "null"}]},
        },
    }
    original = copy.deepcopy(schema)
    out, notes = strip_private("t", schema)
    assert out == {
        "type": "object",
        "properties": {
            "x-trace": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    }
    assert [(n.path, n.keyword) for n in notes] == [
        ("$", "x-normalize"),
        ("$.properties.x-trace", "x-normalize"),
        ("$.properties.tags.items", "x-normalize"),
        ("$.properties.either.anyOf[0]", "x-note"),
    ]
    assert {n.action for n in notes} == {"dropped"}
    assert schema == original


def test_gemini_openapi_form_rewrites_and_drops() -> None:
    schema = {
        "type": "object",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {
            "note": {"type": ["string", "null"], "description": "optional note"},
            "kind": {"const": "parcel"},
            "size": {"enum": [1, 2, 3]},
            "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "ref": {"$ref": "#/$defs/x"},
            "n": {"type": "integer", "exclusiveMaximum": 10, "multipleOf": 2},
        },
        "additionalProperties": False,
    }
    out, notes = to_gemini_parameters("t", schema)
    assert out == {
        "type": "object",
        "properties": {
            "note": {"type": "string", "nullable": True, "description": "optional note"},
            "kind": {"type": "string", "enum": ["parcel"]},
            "size": {"type": "integer", "format": "enum", "enum": ["1", "2", "3"]},
            "pick": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "ref": {},
            "n": {"type": "integer"},
        },
    }
    assert {(n.path, n.action, n.keyword) for n in notes} == {
        ("$", "dropped", "$schema"),
        ("$", "dropped", "additionalProperties"),
        ("$.properties.note", "rewritten", "type"),
        ("$.properties.kind", "rewritten", "const"),
        ("$.properties.size", "rewritten", "enum"),
        ("$.properties.pick", "rewritten", "oneOf"),
        ("$.properties.ref", "dropped", "$ref"),
        ("$.properties.n", "dropped", "exclusiveMaximum"),
        ("$.properties.n", "dropped", "multipleOf"),
    }


def test_sent_schema_identical_is_clean() -> None:
    assert (
        check_sent_schema(QUOTE_DELIVERY.parameters, copy.deepcopy(QUOTE_DELIVERY.parameters), "q")
        == []
    )


def test_sent_schema_reports_each_kind_of_loss() -> None:
    canonical = {
        "type": "object",
        "description": "root",
        "properties": {
            "id": {"type": "string", "description": "the id"},
            "service": {"type": "string", "enum": ["standard", "express"]},
            "lines": {
                "type": "array",
                "items": {"type": "object", "required": ["sku"], "additionalProperties": False},
            },
            "gone": {"type": "string", "description": "dropped entirely", "enum": ["a"]},
        },
        "required": ["id", "service"],
        "additionalProperties": False,
    }
    sent = {
        "type": "object",
        "description": "root",
        "properties": {
            "id": {"type": "string"},
            "service": {"type": "string", "enum": ["Standard", "express"]},
            "lines": {"type": "array", "items": {"type": "object", "additionalProperties": True}},
        },
        "required": ["service"],
    }
    assert notes_of(check_sent_schema(canonical, sent, "t")) == [
        ("$", "lost", "required", "not required in the sent schema: id"),
        ("$", "lost", "additionalProperties", "absent (canonical: False)"),
        ("$.properties.id", "lost", "description", "absent"),
        ("$.properties.service", "lost", "enum", "sent as ['Standard', 'express']"),
        ("$.properties.lines.items", "lost", "required", "not required in the sent schema: sku"),
        ("$.properties.lines.items", "lost", "additionalProperties", "sent as True"),
        ("$.properties.gone", "lost", "enum", "schema not sent"),
        ("$.properties.gone", "lost", "description", "schema not sent"),
    ]


def test_sent_schema_compares_anyof_by_position() -> None:
    canonical = {"anyOf": [{"type": "string", "description": "a"}, {"enum": [1]}]}
    sent = {"anyOf": [{"type": "string", "description": "b"}]}
    assert notes_of(check_sent_schema(canonical, sent, "t")) == [
        ("$.anyOf[0]", "lost", "description", "changed"),
        ("$.anyOf[1]", "lost", "enum", "schema not sent"),
    ]


def test_check_sent_tools_reads_tool_descriptions_too() -> None:
    sent = {
        "get_order": (None, copy.deepcopy(GET_ORDER.parameters)),
        "quote_delivery": ("Quote.", copy.deepcopy(QUOTE_DELIVERY.parameters)),
    }
    assert [
        (n.tool, n.path, n.keyword, n.detail)
        for n in check_sent_tools([GET_ORDER, QUOTE_DELIVERY], sent)
    ] == [
        ("get_order", "", "description", "tool description absent"),
        ("quote_delivery", "", "description", "tool description changed"),
    ]


def test_check_sent_tools_for_a_tool_that_was_not_sent() -> None:
    notes = check_sent_tools([GET_ORDER], {})
    assert [(n.path, n.keyword) for n in notes] == [
        ("", "description"),
        ("$", "required"),
        ("$", "additionalProperties"),
        ("$.properties.order_id", "description"),
    ]
    assert all(n.action == "lost" for n in notes)
