"""What a provider refuses in a contract that toolstand itself accepts: each a warning
for `toolstand check`, since imported tools come from servers written for other
clients. Property names outside Anthropic's pattern (a 400 there), tool names Gemini
refuses (its names start with a letter or ``_``), and descriptions long enough that a
provider may refuse or cut them, and every request pays for them."""

from __future__ import annotations

import re
from collections.abc import Callable

from toolstand.spec.contract import Contract

Parts = tuple[str | int, ...]
# Anthropic's input_schema property keys (its 400 names the pattern)
ANTHROPIC_PROPERTY = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
# Gemini's FunctionDeclaration.name: it must start with a letter or an underscore
GEMINI_NAME_START = re.compile(r"^[A-Za-z_]")
LONG_DESCRIPTION = 10_000
_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def portability_warnings(contract: Contract, warn: Callable[[Parts, str], None]) -> None:
    """``warn(path, message)`` for each name or description a provider refuses."""
    for ti, tool in enumerate(contract.tools):
        if not GEMINI_NAME_START.match(tool.name):
            warn(("tools", ti, "name"), "gemini: a function name starts with a letter or _ "
                 f"({tool.name!r} would be refused)")  # fmt: skip
        if len(tool.description) > LONG_DESCRIPTION:
            warn(("tools", ti, "description"), f"{len(tool.description)} characters: a provider "
                 "may refuse or cut it, and every request pays for it")  # fmt: skip
        _properties(tool.parameters, ("tools", ti, "parameters"), warn)


def _properties(node: object, parts: Parts, warn: Callable[[Parts, str], None]) -> None:
    if not isinstance(node, dict):
        return
    for key in _MAPS:
        value = node.get(key)
        if not isinstance(value, dict):
            continue
        for name, sub in value.items():
            if key == "properties" and not ANTHROPIC_PROPERTY.match(name):
                warn((*parts, key, name), "anthropic: a property name must match "
                     f"{ANTHROPIC_PROPERTY.pattern} (a 400 there)")  # fmt: skip
            _properties(sub, (*parts, key, name), warn)
    for key in _ONE:
        _properties(node.get(key), (*parts, key), warn)
    for key in _LISTS:
        value = node.get(key)
        if isinstance(value, list):
            for i, sub in enumerate(value):
                _properties(sub, (*parts, key, i), warn)
