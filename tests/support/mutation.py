"""Mutations of real-shaped JSON for the fuzz tests: take a recorded body (or a case,
contract or config), then delete keys, change types, truncate strings, inject nulls and
nest values in lists, at nodes hypothesis picks.

Bodies stay what a wire can deliver: every value survives ``orjson`` (integers within
64 bits, finite floats, string keys).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

Path = tuple[str | int, ...]

# values of every JSON type, including the awkward ones a server can send
ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63 - 1,
    -(2**63),
    1.5,
    -0.0,
    1e308,
    "",
    " ",
    "x",
    "{",
    "{}",
    "null",
    '{"order_id": ',
    "ORD-123456",
    "tool_use",
    "function_call",
    "MAX_TOKENS",
    "length",
    "incomplete",
    "failed",
    "rate_limit_exceeded",
    "9" * 400 + "s",
    [],
    {},
    [None],
    {"": None},
]
ODD_KEYS = ["", "type", "error", "id", "name", "code", "details", "violations", "retryDelay"]

OPS = (
    "delete",
    "retype",
    "truncate",
    "null",
    "nest_list",
    "nest_dict",
    "duplicate",
    "rename",
    "add_key",
)


def paths(node: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every node's path, the root included."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from paths(value, (*prefix, i))


def get_at(root: Any, path: Path) -> Any:
    node = root
    for part in path:
        node = node[part]
    return node


def set_at(root: Any, path: Path, value: Any) -> Any:
    """``root`` with the node at ``path`` replaced (in place below the root)."""
    if not path:
        return value
    parent = get_at(root, path[:-1])
    parent[path[-1]] = value
    return root


def mutate_once(data: st.DataObject, root: Any) -> Any:
    # below the root: arbitrary top-level values are fuzzed in tests/adapters already
    inner = list(paths(root))[1:]
    if not inner:
        return copy.deepcopy(data.draw(st.sampled_from(ODD_VALUES)))
    path = data.draw(st.sampled_from(inner), label="path")
    op = data.draw(st.sampled_from(OPS), label="op")
    node = get_at(root, path)
    if op == "delete":
        parent = get_at(root, path[:-1])
        del parent[path[-1]]
        return root
    if op == "retype":
        return set_at(root, path, copy.deepcopy(data.draw(st.sampled_from(ODD_VALUES))))
    if op == "truncate":
        if isinstance(node, str):
            cut = data.draw(st.integers(0, max(0, len(node) - 1)), label="cut")
            return set_at(root, path, node[:cut])
        if isinstance(node, list) and node:
            return set_at(root, path, node[: data.draw(st.integers(0, len(node) - 1))])
        return set_at(root, path, "")
    if op == "null":
        return set_at(root, path, None)
    if op == "nest_list":
        return set_at(root, path, [node])
    if op == "nest_dict":
        return set_at(root, path, {"value": node})
    if op == "duplicate":
        if isinstance(node, list) and node:
            return set_at(root, path, [*node, copy.deepcopy(node[-1])])
        return set_at(root, path, [node, copy.deepcopy(node)])
    if op == "rename":
        if path and isinstance(path[-1], str):
            parent = get_at(root, path[:-1])
            new = data.draw(st.sampled_from([path[-1].upper(), path[-1] + "_", *ODD_KEYS]))
            value = parent.pop(path[-1])
            parent[new] = value
        return root
    # add_key
    if isinstance(node, dict):
        key = data.draw(st.sampled_from(ODD_KEYS), label="key")
        node[key] = copy.deepcopy(data.draw(st.sampled_from(ODD_VALUES)))
    return root


def mutate(data: st.DataObject, value: Any, max_mutations: int = 4) -> Any:
    """A copy of ``value`` with one to ``max_mutations`` mutations applied."""
    root = copy.deepcopy(value)
    for _ in range(data.draw(st.integers(1, max_mutations), label="mutations")):
        root = mutate_once(data, root)
    return root
