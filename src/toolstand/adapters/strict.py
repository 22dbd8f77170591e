"""Strict-mode tool schemas: the rewrite each provider's strict mode requires, and how a
strict answer's nulls are read back.

OpenAI strict mode (Structured Outputs, in the provider's function-calling reference)
requires every object to set ``additionalProperties: false`` and to list every property
in ``required``; an optional property is modelled as nullable. So the rewrite makes each
optional property required and nullable (``"type": ["string", "null"]``, a ``null``
added to an ``enum``, or ``anyOf: [<schema>, {"type": "null"}]`` where ``type`` is absent
or the schema is a ``const``/``$ref``/union), recursively through nested objects, array
items and ``$defs``. Anthropic strict tools (C6) need ``additionalProperties: false`` on
every object and keep optional properties optional.

Every change is a ``SchemaNote`` (action ``rewritten``); a keyword the mode rejects is
kept (the provider answers 400 rather than dropping it, and a silent drop would change
what the model is asked) and noted with action ``unsupported``.

A null the model sends for an optional property the rewrite made nullable stands for
"absent": ``nulls_as_absent`` removes such keys from the parsed arguments before the
judge sees them (``raw_arguments`` keeps what was sent), so the judge still rules
against the contract's own schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from toolstand.adapters.base import SchemaNote
from toolstand.adapters.schema import Parts, map_schema
from toolstand.decision import ModelDecision, ToolCall
from toolstand.util.problems import json_path

StrictFlavor = Literal["openai", "anthropic"]

# rejected by OpenAI strict mode (A6); ``default`` is reported rejected (observed)
OPENAI_UNSUPPORTED = (
    "allOf",
    "not",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "default",
)
# rejected by Anthropic strict tools (C6): numeric, string-length, array and object-size
# constraints (the last are not in its list of supported keywords)
ANTHROPIC_UNSUPPORTED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
)
# Anthropic's per-request limits, summed over all strict tools (C6)
ANTHROPIC_MAX_STRICT_TOOLS = 20
ANTHROPIC_MAX_OPTIONAL = 24
ANTHROPIC_MAX_UNIONS = 16


@dataclass
class StrictSchema:
    """One tool's parameters rewritten for strict mode."""

    parameters: dict[str, Any]
    notes: list[SchemaNote] = field(default_factory=list)
    # schema paths (``("properties", "unit")``) of the properties made nullable
    nullable: list[Parts] = field(default_factory=list)
    optional: int = 0  # properties left out of ``required`` (Anthropic's limit)
    unions: int = 0  # properties with anyOf or a type list (Anthropic's limit)


def rewrite_strict(tool: str, parameters: dict[str, Any], flavor: StrictFlavor) -> StrictSchema:
    """``parameters`` (already a private copy) as ``flavor``'s strict mode needs them."""
    out = StrictSchema(parameters)

    def note(parts: Parts, action: Any, keyword: str, detail: str) -> None:
        out.notes.append(SchemaNote(tool, json_path(parts), action, keyword, detail))

    def fit(node: dict[str, Any], parts: Parts) -> dict[str, Any]:
        node = dict(node)
        unsupported = OPENAI_UNSUPPORTED if flavor == "openai" else ANTHROPIC_UNSUPPORTED
        for key in node:
            if key in unsupported:
                note(parts, "unsupported", key, f"{flavor} strict mode rejects it (kept)")
        if flavor == "anthropic" and _count(node.get("minItems")) > 1:
            note(parts, "unsupported", "minItems", "anthropic strict mode allows 0 or 1 (kept)")
        if flavor == "openai" and not parts and "anyOf" in node:
            note(parts, "unsupported", "anyOf", "openai strict mode needs an object root (kept)")
        if _is_object(node):
            _close_object(node, parts, note)
            props = node.get("properties")
            if isinstance(props, dict):
                _required(node, props, parts, flavor, note, out)
        return node

    out.parameters = map_schema(parameters, (), fit)
    return out


