"""Gemini's OpenAPI-subset ``parameters`` schema read back into JSON Schema.

Gemini's ``Schema`` writes types in upper case (``STRING``, ``OBJECT``), ``nullable``
instead of a ``null`` type, string-only enums (numbers as ``format: enum``) and
``defs``/``ref`` for ``$defs``/``$ref``. Everything else is already JSON Schema and is
kept as given. Each rewrite that a reader of the contract could not undo by eye is
reported with the path of the field it touched.
"""

from __future__ import annotations

from typing import Any

Parts = tuple[str | int, ...]
Note = tuple[Parts, str]

_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
# keywords whose values are schemas, or maps / lists of schemas
_SCHEMA_MAPS = ("properties", "defs", "$defs")
_SCHEMA_LISTS = ("anyOf",)


def from_gemini_schema(schema: Any, parts: Parts = ()) -> tuple[Any, list[Note]]:
    """The JSON Schema a Gemini ``parameters`` value means, and the notes of lossy steps."""
    notes: list[Note] = []
    return _convert(schema, parts, notes), notes


def _convert(node: Any, parts: Parts, notes: list[Note]) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str) and value.upper() in _TYPES:
            out["type"] = value.lower()
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            name = "$defs" if key == "defs" else key
            out[name] = {k: _convert(v, (*parts, key, k), notes) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_convert(v, (*parts, key, i), notes) for i, v in enumerate(value)]
        elif key == "items":
            out[key] = _convert(value, (*parts, key), notes)
        elif key == "ref" and isinstance(value, str):
            out["$ref"] = value.replace("#/defs/", "#/$defs/")
            notes.append(((*parts, key), f"'ref' written as '$ref' ({out['$ref']})"))
        elif key == "nullable":
            continue  # folded into "type" below
        else:
            out[key] = value
    if "defs" in node:
        notes.append(((*parts, "defs"), "'defs' written as '$defs'"))
    _nullable(node, out, parts, notes)
    _numeric_enum(out, parts, notes)
    return out


def _nullable(node: dict[str, Any], out: dict[str, Any], parts: Parts, notes: list[Note]) -> None:
    if node.get("nullable") is not True:
        if "nullable" in node and node["nullable"] is not False:
            notes.append(((*parts, "nullable"), "not a boolean; dropped"))
        return
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    else:
        notes.append(((*parts, "nullable"), "nullable without a type; dropped"))
        return
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    notes.append(((*parts, "nullable"), f"nullable: true written as type {out['type']}"))


def _numeric_enum(out: dict[str, Any], parts: Parts, notes: list[Note]) -> None:
    """``{type: INTEGER, format: enum, enum: ["1", "2"]}``: the enum as numbers, or no
    value would ever pass the integer type."""
    kind = out.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    enum = out.get("enum")
    # kinds may hold anything a file does (a dict): compared, never hashed
    if not isinstance(enum, list) or not any(k in ("integer", "number") for k in kinds):
        return
    numeric = "integer" if "integer" in kinds else "number"
    parse = int if numeric == "integer" else float
    try:
        out["enum"] = [v if v is None else parse(v) for v in enum]
    except (TypeError, ValueError):
        notes.append(((*parts, "enum"), "enum values are not all numbers; kept as strings"))
        return
    if out.get("format") == "enum":
        del out["format"]
    notes.append(((*parts, "enum"), f"string enum of type {numeric} read as numbers"))
