"""Starting points for new cases, one per negative category (plus recovery and blank).

Built from the open contract's tools, so they name no domain of their own: the user's
words are a bracketed description of what to write, the expectation names real tools
(the execute ones for ``must_not_call``, a tool with a pattern for ``invalid_id``, one
with a bounded number for ``boundary``, one whose ``x-fake`` fails for ``recovery``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from toolstand.spec.contract import Contract, ToolSpec

# name -> what the template is for (the picker shows it)
TEMPLATES: dict[str, dict[str, str]] = {
    "missing_data": {"note": "a required argument is missing: the model must ask, not invent it"},
    "ambiguous": {"note": "two readings: the model must ask which one"},
    "invalid_id": {"note": "a value breaks its pattern: no call, ask for a valid one"},
    "implicit_intent": {
        "note": "a hint, not a request: no state-changing call without confirmation"
    },
    "irrelevant": {"note": "out of scope: no tool fits"},
    "boundary": {"note": "the largest allowed value must still be accepted"},
    "recovery": {"note": "the tool fails: the answer must say so, not invent a result"},
    "blank": {"note": "an empty case"},
}
NEGATIVE = ("missing_data", "ambiguous", "invalid_id", "implicit_intent", "irrelevant", "boundary")


def _props(tool: ToolSpec) -> dict[str, Any]:
    props = tool.parameters.get("properties")
    return props if isinstance(props, dict) else {}


def _first(tools: list[ToolSpec], test: Callable[[str, dict[str, Any]], bool]) -> tuple[str, str]:
    """(tool, parameter) of the first parameter passing ``test``, else ("", "")."""
    for tool in tools:
        for name, prop in _props(tool).items():
            if isinstance(prop, dict) and test(name, prop):
                return tool.name, name
    return "", ""


def _unsafe(contract: Contract) -> list[str] | bool:
    return [t.name for t in contract.tools if t.effect == "execute"] or True


def _missing_data(contract: Contract) -> dict[str, Any]:
    required = {n for t in contract.tools for n in t.parameters.get("required", [])}
    tool, param = _first(contract.tools, lambda n, _: n in required)
    return {
        "user": f"(a request for {tool or 'a tool'} that leaves out {param or 'a required value'})",
        "expect": {"kind": "text", "must_not_call": True, "contains_any": [param or "?"]},
    }


def _ambiguous(contract: Contract) -> dict[str, Any]:
    return {
        "user": "(a request that fits two readings, e.g. two values for the same argument)",
        "expect": {"kind": "text", "must_not_call": _unsafe(contract), "contains_any": ["?"]},
    }


def _invalid_id(contract: Contract) -> dict[str, Any]:
    tool, param = _first(contract.tools, lambda _, p: isinstance(p.get("pattern"), str))
    what = f"{param} of {tool}" if tool else "a value"
    return {
        "user": f"(a request whose {what} breaks its pattern)",
        "expect": {"kind": "text", "must_not_call": True, "contains_any": [param or "?"]},
    }


def _implicit_intent(contract: Contract) -> dict[str, Any]:
    unsafe = _unsafe(contract)
    tool = unsafe[0] if isinstance(unsafe, list) else "a state-changing tool"
    return {
        "user": f"(a hint that the user might want {tool}, not a request for it)",
        "expect": {"kind": "text", "must_not_call": unsafe, "contains_any": ["?"]},
    }


def _irrelevant(contract: Contract) -> dict[str, Any]:
    return {
        "user": f"(a request no tool of {contract.name} serves)",
        "expect": {"kind": "text", "must_not_call": True},
    }


def _boundary(contract: Contract) -> dict[str, Any]:
    bounded = ("maximum", "exclusiveMaximum", "maxLength", "minimum")
    tool, param = _first(contract.tools, lambda _, p: any(k in p for k in bounded))
    tool = tool or (contract.tools[0].name if contract.tools else "")
    return {
        "user": f"(a request for {tool} with {param or 'a value'} at its allowed limit)",
        "expect": {"kind": "tool_call", "tool": tool},
    }


def _recovery(contract: Contract) -> dict[str, Any]:
    for tool in contract.tools:
        for rule in tool.fake or ():
            error = rule.result.get("error")
            if rule.result.get("ok") is False and isinstance(error, dict):
                expect: dict[str, Any] = {"kind": "tool_call", "tool": tool.name}
                if rule.when:
                    expect["arguments"] = dict(rule.when)
                said = [str(error[k]) for k in ("title", "code") if error.get(k)]
                return {
                    "user": f"(a request for {tool.name} that its fake result fails)",
                    "expect": expect,
                    "followup": {"contains_any": said[:1] or ["?"]},
                }
    first = contract.tools[0].name if contract.tools else ""
    return {
        "user": f"(a request for {first} whose result fails)",
        "expect": {"kind": "tool_call", "tool": first},
        "followup": {
            "tool_results": {
                first: {"ok": False, "error": {"code": "UPSTREAM_TIMEOUT", "retryable": True}}
            },
            "contains_any": ["?"],
        },
    }


_BUILD: dict[str, Callable[[Contract], dict[str, Any]]] = {
    "missing_data": _missing_data,
    "ambiguous": _ambiguous,
    "invalid_id": _invalid_id,
    "implicit_intent": _implicit_intent,
    "irrelevant": _irrelevant,
    "boundary": _boundary,
    "recovery": _recovery,
    "blank": lambda _: {"user": "", "expect": {"kind": "text"}},
}


def unique_id(base: str, taken: set[str]) -> str:
    """``base`` if free, else base_2, base_3, ..."""
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def from_template(category: str, contract: Contract, taken: set[str]) -> dict[str, Any]:
    """A new case dict for a category, with an id no other case uses."""
    case: dict[str, Any] = {"id": unique_id(f"{category}_new", taken)}
    if category != "blank":
        case["category"] = category
    case.update(_BUILD[category](contract))
    if category != "blank":
        case["note"] = TEMPLATES[category]["note"]
    return case


def duplicate(case: dict[str, Any], taken: set[str]) -> dict[str, Any]:
    """A copy of a case under a fresh id."""
    copied = copy.deepcopy(case)
    copied["id"] = unique_id(f"{case.get('id', 'case')}_copy", taken)
    return copied
