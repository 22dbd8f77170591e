"""How the simulated model picks a tool from the user's words and makes up arguments.

Only the eager and positional personas, forced calls on cases that expect none, and
cases that name no arguments need this. It reads the schemas as the request sent
them and the words of the contract (``x-sim``, else the tools' names and descriptions),
so it knows no domain of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from toolstand.spec.contract import ToolSpec
from toolstand.types import Effect

PLACEHOLDER = "unknown"
_NUMBER = re.compile(r"(?<![\w-])(\d+(?:[.,]\d+)?)")
_DIGITS = re.compile(r"(\[0-9\]|\\d)(\{(\d+)\})?")
_WORD = re.compile(r"[^\W\d_]{5,}")
STEM = 5  # the letters of a description word kept as its stem
# state-changing tools are tried first, as an over-eager model would read the words
_EFFECT_RANK: dict[Effect, int] = {"execute": 0, "prepare": 1, "read": 2}


@dataclass(frozen=True, slots=True)
class Hints:
    """What points the simulated model at a tool: (tool, stems) in the order tried, and
    enum value -> stems that make it pick that value when the value is not written."""

    tools: tuple[tuple[str, tuple[str, ...]], ...] = ()
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


NO_HINTS = Hints()


def hints_for(tools: Iterable[ToolSpec]) -> Hints:
    """A contract's hints: a tool's declared ``x-sim`` stems, else stems derived from its
    name (parts of four letters or more) and its description (the first five letters of
    each word of five or more); execute tools first, then prepare, then read."""
    ordered = sorted(tools, key=lambda t: _EFFECT_RANK[t.effect])
    pairs = []
    values: dict[str, tuple[str, ...]] = {}
    for tool in ordered:
        declared = tool.sim.hints if tool.sim is not None else []
        stems = [s.lower() for s in declared] or derived_stems(tool.name, tool.description)
        pairs.append((tool.name, tuple(stems)))
        for value, words in (tool.sim.values if tool.sim is not None else {}).items():
            values.setdefault(value, tuple(w.lower() for w in words))
    return Hints(tuple(pairs), values)


def derived_stems(name: str, description: str) -> list[str]:
    """Stems read off a tool's name and description, for a contract that declares none."""
    stems = [p for p in name.lower().split("_") if len(p) >= 4]
    for word in _WORD.findall(description.lower()):
        if word[:STEM] not in stems:
            stems.append(word[:STEM])
    return stems


def hint_tool(text: str, offered: list[str], hints: Hints = NO_HINTS) -> str | None:
    """The offered tool the user's words point at, or None when nothing fits."""
    low = text.lower()
    for tool, stems in hints.tools:
        if tool in offered and any(s in low for s in stems):
            return tool
    for name in offered:
        if any(len(p) >= 4 and p in low for p in name.lower().split("_")):
            return name
    return None


def invent_arguments(
    schema: dict[str, Any],
    text: str,
    known: dict[str, Any] | None = None,
    hints: Hints = NO_HINTS,
) -> dict[str, Any]:
    """Arguments for a schema: known values that fit it, the rest read from text or made up."""
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    out = {k: v for k, v in (known or {}).items() if k in props}
    required = schema.get("required")
    names = required if isinstance(required, list) else list(props)
    for name in names:
        if name not in out:
            prop = props.get(name)
            out[name] = invent_value(prop if isinstance(prop, dict) else {}, text, hints)
    return out


def invent_value(prop: dict[str, Any], text: str, hints: Hints = NO_HINTS) -> Any:
    low = text.lower()
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        for value in enum:
            if isinstance(value, str) and value.lower() in low:
                return value
        for value in enum:
            if any(s in low for s in hints.values.get(str(value), ())):
                return value
        return enum[0]
    kind = str(prop.get("type", "string")).lower()
    if kind in ("number", "integer"):
        match = _NUMBER.search(text)
        if match is None:
            return 1
        number = float(match.group(1).replace(",", "."))
        return int(number) if kind == "integer" or number.is_integer() else number
    if kind == "boolean":
        return False
    pattern = prop.get("pattern")
    if isinstance(pattern, str):
        found = _search(pattern, text)
        return found if found is not None else (fill_pattern(pattern) or PLACEHOLDER)
    return PLACEHOLDER


def fill_pattern(pattern: str) -> str | None:
    """The all-zeros string of a simple literal-and-digits pattern (ORD-[0-9]{6} -> ORD-000000)."""
    body = pattern.removeprefix("^").removesuffix("$")
    filled = _DIGITS.sub(lambda m: "0" * int(m.group(3) or 1), body)
    if any(ch in filled for ch in "[](){}*+?|.\\"):
        return None
    regex = _compiled(pattern)
    return filled if regex is not None and regex.fullmatch(filled) else None


def _search(pattern: str, text: str) -> str | None:
    loose = _compiled(pattern.removeprefix("^").removesuffix("$"))
    strict = _compiled(pattern)
    if loose is None or strict is None:
        return None
    for match in loose.finditer(text):
        if strict.fullmatch(match.group(0)):
            return match.group(0)
    return None


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None
