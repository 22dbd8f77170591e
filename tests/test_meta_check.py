"""The meta-schema check's fast path decides exactly as jsonschema does (spec/meta_check.py).

``meta_problem`` skips jsonschema for a schema whose keywords it can prove valid; these
tests hold it to jsonschema's own verdict and message on every schema they draw.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema_specifications import REGISTRY

from toolstand.spec import meta_check
from toolstand.spec.meta_check import (
    HANDLED,
    LEFT_TO_JSONSCHEMA,
    Where,
    dialect,
    meta_problem,
    proven_valid,
    without_annotations,
)

META = "https://json-schema.org/draft/2020-12/"


def jsonschema_says(schema: dict[str, Any]) -> Where | None:
    """What the check said before its fast path: jsonschema on every schema."""
    return meta_check._jsonschema_problem(dialect(schema), without_annotations(schema))


def test_every_keyword_of_the_meta_schema_is_ruled_or_left_to_jsonschema() -> None:
    """A keyword the fast path neither rules on nor leaves to jsonschema would pass
    unchecked: none is, in the Draft 2020-12 meta-schema jsonschema ships."""
    root = REGISTRY.contents(META + "schema")
    keywords = set(root["properties"])
    for ref in root["allOf"]:
        keywords |= set(REGISTRY.contents(META + ref["$ref"])["properties"])
    assert keywords == HANDLED | LEFT_TO_JSONSCHEMA
    assert not HANDLED & LEFT_TO_JSONSCHEMA


# each broken the way a hand-written or imported schema breaks, with jsonschema's words
BROKEN: list[tuple[dict[str, Any], Where]] = [
    (
        {"type": "object", "properties": {"n": {"type": "strin"}}},
        (("properties", "n", "type"), "not a valid Draft 2020-12 schema: 'strin' is not valid under any of the given schemas"),
    ),
    (
        {"type": "object", "properties": {"n": {"type": "string", "minLength": -1}}},
        (("properties", "n", "minLength"), "not a valid Draft 2020-12 schema: -1 is less than the minimum of 0"),
    ),
    (
        {"type": "object", "required": ["a", "a"]},
        (("required",), "not a valid Draft 2020-12 schema: ['a', 'a'] has non-unique elements"),
    ),
    (
        {"type": "object", "properties": {"n": {"enum": "a"}}},
        (("properties", "n", "enum"), "not a valid Draft 2020-12 schema: 'a' is not of type 'array'"),
    ),
    (
        {"type": "object", "properties": {"n": {"type": "array", "items": [{"type": "string"}]}}},
        (("properties", "n", "items"), "not a valid Draft 2020-12 schema: [{'type': 'string'}] is not of type 'object', 'boolean'"),
    ),
    (
        {"type": "object", "anyOf": []},
        (("anyOf",), "not a valid Draft 2020-12 schema: [] should be non-empty"),
    ),
    (
        {"type": "object", "properties": {"n": {"type": "string", "pattern": "("}}},
        (("properties", "n", "pattern"), "not a valid Draft 2020-12 schema: '(' is not a 'regex'"),
    ),
    (
        {"type": "object", "properties": {"n": {"maximum": True}}},
        (("properties", "n", "maximum"), "not a valid Draft 2020-12 schema: True is not of type 'number'"),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "expected"), BROKEN)
def test_a_broken_schema_gets_jsonschemas_own_words(
    schema: dict[str, Any], expected: Where
) -> None:
    assert not proven_valid(without_annotations(schema))
    assert meta_problem(schema) == expected == jsonschema_says(schema)


def test_what_the_fast_path_proves_and_what_it_leaves() -> None:
    bfcl_like = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "e.g. Paris", "x-normalize": ["strip"]},
            "days": {"type": ["integer", "null"], "default": None, "x-bfcl-nullable": True},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        },
        "required": ["city"],
    }
    assert proven_valid(without_annotations(bfcl_like))
    assert meta_problem(bfcl_like) is None
    for left in (
        {"$ref": "#/$defs/a", "$defs": {"a": {}}},
        {"pattern": "^a"},
        {"$schema": "http://json-schema.org/draft-07/schema#"},
        {"minLength": 2.0},  # an integer to jsonschema, not vouched for here
    ):
        assert not proven_valid(left), left
        assert meta_problem(left) == jsonschema_says(left)


KEYWORDS = sorted(HANDLED | LEFT_TO_JSONSCHEMA | {"x-normalize", "nonsense"})
TYPE_NAMES = ["string", "integer", "number", "object", "array", "boolean", "null", "strin"]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-2, 3)
    | st.floats(-2, 3, allow_nan=False)
    | st.sampled_from(TYPE_NAMES)
    | st.sampled_from(["", "#", "#/$defs/a", "^a(", "a", "uri:x"])
)
schemas = st.recursive(
    st.booleans() | st.just({}) | st.builds(lambda t: {"type": t}, st.sampled_from(TYPE_NAMES)),
    lambda inner: st.dictionaries(
        st.sampled_from(KEYWORDS),
        inner
        | scalars
        | st.lists(inner | scalars, max_size=3)
        | st.lists(st.sampled_from(TYPE_NAMES), max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "^c"]), inner, max_size=3),
        max_size=4,
    ),
    max_leaves=12,
)


def _near_valid(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Schemas whose keywords mostly hold values of the right kind, now and then not:
    drawn at random they would nearly always be broken at the first keyword."""
    names = st.sampled_from(["a", "b", "c"])
    good_types = st.sampled_from(TYPE_NAMES[:-1])
    count = st.integers(-1, 4) | st.just(2.0) | st.just(True)
    by_keyword: dict[str, st.SearchStrategy[Any]] = {
        "type": good_types | st.lists(good_types, max_size=3) | st.sampled_from(["strin", 3]),
        "enum": st.lists(scalars, max_size=3) | scalars,
        "const": scalars,
        "default": scalars | inner,
        "required": st.lists(names, max_size=3) | st.lists(scalars, max_size=2),
        "properties": st.dictionaries(names, inner, max_size=3) | scalars,
        "$defs": st.dictionaries(names, inner, max_size=2),
        "items": inner | st.lists(inner, max_size=2),
        "additionalProperties": inner | scalars,
        "anyOf": st.lists(inner, max_size=2),
        "not": inner,
        "minLength": count,
        "maxItems": count,
        "minimum": count | st.floats(-2, 2, allow_nan=False) | st.sampled_from(["1", None]),
        "multipleOf": count | st.floats(-1, 2, allow_nan=False),
        "uniqueItems": st.booleans() | st.integers(0, 1),
        "description": st.text(max_size=3) | st.integers(0, 2),
        "format": st.sampled_from(["date", "email"]) | st.integers(0, 1),
        "dependentRequired": st.dictionaries(names, st.lists(names, max_size=2), max_size=2),
        "pattern": st.sampled_from(["^a", "("]),
        "$ref": st.sampled_from(["#", "#/$defs/a", "#/nowhere"]),
        "x-normalize": st.lists(st.sampled_from(["strip", "casefold"]), max_size=2),
    }
    pairs = [st.tuples(st.just(k), v) for k, v in by_keyword.items()]
    return st.lists(st.one_of(pairs), max_size=4).map(dict)


near_valid: st.SearchStrategy[Any] = st.recursive(
    st.just({}) | st.booleans(), _near_valid, max_leaves=10
)


def same_as_jsonschema(schema: Any) -> None:
    """Valid exactly when jsonschema says so, and the same path and message when not."""
    if not isinstance(schema, dict):
        schema = {"properties": {"p": schema}}
    assert meta_problem(schema) == jsonschema_says(schema)
    if proven_valid(without_annotations(schema)):
        Draft202012Validator.check_schema(without_annotations(schema))


@settings(max_examples=100, deadline=None)
@given(schema=st.dictionaries(st.sampled_from(KEYWORDS), schemas, max_size=3) | schemas)
def test_the_fast_path_never_differs_from_jsonschema_on_any_keywords(schema: Any) -> None:
    same_as_jsonschema(schema)


@settings(max_examples=250, deadline=None)
@given(schema=near_valid)
def test_the_fast_path_never_differs_from_jsonschema_on_near_valid_schemas(schema: Any) -> None:
    same_as_jsonschema(schema)
