"""BFCL's function descriptions as ToolSpecs: its types as JSON Schema, its names as the
wire APIs allow them, its leniencies as declared normalizers.

- Types: ``dict`` → ``object``, ``float`` → ``number``, ``tuple`` → ``array``, ``any`` →
  no type constraint; ``string``, ``integer``, ``boolean``, ``array`` stay.
- Names: the wire APIs allow ``^[A-Za-z0-9_-]{1,64}$``; BFCL itself sends ``.`` as ``_``
  to the APIs that refuse dots (``math.factorial`` → ``math_factorial``); any other
  refused character becomes ``_`` too. The original stays in ``x-bfcl-name``.
- Normalizers: every ``string`` node declares ``bfcl_string`` (BFCL's standardize_string),
  every ``number`` node ``int_as_float`` (BFCL accepts an int for a float), every
  ``integer`` and ``boolean`` node ``[]`` (BFCL takes them only as they are: ``"10"`` for
  an integer is wrong there, so the normalized verdict does not repair it); they count
  only for the normalized result.
- ``effect`` is ``read``: BFCL has no notion of a tool that changes state.
- ``optional`` (a BFCL key, not JSON Schema) is dropped; ``required`` says the same.
- Nullable defaults: a parameter whose declared ``default`` is null (Python ``None``)
  accepts null, as BFCL does: its ``type`` gets ``"null"`` beside it, its ``enum`` (if
  any) ``null``, and it is marked ``x-bfcl-nullable: true``. A parameter of type ``any``
  takes null already and is left as it is.
- An ``enum`` of non-list values on an ``array`` (22 parameters in 2026.3.23, e.g.
  live_multiple_146-58-0's ``metrics``) lists what its items may be: it moves onto
  ``items``, where no list could ever match it as written.
"""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft202012Validator

from toolstand.importers.names import distinct
from toolstand.spec.contract import ToolSpec

TYPE_MAP: dict[str, str | None] = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": None,
    "string": "string",
    "integer": "integer",
    "boolean": "boolean",
    "array": "array",
}
NORMALIZERS_FOR: dict[str, list[str]] = {
    "string": ["bfcl_string"],
    "number": ["int_as_float"],
    "integer": [],
    "boolean": [],
}
NULLABLE = "x-bfcl-nullable"
DEFAULT_MEMBER = "x-bfcl-default-member"
_DROPPED_KEYS = frozenset({"optional"})
_REFUSED_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def wire_name(name: str) -> str:
    """A name the wire APIs accept: ``.`` (and any other refused character) as ``_``."""
    return _REFUSED_CHARS.sub("_", name)[:64] or "_"


def wire_names(names: list[str]) -> dict[str, str]:
    """Each of one entry's function names → a distinct wire name: a name the wire takes
    as it is keeps it, and a renamed one that would collide (``math.factorial`` beside
    ``math_factorial``, two long names with the same first 64 characters) gets a suffix."""
    out: dict[str, str] = {n: n for n in names if wire_name(n) == n}
    taken = set(out.values())
    for name in names:
        if name not in out:
            out[name] = distinct(wire_name(name), taken)
            taken.add(out[name])
    return out


