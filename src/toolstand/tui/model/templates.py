"""Starting points for new cases, one per negative category (plus recovery and blank).

Written for the delivery contract the project ships; tool names are checked against the
contract at hand, so with another contract the expectation still names real tools and
only the wording needs changing.
"""

from __future__ import annotations

import copy
from typing import Any

from toolstand.contract import Contract

TEMPLATES: dict[str, dict[str, Any]] = {
    "missing_data": {
        "user": "Посчитай express из Казани в Самару",
        "expect": {"kind": "text", "must_not_call": True, "contains_any": ["вес", "кг"]},
        "note": "a required argument (weight) is missing: the model must ask, not invent it",
    },
    "ambiguous": {
        "user": "Проверь мой заказ, номер то ли ORD-123456, то ли ORD-123465",
        "expect": {"kind": "text", "must_not_call": "@execute", "contains_any": ["какой", "уточн"]},
        "note": "two readings: the model must ask which one",
    },
    "invalid_id": {
        "user": "Где заказ ORD-12?",
        "expect": {
            "kind": "text",
            "must_not_call": True,
            "contains_any": ["ORD-", "формат", "номер"],
        },
        "note": "the id breaks the pattern: no call, ask for a valid one",
    },
    "implicit_intent": {
        "user": "Кажется, заказ ORD-654321 мне уже не нужен",
        "expect": {
            "kind": "text",
            "must_not_call": "@execute",
            "contains_any": ["отменить", "подтверд"],
        },
        "note": "a hint, not a request: no state-changing call without confirmation",
    },
    "irrelevant": {
        "user": "Какая погода завтра в Казани?",
        "expect": {"kind": "text", "must_not_call": True, "contains_any": ["не могу", "доставк"]},
        "note": "out of scope: no tool fits",
    },
    "boundary": {
        "user": "Посчитай standard из Казани в Самару, 1000 кг",
        "expect": {
            "kind": "tool_call",
            "tool": "quote_delivery",
            "arguments": {
                "origin": "Казань",
                "destination": "Самара",
                "weight_kg": 1000,
                "service": "standard",
            },
        },
        "note": "the largest allowed value must still be accepted",
    },
    "recovery": {
        "user": "Где заказ ORD-999999?",
        "expect": {
            "kind": "tool_call",
            "tool": "get_order",
            "arguments": {"order_id": "ORD-999999"},
        },
        "followup": {
            "contains_any": ["не найден", "провер"],
            "must_not_contain": ["в пути", "доставлен"],
        },
        "note": "the tool fails: the answer must say so, not invent a status",
    },
    "blank": {"user": "", "expect": {"kind": "text"}},
}
NEGATIVE = ("missing_data", "ambiguous", "invalid_id", "implicit_intent", "irrelevant", "boundary")


def unique_id(base: str, taken: set[str]) -> str:
    """``base`` if free, else base_2, base_3, ..."""
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def _fit(expect: dict[str, Any], contract: Contract) -> dict[str, Any]:
    names = [t.name for t in contract.tools]
    if expect.get("must_not_call") == "@execute":
        unsafe = [t.name for t in contract.tools if t.effect == "execute"]
        expect["must_not_call"] = unsafe or True
    tool = expect.get("tool")
    if tool is not None and tool not in names and names:
        # another contract: keep the shape, point at a real tool, drop foreign arguments
        expect["tool"] = names[0]
        expect.pop("arguments", None)
    return expect


def from_template(category: str, contract: Contract, taken: set[str]) -> dict[str, Any]:
    """A new case dict for a category, with an id no other case uses."""
    body = copy.deepcopy(TEMPLATES[category])
    case: dict[str, Any] = {"id": unique_id(f"{category}_new", taken)}
    if category != "blank":
        case["category"] = category
    case.update(body)
    case["expect"] = _fit(case["expect"], contract)
    return case


def duplicate(case: dict[str, Any], taken: set[str]) -> dict[str, Any]:
    """A copy of a case under a fresh id."""
    copied = copy.deepcopy(case)
    copied["id"] = unique_id(f"{case.get('id', 'case')}_copy", taken)
    return copied