def _is_object(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    return (
        kind == "object"
        or (isinstance(kind, list) and "object" in kind)
        or (kind is None and "properties" in node)
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _close_object(node: dict[str, Any], parts: Parts, note: Any) -> None:
    old = node.get("additionalProperties", "absent")
    if old is not False:
        node["additionalProperties"] = False
        note(parts, "rewritten", "additionalProperties", f"set to false (was {old!r})")


def _required(
    node: dict[str, Any],
    props: dict[str, Any],
    parts: Parts,
    flavor: StrictFlavor,
    note: Any,
    out: StrictSchema,
) -> None:
    required = [r for r in node.get("required") or [] if isinstance(r, str)]
    optional = [n for n in props if n not in required]
    out.unions += sum(1 for p in props.values() if _is_union(p))
    if flavor == "anthropic" or not optional:
        out.optional += len(optional)
        return
    node["required"] = required + optional
    note(parts, "rewritten", "required", f"optional made required: {', '.join(optional)}")
    new_props = dict(props)
    for name in optional:
        where = (*parts, "properties", name)
        schema, how = nullable(props[name])
        new_props[name] = schema
        if how:
            note(where, "rewritten", how, "made nullable: a null here is read as absent")
            out.nullable.append(where)
    node["properties"] = new_props


def _is_union(schema: Any) -> bool:
    return isinstance(schema, dict) and ("anyOf" in schema or isinstance(schema.get("type"), list))


def nullable(schema: Any) -> tuple[Any, str]:
    """``schema`` that also accepts null, and the keyword changed; ("") when it already
    accepts null (then a null is a value, not an absence)."""
    if not isinstance(schema, dict) or _accepts_null(schema):
        return schema, ""
    kind = schema.get("type")
    simple = "const" not in schema and "$ref" not in schema and "anyOf" not in schema
    if isinstance(kind, str) and simple:
        out = {**schema, "type": [kind, "null"]}
        if isinstance(schema.get("enum"), list):
            out["enum"] = [*schema["enum"], None]
        return out, "type"
    if isinstance(kind, list) and simple and "enum" not in schema:
        return {**schema, "type": [*kind, "null"]}, "type"
    return {"anyOf": [schema, {"type": "null"}]}, "anyOf"


def _accepts_null(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    branches = schema.get("anyOf")
    return isinstance(branches, list) and any(
        isinstance(b, dict) and b.get("type") == "null" for b in branches
    )


def limit_notes(tools: list[tuple[str, StrictSchema]]) -> list[SchemaNote]:
    """Anthropic's per-request strict limits crossed by these tools, one note each."""
    notes = []
    if len(tools) > ANTHROPIC_MAX_STRICT_TOOLS:
        notes.append(_limit(tools[ANTHROPIC_MAX_STRICT_TOOLS][0], "strict tools", len(tools)))
    for what, limit, count in (
        ("optional parameters", ANTHROPIC_MAX_OPTIONAL, sum(s.optional for _, s in tools)),
        ("union-typed parameters", ANTHROPIC_MAX_UNIONS, sum(s.unions for _, s in tools)),
    ):
        if count > limit:
            notes.append(_limit(tools[-1][0], what, count, limit))
    return notes


def _limit(tool: str, what: str, count: int, limit: int = ANTHROPIC_MAX_STRICT_TOOLS) -> SchemaNote:
    detail = f"{count} {what} in strict tools; anthropic allows {limit} a request"
    return SchemaNote(tool, "", "unsupported", what, detail)


def nulls_as_absent(decision: ModelDecision, nullable: Mapping[str, list[Parts]]) -> ModelDecision:
    """The decision with each null the strict rewrite allowed for an optional property
    removed from the parsed arguments (read as absent), and a note per call changed."""
    if not nullable or not decision.calls:
        return decision
    calls: list[ToolCall] = []
    notes = list(decision.notes)
    for call in decision.calls:
        paths = nullable.get(call.name)
        if not paths or not isinstance(call.arguments, dict):
            calls.append(call)
            continue
        args = _copy_json(call.arguments)
        dropped = [p for path in paths for p in _drop_null(args, path, "$")]
        if dropped:
            notes.append(f"{call.name}: null read as absent (strict): {', '.join(dropped)}")
            call = replace(call, arguments=args)
        calls.append(call)
    return replace(decision, calls=calls, notes=notes)


def _copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value


def _drop_null(instance: Any, path: Parts, where: str) -> list[str]:
    """Follow a schema path through the instance and delete the null at its end; the
    path's ``anyOf`` steps are the rewrite's own wrappers and do not move in the data."""
    if len(path) >= 2 and path[0] == "properties" and isinstance(instance, dict):
        name = path[1]
        if not isinstance(name, str) or name not in instance:
            return []
        if len(path) == 2:
            if instance[name] is None:
                del instance[name]
                return [f"{where}.{name}"]
            return []
        return _drop_null(instance[name], path[2:], f"{where}.{name}")
    if len(path) >= 2 and path[0] == "anyOf":
        return _drop_null(instance, path[2:], where)
    if path and path[0] == "items" and isinstance(instance, list):
        return [
            d
            for i, item in enumerate(instance)
            for d in _drop_null(item, path[1:], f"{where}[{i}]")
        ]
    return []  # under $defs or another keyword: not followed
