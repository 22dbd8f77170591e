"""How the simulated model picks a tool from the user's words and makes up arguments.

Only the eager and positional personas, forced calls on cases that expect none, and
cases that name no arguments need this. It reads the schemas as the request sent
them, so it works for any contract; the hint table adds the seed's delivery words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# (tool, stems): the first offered tool whose stems occur in the text wins, so the
# state-changing tool comes first, as an over-eager model would read it.
TOOL_HINTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cancel_order", ("отмен", "не нужен", "передумал", "ошибся", "cancel")),
    ("quote_delivery", ("доставк", "кг", "посчитай", "рассчитай", "стоимост", "quote")),
    ("get_order", ("заказ", "ord-", "order")),
)

# enum value -> stems that make a model pick it when the value itself is not written
ENUM_HINTS: dict[str, tuple[str, ...]] = {
    "incorrect_address": ("адрес", "address"),
    "changed_mind": ("передумал", "не нужен", "changed my mind"),
    "duplicate": ("дубликат", "duplicate"),
}

PLACEHOLDER = "unknown"
_NUMBER = re.compile(r"(?<![\w-])(\d+(?:[.,]\d+)?)")
_DIGITS = re.compile(r"(\[0-9\]|\\d)(\{(\d+)\})?")


def hint_tool(text: str, offered: list[str]) -> str | None:
    """The offered tool the user's words point at, or None when nothing fits."""
    low = text.lower()
    for tool, stems in TOOL_HINTS:
        if tool in offered and any(s in low for s in stems):
            return tool
    for name in offered:
        if any(len(p) >= 4 and p in low for p in name.lower().split("_")):
            return name
    return None


def invent_arguments(
    schema: dict[str, Any], text: str, known: dict[str, Any] | None = None
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
            out[name] = invent_value(prop if isinstance(prop, dict) else {}, text)
    return out


def invent_value(prop: dict[str, Any], text: str) -> Any:
    low = text.lower()
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        for value in enum:
            if isinstance(value, str) and value.lower() in low:
                return value
        for value in enum:
            if any(s in low for s in ENUM_HINTS.get(str(value), ())):
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
