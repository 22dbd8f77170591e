"""How deep JSON nests, checked without recursion (issue 31 H4: orjson stops encoding at
255 levels, so a value deeper than that cannot be recorded)."""

from __future__ import annotations

from typing import Any


def nests_deeper(value: Any, limit: int, text: str | bytes) -> bool:
    """Whether ``value`` (parsed from ``text``) has more than ``limit`` levels of objects
    and arrays. Text with no more brackets than the limit cannot: the walk is for the
    rest (bytes.count is far cheaper than any walk)."""
    brackets = (
        text.count("{") + text.count("[")
        if isinstance(text, str)
        else (text.count(b"{") + text.count(b"["))
    )
    if brackets <= limit:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                return True
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return False
