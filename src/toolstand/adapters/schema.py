"""Tool-schema translation for the wire APIs, and the sent-schema check.

Every adapter sends a copy of the canonical ``ToolSpec.parameters``; what it had to
change is recorded as ``SchemaNote``s (``dropped``, ``rewritten``, ``moved``) so that a
difference between providers can be traced to the adapter rather than blamed on the
model. ``check_sent_tools`` then reads the schemas back out of the request body that
actually goes out and reports every ``required``, ``enum``, ``additionalProperties`` or
``description`` that did not survive (action ``lost``).

Note paths are JSON paths inside the tool's parameters (``$.properties.weight_kg``);
the empty path means the tool itself (its top-level description).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from toolstand.adapters.base import SchemaNote
from toolstand.spec.contract import ToolSpec
from toolstand.util.canonical import canonical_equal
from toolstand.util.problems import json_path

# Keywords whose value is a map of name -> subschema, a single subschema, or a list of them.
# Walking only these keeps property *names* (which may look like keywords) untouched.
MAP_KEYS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
ONE_KEYS = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "contentSchema",
)
LIST_KEYS = ("anyOf", "allOf", "oneOf", "prefixItems")

# The fields of Gemini's OpenAPI-3.0-style ``Schema`` (its API reference). Anything else in
# ``parameters`` is a hard 400 for the whole request, so it must go.
GEMINI_SCHEMA_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
        "propertyOrdering",
        "anyOf",
        "default",
        "example",
    }
)

Parts = tuple[str | int, ...]
Rewrite = Callable[[dict[str, Any], Parts], dict[str, Any]]


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data. Every request copies each tool schema: an orjson round
    trip does it ~10x faster than ``copy.deepcopy``, which remains for what JSON cannot
    carry (integers beyond 64 bits, non-string keys)."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:
        return copy.deepcopy(value)


def map_schema(node: Any, parts: Parts, fn: Rewrite) -> Any:
    """Apply ``fn`` to every subschema, parent first, then walk what ``fn`` kept."""
    if not isinstance(node, dict):
        return node
    out = fn(node, parts)
    for key, value in list(out.items()):
        if key in MAP_KEYS and isinstance(value, dict):
            out[key] = {n: map_schema(s, (*parts, key, n), fn) for n, s in value.items()}
        elif key in ONE_KEYS and isinstance(value, dict):
            out[key] = map_schema(value, (*parts, key), fn)
        elif key in LIST_KEYS and isinstance(value, list):
            out[key] = [map_schema(s, (*parts, key, i), fn) for i, s in enumerate(value)]
    return out


def strip_private(tool: str, parameters: dict[str, Any]) -> tuple[dict[str, Any], list[SchemaNote]]:
    """A deep copy without our private ``x-`` keywords (``x-normalize``): no API needs them."""
    notes: list[SchemaNote] = []

    def drop_private(node: dict[str, Any], parts: Parts) -> dict[str, Any]:
        out = {}
        for key, value in node.items():
            if isinstance(key, str) and key.startswith("x-"):
                notes.append(
                    SchemaNote(tool, json_path(parts), "dropped", key, "toolstand-private keyword")
                )
            else:
                out[key] = value
        return out

    return map_schema(json_copy(parameters), (), drop_private), notes


def check_sent_schema(canonical: Any, sent: Any, tool: str) -> list[SchemaNote]:
    """Notes (action ``lost``) for every required name, enum, additionalProperties and
    description of the canonical schema that the sent schema does not carry unchanged."""
    notes: list[SchemaNote] = []
    _compare(canonical, sent, (), tool, notes)
    return notes


def _compare(canon: Any, sent: Any, parts: Parts, tool: str, notes: list[SchemaNote]) -> None:
    if not isinstance(canon, dict):
        return
    missing_node = not isinstance(sent, dict)
    got: dict[str, Any] = {} if missing_node else sent
    where = json_path(parts)
    why = "schema not sent" if missing_node else None

    def lost(keyword: str, detail: str) -> None:
        notes.append(SchemaNote(tool, where, "lost", keyword, why or detail))

    if isinstance(canon.get("required"), list):
        have = _as_list(got.get("required"))
        gone = [name for name in canon["required"] if name not in have]
        if gone:
            lost("required", f"not required in the sent schema: {', '.join(map(str, gone))}")
    if "enum" in canon and not canonical_equal(canon["enum"], got.get("enum")):
        lost("enum", "absent" if "enum" not in got else f"sent as {got['enum']!r}")
    if "additionalProperties" in canon:
        ap = canon["additionalProperties"]
        if "additionalProperties" not in got:
            lost("additionalProperties", f"absent (canonical: {ap!r})")
        elif not isinstance(ap, dict) and not canonical_equal(ap, got["additionalProperties"]):
            lost("additionalProperties", f"sent as {got['additionalProperties']!r}")
    if isinstance(canon.get("description"), str) and got.get("description") != canon["description"]:
        lost("description", "absent" if "description" not in got else "changed")

    for key, value in canon.items():
        if key in MAP_KEYS and isinstance(value, dict):
            sub = got.get(key)
            sub = sub if isinstance(sub, dict) else {}
            for name, child in value.items():
                _compare(child, sub.get(name), (*parts, key, name), tool, notes)
        elif key in ONE_KEYS and isinstance(value, dict):
            _compare(value, got.get(key), (*parts, key), tool, notes)
        elif key in LIST_KEYS and isinstance(value, list):
            sub_list = _as_list(got.get(key))
            for i, child in enumerate(value):
                _compare(
                    child, sub_list[i] if i < len(sub_list) else None, (*parts, key, i), tool, notes
                )


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def check_sent_tools(
    specs: Iterable[ToolSpec],
    sent: dict[str, tuple[Any, Any]],
    expected: Mapping[str, Any] | None = None,
) -> list[SchemaNote]:
    """Run the sent-schema check for every offered tool.

    ``sent`` maps a tool name to the (description, parameters) read back from the body;
    ``expected`` maps a tool name to the schema the check compares against when it is not
    the contract's own (a strict-mode rewrite, whose changes are noted already).
    """
    notes: list[SchemaNote] = []
    expected = expected or {}
    for spec in specs:
        description, parameters = sent.get(spec.name, (None, None))
        if spec.description and description != spec.description:
            detail = (
                "tool description absent" if description is None else "tool description changed"
            )
            notes.append(SchemaNote(spec.name, "", "lost", "description", detail))
        want = expected.get(spec.name, spec.parameters)
        notes.extend(check_sent_schema(want, parameters, spec.name))
    return notes
