"""Declared deterministic repairs and domain normalizers for tool arguments.

Repairs are the only changes toolstand ever makes to arguments, and it makes them
beside the raw value, never instead of it (README, "What it measures"). Rules, in the order they are tried on each value:

- ``strip``: surrounding white space around a string;
- ``number_from_string``: a decimal string ("2.5", "2,5", " 12 ") where the schema wants
  a number or an integer;
- ``enum_case``: a string that matches exactly one enum value up to case.

Extra properties are never dropped: an unknown field stays invalid.

The normalized verdict goes one step further (``normalized_repair``): after the declared
repairs, an enum value that the parameter's own ``x-normalize`` rules map onto exactly one
member becomes that member (rule ``x-normalize``); a value equal to several members under
them stays invalid. A value whose schema declares ``x-normalize`` (even ``[]``) has declared
its leniency there: the normalized verdict repairs it by those normalizers only, not by the
rules above (BFCL's integers declare ``[]``: BFCL takes ``"10"`` for an integer as wrong).
The repair classification (``classify``) always tries the rules above.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema is imported by what validates (spec/contract.py)
    from jsonschema import Draft202012Validator

from toolstand.types import RepairClass
from toolstand.util.canonical import canonical_json

_DECIMAL = re.compile(r"^\s*[-+]?\d+(?:[.,]\d+)?\s*$")


@dataclass
class RepairResult:
    repair: RepairClass
    repaired: dict[str, Any] | None
    repairs: list[dict[str, Any]] = field(default_factory=list)


def _types(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    return set()


Log = list[dict[str, Any]]
# one scalar value, its schema, its path, the log of changes -> the value kept
Leaf = Callable[[Any, dict[str, Any], str, Log], Any]


def _each_leaf(value: Any, schema: Any, path: str, log: Log, leaf: Leaf) -> Any:
    """The value with ``leaf`` applied to every scalar that has a schema (containers rebuilt)."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        return {k: _each_leaf(v, props.get(k), f"{path}.{k}", log, leaf) for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items")
        return [_each_leaf(v, items, f"{path}[{i}]", log, leaf) for i, v in enumerate(value)]
    return leaf(value, schema, path, log)


def _repair_leaf(value: Any, schema: dict[str, Any], path: str, log: Log) -> Any:
    if not isinstance(value, str):
        return value
    types = _types(schema)
    new: Any = value
    if types & {"number", "integer"} and "string" not in types and _DECIMAL.match(value):
        text = value.strip().replace(",", ".")
        number: float | int = float(text) if "." in text else int(text)
        if "number" not in types:  # integer only: a fractional string stays invalid
            if isinstance(number, float) and not number.is_integer():
                return value
            number = int(number)
        log.append({"path": path, "rule": "number_from_string", "from": value, "to": number})
        return number
    if value != value.strip():
        new = value.strip()
        log.append({"path": path, "rule": "strip", "from": value, "to": new})
    enum = schema.get("enum")
    if isinstance(enum, list) and new not in enum:
        folded = [e for e in enum if isinstance(e, str) and e.casefold() == new.casefold()]
        if len(folded) == 1:
            log.append({"path": path, "rule": "enum_case", "from": new, "to": folded[0]})
            new = folded[0]
    return new


def classify(arguments: dict[str, Any], validator: Draft202012Validator) -> RepairResult:
    """raw_valid, repairable (with the repaired value and the repairs applied) or invalid."""
    if validator.is_valid(arguments):
        return RepairResult("raw_valid", None)
    log: list[dict[str, Any]] = []
    repaired = _each_leaf(copy.deepcopy(arguments), validator.schema, "$", log, _repair_leaf)
    if log and validator.is_valid(repaired):
        return RepairResult("repairable", repaired, log)
    return RepairResult("invalid", None, log)


# --- domain normalizers (x-normalize), used only for the normalized argument metric ---


# BFCL's standardize_string: these characters go, then lower case, ' becomes "
_BFCL_DROPPED = re.compile(r"[ ,./\-_*^]")


def _apply_rules(value: Any, rules: list[str]) -> Any:
    for rule in rules:
        if isinstance(value, str):
            if rule == "strip":
                value = value.strip()
            elif rule == "casefold":
                value = value.casefold()
            elif rule == "collapse_spaces":
                value = " ".join(value.split())
            elif rule == "bfcl_string":
                value = _BFCL_DROPPED.sub("", value).lower().replace("'", '"')
        elif rule == "int_as_float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
    return value


def normalize(value: Any, schema: Any) -> Any:
    """Apply the schema's declared ``x-normalize`` rules to a value (copying).

    A member or item that has no schema of its own inherits its container's rules (a
    BFCL ``dict`` parameter often declares no properties)."""
    if not isinstance(schema, dict):
        return value
    rules = _rules(schema)
    inherited = {"x-normalize": rules} if rules else None
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        return {k: normalize(v, props.get(k, inherited)) for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items", inherited)
        return [normalize(v, items) for v in value]
    return _apply_rules(value, rules)


def _rules(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("x-normalize")
    return [r for r in declared if isinstance(r, str)] if isinstance(declared, list) else []


def _enum_leaf(value: Any, schema: dict[str, Any], path: str, log: Log) -> Any:
    """An enum value its own normalizers map onto exactly one member, as that member."""
    enum, rules = schema.get("enum"), _rules(schema)
    if not isinstance(enum, list) or not rules:
        return value
    if any(canonical_json(m) == canonical_json(value) for m in enum):
        return value
    under = canonical_json(_apply_rules(value, rules))
    members = [m for m in enum if canonical_json(_apply_rules(m, rules)) == under]
    if len(members) != 1:
        return value
    log.append({"path": path, "rule": "x-normalize", "from": value, "to": members[0]})
    return members[0]


def _undeclared_repair_leaf(value: Any, schema: dict[str, Any], path: str, log: Log) -> Any:
    """The deterministic repairs, where the schema declares no normalizers of its own."""
    if isinstance(schema.get("x-normalize"), list):
        return value
    return _repair_leaf(value, schema, path, log)


def normalized_repair(arguments: dict[str, Any], validator: Draft202012Validator) -> RepairResult:
    """The arguments as the normalized verdict judges them: the declared repairs (where a
    value's schema declares no ``x-normalize``), then the enum values repaired by their
    parameter's normalizers. ``repair`` says whether that
    makes them valid (``repairable``), they were valid already, or they stay ``invalid``."""
    if validator.is_valid(arguments):
        return RepairResult("raw_valid", None)
    log: list[dict[str, Any]] = []
    repaired = _each_leaf(
        copy.deepcopy(arguments), validator.schema, "$", log, _undeclared_repair_leaf
    )
    repaired = _each_leaf(repaired, validator.schema, "$", log, _enum_leaf)
    if log and validator.is_valid(repaired):
        return RepairResult("repairable", repaired, log)
    return RepairResult("invalid", None, [])