def convert_schema(schema: Any) -> Any:
    """One BFCL parameter schema (at any depth) as JSON Schema with its normalizers."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED_KEYS:
            continue
        if key == "type":
            mapped = TYPE_MAP.get(value, value) if isinstance(value, str) else value
            if mapped is not None:
                out["type"] = mapped
        elif key == "properties" and isinstance(value, dict):
            out["properties"] = {k: convert_schema(v) for k, v in value.items()}
        elif key == "items":
            out["items"] = convert_schema(value)
        else:
            out[key] = value
    _items_enum(out)
    rules = NORMALIZERS_FOR.get(out.get("type", ""))
    if rules is not None:
        out["x-normalize"] = list(rules)
    if "default" in schema and schema["default"] is None:
        _accept_null(out)
    elif "default" in schema:
        _accept_default(out, schema["default"])
    return out


_JSON_TYPE = {str: "string", bool: "boolean", int: "integer", float: "number"}
# kept on the parameter itself when its schema moves into anyOf
_ANNOTATIONS = frozenset({"description", "default", "title", "x-normalize"})


def validator_ok(schema: dict[str, Any], value: Any) -> bool:
    return bool(Draft202012Validator(schema).is_valid(value))


def _accept_default(out: dict[str, Any], default: Any) -> None:
    """A parameter takes its own declared default where its schema leaves it out:
    BFCL's answers pass the default (the same call as leaving it out) and the functions'
    descriptions tell the model to (``"Use 'dontcare' to include songs from any year"``).
    An enum of the default's type gets it as one more member; a scalar of another type
    (an ``integer`` whose default is ``"dontcare"``) becomes ``anyOf`` its schema and that
    one value. Either way it is marked ``x-bfcl-default-member: true``."""
    kind = _JSON_TYPE.get(type(default))
    if kind is None or not isinstance(out.get("type"), str) or validator_ok(out, default):
        return
    enum = out.get("enum")
    if kind != out["type"] and out["type"] in _JSON_TYPE.values():
        kept = {k: out.pop(k) for k in list(out) if k in _ANNOTATIONS}
        inner = dict(out)
        out.clear()
        out.update(kept)
        out["anyOf"] = [inner, {"const": default}]
        out[DEFAULT_MEMBER] = True
        return
    if not isinstance(enum, list) or kind != out["type"]:
        return
    out["enum"] = [*enum, default]
    out[DEFAULT_MEMBER] = True


def _items_enum(out: dict[str, Any]) -> None:
    """An array's enum of scalars: the values its items may take, moved onto them."""
    enum, items = out.get("enum"), out.get("items")
    if out.get("type") != "array" or not isinstance(enum, list) or not enum:
        return
    if any(isinstance(m, list) for m in enum) or not isinstance(items, dict | None):
        return
    out["items"] = {**(items or {}), "enum": out.pop("enum")}


def _accept_null(out: dict[str, Any]) -> None:
    """A parameter whose default is None takes null: its type and enum widened."""
    kind, enum = out.get("type"), out.get("enum")
    widened = False
    if isinstance(kind, str) and kind != "null":
        out["type"] = [kind, "null"]
        widened = True
    if isinstance(enum, list) and None not in enum:
        out["enum"] = [*enum, None]
        widened = True
    if widened:
        out[NULLABLE] = True


def marked_count(schema: Any, mark: str = NULLABLE) -> int:
    """How many parameters (at any depth) the import marked ``mark``: made nullable
    (``x-bfcl-nullable``), or taking their declared default (``x-bfcl-default-member``)."""
    if not isinstance(schema, dict):
        return 0
    props = schema.get("properties")
    inner = list(props.values()) if isinstance(props, dict) else []
    inner.append(schema.get("items"))
    inner += schema.get("anyOf") or []
    return (schema.get(mark) is True) + sum(marked_count(s, mark) for s in inner)


def to_tool(function: dict[str, Any], renamed: str | None = None) -> ToolSpec:
    """One BFCL function as a ToolSpec (ValueError when it is not a BFCL function);
    ``renamed``: its wire name when its entry's names had to be kept apart."""
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("a BFCL function has a 'name'")
    given = function.get("parameters") or {"type": "dict", "properties": {}}
    if not isinstance(given, dict) or not isinstance(given.get("properties", {}), dict):
        raise ValueError(f"{name}: 'parameters' is an object, its 'properties' one too")
    parameters = convert_schema(given)
    parameters["type"] = "object"
    renamed = renamed or wire_name(name)
    spec: dict[str, Any] = {
        "name": renamed,
        "description": str(function.get("description") or ""),
        "parameters": parameters,
        "effect": "read",
    }
    if renamed != name:
        spec["x-bfcl-name"] = name
    return ToolSpec.model_validate(spec)


def schema_type(tool: ToolSpec, parameter: str) -> str | None:
    """The JSON Schema type of one top-level parameter, if it declares one."""
    prop = (tool.parameters.get("properties") or {}).get(parameter)
    kind = prop.get("type") if isinstance(prop, dict) else None
    if isinstance(kind, list):  # a nullable parameter: its one other type
        others = [k for k in kind if k != "null"]
        kind = others[0] if len(others) == 1 else None
    return kind if isinstance(kind, str) else None
