"""Whether a tool's parameters are a valid JSON Schema (the meta-schema check), fast.

jsonschema's own check walks Draft 2020-12's seven vocabulary meta-schemas through
``$dynamicRef`` for every subschema: about a millisecond a tool, two seconds for BFCL's
2,105 distinct schemas. Most tool schemas use a dozen keywords whose meta-schema rules
are simple (``type`` names a JSON type, ``required`` is a list of unique strings, ...).
``proven_valid`` checks those rules directly and answers True only when every keyword
present is one of them and holds; anything else (``$ref``, ``pattern``, ``$schema``, a
value it cannot vouch for) goes to jsonschema, which then finds and words the error.
So a schema is refused exactly when jsonschema refuses it, with jsonschema's message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolstand.util.canonical import canonical_json

# keywords whose values are data, not schemas: a "$ref" key inside them refers to nothing
DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
# keywords whose value maps names (a property's, a definition's) to schemas
NAMED_SCHEMAS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})

Where = tuple[tuple[str | int, ...], str]


def dialect(schema: Any) -> Any:
    """The validator class of the dialect ``schema`` declares in ``$schema`` (draft-07,
    which zod and npm servers emit, ...), Draft 2020-12 when it declares none."""
    # jsonschema only where it is asked for: `import toolstand.tui.app` stays without it
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for as declared

    if not isinstance(schema, dict) or not isinstance(schema.get("$schema"), str):
        return Draft202012Validator
    return declared(schema, default=Draft202012Validator)


def _is_schema(node: Any) -> bool:
    """Whether ``node`` passes Draft 2020-12's meta-schema by the rules below alone."""
    if isinstance(node, bool):
        return True
    if not isinstance(node, dict):
        return False
    for key, value in node.items():
        rule = _RULES.get(key)
        if rule is None:
            if key in LEFT_TO_JSONSCHEMA:
                return False
            continue  # no vocabulary constrains it (x-normalize, x-bfcl-nullable, ...)
        if not rule(value):
            return False
    return True


def _string_array(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    )


def _type(value: Any) -> bool:
    if isinstance(value, str):
        return value in SIMPLE_TYPES
    return bool(value) and _string_array(value) and all(v in SIMPLE_TYPES for v in value)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    # jsonschema also takes 2.0 for an integer: that case is left to it
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _named(value: Any) -> bool:
    return isinstance(value, dict) and all(_is_schema(v) for v in value.values())


def _schemas(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_schema(v) for v in value)


def _anything(value: Any) -> bool:
    return True


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _flag(value: Any) -> bool:
    return isinstance(value, bool)


# Each keyword of the Draft 2020-12 meta-schema (core, applicator, unevaluated,
# validation, meta-data, format-annotation, content) with the rule it states for the
# keyword's value, as written in jsonschema_specifications' copy of it.
_RULES: dict[str, Callable[[Any], bool]] = {
    "type": _type,
    "enum": lambda v: isinstance(v, list),
    "examples": lambda v: isinstance(v, list),
    "const": _anything,
    "default": _anything,
    "title": _text,
    "description": _text,
    "$comment": _text,
    "format": _text,
    "contentEncoding": _text,
    "contentMediaType": _text,
    "properties": _named,
    "$defs": _named,
    "definitions": _named,
    "dependentSchemas": _named,
    "items": _is_schema,
    "additionalProperties": _is_schema,
    "contains": _is_schema,
    "propertyNames": _is_schema,
    "if": _is_schema,
    "then": _is_schema,
    "else": _is_schema,
    "not": _is_schema,
    "unevaluatedItems": _is_schema,
    "unevaluatedProperties": _is_schema,
    "contentSchema": _is_schema,
    "allOf": _schemas,
    "anyOf": _schemas,
    "oneOf": _schemas,
    "prefixItems": _schemas,
    "required": _string_array,
    "dependentRequired": lambda v: (
        isinstance(v, dict) and all(_string_array(x) for x in v.values())
    ),
    "maximum": _number,
    "minimum": _number,
    "exclusiveMaximum": _number,
    "exclusiveMinimum": _number,
    "multipleOf": lambda v: _number(v) and v > 0,
    "maxLength": _count,
    "minLength": _count,
    "maxItems": _count,
    "minItems": _count,
    "maxContains": _count,
    "minContains": _count,
    "maxProperties": _count,
    "minProperties": _count,
    "uniqueItems": _flag,
    "deprecated": _flag,
    "readOnly": _flag,
    "writeOnly": _flag,
}
# the meta-schema's other keywords: refs and URIs (their formats), regexes, the old
# spellings; a schema using one is checked by jsonschema
LEFT_TO_JSONSCHEMA = frozenset(
    {
        "$id",
        "$schema",
        "$ref",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "pattern",
        "patternProperties",
        "dependencies",
        "$recursiveAnchor",
        "$recursiveRef",
    }
)
HANDLED = frozenset(_RULES)


def proven_valid(schema: Any) -> bool:
    """True when ``schema`` is certainly a valid Draft 2020-12 schema; False means only
    that jsonschema has to decide."""
    if isinstance(schema, dict) and isinstance(schema.get("$schema"), str):
        from jsonschema import Draft202012Validator

        if dialect(schema) is not Draft202012Validator:
            return False
    return _is_schema(schema)  # no $schema: Draft 2020-12 (``dialect``), no jsonschema


_META_SEEN: dict[str, Where | None] = {}


def meta_problem(schema: dict[str, Any]) -> Where | None:
    """Where and why ``schema`` is not a schema of its dialect (remembered per schema:
    imported cases repeat their functions)."""
    bare = without_annotations(schema)
    if proven_valid(bare):
        return None
    key = canonical_json(bare)
    if key not in _META_SEEN:
        _META_SEEN[key] = _jsonschema_problem(dialect(schema), bare)
    return _META_SEEN[key]


def _jsonschema_problem(kind: Any, bare: Any) -> Where | None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    from toolstand.spec.ecma_regex import FORMATS

    try:
        kind.check_schema(bare, format_checker=FORMATS)
    except SchemaError as exc:
        name = (
            "Draft 2020-12"
            if kind is Draft202012Validator
            else kind.__name__.removesuffix("Validator")
        )
        return tuple(exc.path), f"not a valid {name} schema: {exc.message}"
    return None


def without_annotations(schema: Any) -> Any:
    """The schema without what the meta-schema accepts whatever it holds (``default``,
    ``examples``) or checks only for being a string (``description``, ``title``): tools
    that differ only in prose are one check."""
    if isinstance(schema, list):
        return [without_annotations(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in ("default", "examples"):
            continue
        if key in ("description", "title") and isinstance(value, str):
            continue
        if key in DATA_KEYWORDS or (key in NAMED_SCHEMAS and not isinstance(value, dict)):
            out[key] = value
        elif key in NAMED_SCHEMAS:
            out[key] = {name: without_annotations(sub) for name, sub in value.items()}
        else:
            out[key] = without_annotations(value)
    return out
