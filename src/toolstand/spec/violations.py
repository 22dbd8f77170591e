"""A call's schema violations: one type, one keyword → sub-code table, one function.

The judge (its ``invalid_arguments`` sub-codes and paths), `toolstand check` (expected
arguments that break their own schema) and the repair feedback (what the fake executor
tells the model) all read a call's faults from ``violations``, so they name each fault
alike (design.md, Decisions and verdicts; issue 27, bug 3).

One violation is one place: jsonschema's single ``required`` error per missing name
stays one, its single ``additionalProperties`` (or ``unevaluatedProperties``) error for
several unexpected names becomes one per name, each pointing at that name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema is imported by what validates (spec/contract.py)
    from jsonschema.exceptions import ValidationError

from toolstand.spec.contract import ToolSpec
from toolstand.types import SchemaSubcode
from toolstand.util.problems import json_path

BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
LENGTHS = (
    *("minLength", "maxLength", "minItems", "maxItems"),
    *("minProperties", "maxProperties", "minContains", "maxContains"),
)
# any other keyword that fails (anyOf, not, uniqueItems, ...) is a type-shape violation
FALLBACK: SchemaSubcode = "wrong_type"
SUBCODE_OF: dict[str, SchemaSubcode] = {
    "required": "missing_required",
    "dependentRequired": "missing_required",
    "additionalProperties": "additional_property",
    "unevaluatedProperties": "additional_property",
    "type": "wrong_type",
    "enum": "enum",
    "const": "enum",
    "pattern": "pattern",
    "format": "format",
    **dict.fromkeys(BOUNDS, "range"),
    **dict.fromkeys(LENGTHS, "length"),
}
_NAMED_MISSING = ("required", "dependentRequired")
_NAMED_EXTRA = ("additionalProperties", "unevaluatedProperties")


@dataclass(frozen=True)
class Violation:
    """One fault in a call's arguments: where, what came, what the schema allows there."""

    subcode: SchemaSubcode
    keyword: str  # the JSON Schema keyword that failed
    parts: tuple[str | int, ...]  # the place in the arguments
    received: Any  # None for a missing property
    message: str  # jsonschema's own words
    allowed: dict[str, Any]

    @property
    def path(self) -> str:
        """The place as a JSON path, ``$.items[0].name`` (the judge's errors)."""
        return json_path(self.parts)

    @property
    def pointer(self) -> str:
        """The place as an RFC 6901 pointer, ``/items/0/name`` (the feedback's)."""
        return pointer(self.parts)


def pointer(parts: tuple[str | int, ...] | list[str | int]) -> str:
    """An RFC 6901 JSON pointer: "/items/0/name", "" for the document."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def subcode_of(keyword: str) -> SchemaSubcode:
    return SUBCODE_OF.get(keyword, FALLBACK)


def violations(spec: ToolSpec, arguments: Any) -> list[Violation]:
    """Every schema violation of ``arguments`` against the tool's parameters, in the
    order of their places in the arguments."""
    errors = sorted(spec.validator.iter_errors(arguments), key=lambda e: _order(e.absolute_path))
    return [v for err in errors for v in _from_error(err)]


def _order(path: Any) -> tuple[tuple[int, int, str], ...]:
    return tuple((1, p, "") if isinstance(p, int) else (0, 0, str(p)) for p in path)


def _from_error(err: ValidationError) -> list[Violation]:
    keyword = str(err.validator)
    subcode = subcode_of(keyword)
    parts = tuple(err.absolute_path)
    allowed = _allowed(keyword, err)
    instance = err.instance if isinstance(err.instance, dict) else {}
    if keyword in _NAMED_MISSING:
        name = _missing_name(err, instance)
        if name is not None:
            return [Violation(subcode, keyword, (*parts, name), None, err.message, allowed)]
    elif keyword in _NAMED_EXTRA:
        extra = _extra_names(keyword, err, instance)
        if extra:
            return [
                Violation(subcode, keyword, (*parts, k), instance[k], err.message, allowed)
                for k in extra
            ]
    return [Violation(subcode, keyword, parts, err.instance, err.message, allowed)]


def _missing_name(err: ValidationError, instance: dict[str, Any]) -> str | None:
    """The one name a ``required`` / ``dependentRequired`` error is about (jsonschema
    gives one error per missing name, naming it first in its message)."""
    value = err.validator_value
    listed = value if isinstance(value, list) else [n for d in value.values() for n in d]
    missing = [n for n in listed if isinstance(n, str) and n not in instance]
    named = [n for n in missing if err.message.startswith(f"{n!r} is ")]
    found = named or missing
    return found[0] if found else None


def _extra_names(keyword: str, err: ValidationError, instance: dict[str, Any]) -> list[str]:
    """The properties an ``additionalProperties`` / ``unevaluatedProperties`` error is
    about. What counts as evaluated can come from ``allOf``, ``$ref``, ``if``...:
    jsonschema has worked it out and names them in its message."""
    if keyword == "additionalProperties" and isinstance(err.schema, dict):
        declared = err.schema.get("properties") or {}
        patterns = err.schema.get("patternProperties") or {}
        return [
            k for k in instance if k not in declared and not any(re.search(p, k) for p in patterns)
        ]
    return [k for k in instance if repr(k) in err.message]


def _allowed(keyword: str, err: ValidationError) -> dict[str, Any]:
    """What the schema allows where the keyword failed: enum values, bounds, pattern,
    type, required names, the known properties."""
    schema = err.schema if isinstance(err.schema, dict) else {}
    if keyword in ("enum", "const", "type", "pattern", "format"):
        return {keyword: err.validator_value}
    if keyword in BOUNDS or keyword in LENGTHS:
        keys = BOUNDS if keyword in BOUNDS else LENGTHS
        return {k: schema[k] for k in keys if k in schema}
    if keyword == "required":
        return {"required": list(err.validator_value)}
    if keyword == "dependentRequired":
        return {"dependentRequired": err.validator_value}
    if keyword in _NAMED_EXTRA:
        return {"properties": list((schema.get("properties") or {}).keys())}
    return {k: schema[k] for k in ("type", "anyOf", "oneOf") if k in schema}
