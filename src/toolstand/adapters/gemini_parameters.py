"""A JSON Schema fitted into Gemini's OpenAPI subset (its ``parameters`` field), keeping
every constraint that form can hold, and a note for each change.

What the form holds and how: a type list with ``null`` as the type plus ``nullable``;
string enums as they are, with a ``null`` member as ``nullable``; number enums as
``format: enum`` with the values as strings (the form's own spelling, read back by the
importer); boolean enums as the boolean type; a mixed enum as ``anyOf`` of one enum per
type; ``const`` as a one-value enum; ``oneOf`` as ``anyOf``; a local ``$ref`` inlined
(one that recurses is cut where it recurses); ``allOf`` merged into its schema. What the
form has no field for is dropped (it would be a 400 for the whole request).
"""

from __future__ import annotations

from typing import Any

from toolstand.adapters.base import SchemaNote
from toolstand.adapters.schema import GEMINI_SCHEMA_FIELDS, json_copy, map_schema
from toolstand.util.problems import json_path

Parts = tuple[str | int, ...]
Notes = list[SchemaNote]
_DEFS = ("$defs", "definitions")


def to_gemini_parameters(tool: str, parameters: dict[str, Any]) -> tuple[dict[str, Any], Notes]:
    """Fit a JSON Schema into Gemini's OpenAPI subset (the ``parameters`` field)."""
    notes: Notes = []

    def note(parts: Parts, action: Any, keyword: str, detail: str) -> None:
        notes.append(SchemaNote(tool, json_path(parts), action, keyword, detail))

    root = json_copy(parameters)
    inlined = _inline(root, root, (), (), note)

    def fit(node: dict[str, Any], parts: Parts) -> dict[str, Any]:
        node = _merge_all_of(node, parts, note)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "type" and isinstance(value, list):
                kinds = [t for t in value if t != "null"]
                if len(kinds) == 1:
                    out["type"] = kinds[0]
                else:
                    out["anyOf"] = [{"type": t} for t in kinds]
                if "null" in value:
                    out["nullable"] = True
                note(parts, "rewritten", "type", f"type list {value} as type/anyOf + nullable")
            elif key in ("enum", "const"):
                values = value if key == "enum" else [value]
                if isinstance(values, list):
                    _enum(out, node, values, key, parts, note)
            elif key == "oneOf":
                out["anyOf"] = value
                note(parts, "rewritten", "oneOf", "as anyOf (looser: more than one may match)")
            elif key in GEMINI_SCHEMA_FIELDS:
                out.setdefault(key, value)
            else:
                note(parts, "dropped", key, "not a field of Gemini's Schema (would be a 400)")
        return out

    return map_schema(inlined, (), fit), notes


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "other"


def _enum(
    out: dict[str, Any], node: dict[str, Any], values: list[Any], key: str, parts: Parts, note: Any
) -> None:
    """``enum`` (or ``const``) in the form: see the module's docstring."""
    if node.get("format") == "enum" and all(isinstance(v, str) for v in values):
        out[key] = values  # already the form's spelling (a member this module made)
        return
    present = [v for v in values if v is not None]
    if len(present) < len(values):
        out["nullable"] = True
    groups: dict[str, list[Any]] = {}
    for v in present:
        groups.setdefault(_kind(v), []).append(v)
    if "other" in groups:
        note(parts, "dropped", key, "enum values that are objects or arrays have no form in Gemini")
        return
    members = [_enum_member(kind, vals) for kind, vals in groups.items()]
    spelled = "const as a one-value enum" if key == "const" else "enum"
    if len(members) == 1:
        for k, v in members[0].items():
            out[k] = v
        if list(groups) != ["string"] or len(present) < len(values):
            note(parts, "rewritten", key, f"{spelled} as {_describe(members[0])}"
                 + (" + nullable" if len(present) < len(values) else ""))  # fmt: skip
        elif key == "const":
            note(parts, "rewritten", key, spelled)
        return
    if "anyOf" in node or "oneOf" in node:
        note(parts, "dropped", key, "a mixed enum beside anyOf has no form in Gemini")
        return
    out.pop("type", None)
    out["anyOf"] = members
    note(parts, "rewritten", key, f"mixed enum as anyOf of {', '.join(map(_describe, members))}")


def _enum_member(kind: str, values: list[Any]) -> dict[str, Any]:
    if kind == "string":
        return {"type": "string", "enum": values}
    if kind == "boolean":
        return {"type": "boolean"} if len(set(values)) == 2 else {"type": "boolean", "enum": [
            str(v).lower() for v in values]}  # fmt: skip
    return {"type": kind, "format": "enum", "enum": [str(v) for v in values]}


def _describe(member: dict[str, Any]) -> str:
    fmt = ", format enum with strings" if member.get("format") == "enum" else ""
    return f"type {member['type']}{fmt}"


def _merge_all_of(node: dict[str, Any], parts: Parts, note: Any) -> dict[str, Any]:
    """``allOf`` folded into its schema: properties and required joined, other keywords
    taken where the schema has none (a conflicting one is dropped, with a note)."""
    members = node.get("allOf")
    if not isinstance(members, list):
        return node
    out = {k: v for k, v in node.items() if k != "allOf"}
    for i, member in enumerate(members):
        if not isinstance(member, dict):
            continue
        for key, value in member.items():
            if key == "properties" and isinstance(value, dict):
                out["properties"] = {**value, **out.get("properties", {})}
            elif key == "required" and isinstance(value, list):
                have = list(out.get("required", []))
                out["required"] = have + [n for n in value if n not in have]
            elif key not in out:
                out[key] = value
            elif out[key] != value:
                note((*parts, "allOf", i), "dropped", key, "conflicts with the schema's own")
    note(parts, "rewritten", "allOf", "merged into the schema")
    return out


def _inline(node: Any, root: dict[str, Any], parts: Parts, seen: tuple[str, ...], note: Any) -> Any:
    """The schema with each local ``$ref`` replaced by what it points at (``$defs``
    dropped after); a ref that recurses, or points at nothing, is cut with a note."""
    if isinstance(node, list):
        return [_inline(v, root, (*parts, i), seen, note) for i, v in enumerate(node)]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        rest = {k: v for k, v in node.items() if k != "$ref"}
        target = _pointer(root, ref)
        if ref in seen or not isinstance(target, dict):
            why = "recursive: cut here" if ref in seen else "points at nothing this schema holds"
            note(parts, "dropped", "$ref", f"{ref} {why}")
            return _inline(rest, root, parts, seen, note)
        note(parts, "rewritten", "$ref", f"{ref} inlined")
        merged = {**{k: v for k, v in target.items() if k not in _DEFS}, **rest}
        return _inline(merged, root, parts, (*seen, ref), note)
    out = {}
    for key, value in node.items():
        if key in _DEFS and isinstance(value, dict):
            continue  # every ref into them is inlined
        out[key] = _inline(value, root, (*parts, key), seen, note) if key not in (
            "enum", "const", "default", "examples") else value  # fmt: skip
    return out


def _pointer(root: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        return None
    node: Any = root
    for raw in [p for p in ref[1:].split("/") if p]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
