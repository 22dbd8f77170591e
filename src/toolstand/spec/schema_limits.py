"""The two shapes of schema that would send every later walk into unbounded recursion,
caught when a contract loads: nesting deeper than ``MAX_SCHEMA_DEPTH``, and a ``$ref``
cycle that never reaches a value.

A schema may be recursive (a tree whose ``children`` items ``$ref`` the tree): each
step of such a cycle moves to a part of the instance (a property, an item), so
validation ends with the data. A cycle made only of keywords that apply to the *same*
instance (``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``,
``dependentSchemas``) never ends: ``{"a": {"$ref": "#/properties/a"}}`` is one. Both
walks here are iterative, so they cannot themselves hit Python's recursion limit.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import orjson

# JSON levels (objects and arrays) within a tool's parameters. Provider request bodies
# wrap a schema in ~8 more levels, and the JSON encoder stops at 255; real tool schemas
# (MCP servers, BFCL, SDK models) stay under 20
MAX_SCHEMA_DEPTH = 100
# JSON levels within a model's call arguments: deeper is ``invalid_arguments`` sub-code
# ``depth`` (issue 31 H4). The attempt record wraps arguments in ~10 more levels, and
# the encoder stops at 255; a schema of MAX_SCHEMA_DEPTH levels describes fewer
MAX_ARGUMENT_DEPTH = 100

Parts = tuple[str | int, ...]
_SAME_INSTANCE_ONE = ("not", "if", "then", "else")
_SAME_INSTANCE_MANY = ("allOf", "anyOf", "oneOf")


def depth_problem(schema: Any, parts: Parts) -> tuple[Parts, str] | None:
    """Where ``schema`` first nests deeper than ``MAX_SCHEMA_DEPTH``, or None."""
    try:
        text = orjson.dumps(schema)
    except TypeError:  # not JSON data, or nested past orjson's own limit: walked
        text = None
    # no path can hold more objects and arrays than the whole schema does (a brace in a
    # string only adds to the count): most schemas hold fewer than the limit in all
    if text is not None and text.count(b"{") + text.count(b"[") <= MAX_SCHEMA_DEPTH:
        return None
    stack: list[tuple[Any, Parts, int]] = [(schema, parts, 1)]
    while stack:
        node, at, depth = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if depth > MAX_SCHEMA_DEPTH:
            return at, f"nested deeper than {MAX_SCHEMA_DEPTH} levels; flatten it or use $defs"
        items = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((v, (*at, k), depth + 1) for k, v in items)
    return None


def ref_cycle_problem(schema: dict[str, Any], parts: Parts) -> tuple[Parts, str] | None:
    """The first ``$ref`` cycle through same-instance keywords only, as (the path of the
    ``$ref`` that closes it, the cycle spelled as pointers), or None."""
    if not mentions(schema, b'"$ref"'):
        return None  # every edge but a ref's goes deeper: no ref, no cycle
    nodes: dict[str, Any] = {}
    _index(schema, "", nodes)
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in nodes:
        if start in state:
            continue
        path: list[str] = []
        stack: list[tuple[str, list[tuple[str, str | None]]]] = [(start, _edges(nodes, start))]
        state[start] = 1
        path.append(start)
        while stack:
            ptr, edges = stack[-1]
            if not edges:
                stack.pop()
                path.pop()
                state[ptr] = 2
                continue
            target, via_ref = edges.pop()
            if state.get(target) == 1:
                loop = [*path[path.index(target) :], target]
                shown = " → ".join("#" + p for p in loop)
                where = (*_parts_of(ptr), "$ref") if via_ref else _parts_of(ptr)
                return (
                    (*parts, *where),
                    f"$ref cycle that never reaches a value: {shown}",
                )
            if target not in state:
                state[target] = 1
                path.append(target)
                stack.append((target, _edges(nodes, target)))
    return None


def mentions(schema: Any, *keys: bytes) -> bool:
    """Whether any of ``keys`` (quoted, ``b'"$ref"'``) appears in ``schema``'s JSON: a
    key of that name anywhere in it makes it appear, so False means there is none.
    True for what is not JSON data, which the caller then walks."""
    try:
        text = orjson.dumps(schema)
    except TypeError:  # orjson's errors are TypeErrors
        return True
    return any(key in text for key in keys)


def _index(root: Any, ptr: str, nodes: dict[str, Any]) -> None:
    """Every subschema (object) by its JSON pointer, iteratively."""
    stack = [(root, ptr)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            nodes[at] = node
            for k, v in node.items():
                stack.append((v, f"{at}/{_escape(str(k))}"))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                stack.append((v, f"{at}/{i}"))


def _edges(nodes: dict[str, Any], ptr: str) -> list[tuple[str, str | None]]:
    """The subschemas applied to the same instance as ``ptr``'s, and through which
    keyword: ``$ref`` targets (local ones) and the in-place applicators."""
    node = nodes[ptr]
    out: list[tuple[str, str | None]] = []
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#") and not ref[1:2].isalpha():
        target = unquote(ref[1:])
        if target in nodes:
            out.append((target, ref))
    for key in _SAME_INSTANCE_ONE:
        if isinstance(node.get(key), dict):
            out.append((f"{ptr}/{key}", None))
    for key in _SAME_INSTANCE_MANY:
        subs = node.get(key)
        if isinstance(subs, list):
            out += [(f"{ptr}/{key}/{i}", None) for i, s in enumerate(subs) if isinstance(s, dict)]
    deps = node.get("dependentSchemas")
    if isinstance(deps, dict):
        out += [(f"{ptr}/dependentSchemas/{_escape(k)}", None) for k in deps]
    return [(t, r) for t, r in out if t in nodes]


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _parts_of(ptr: str) -> Parts:
    if not ptr:
        return ()
    out: list[str | int] = []
    for seg in ptr[1:].split("/"):
        seg = seg.replace("~1", "/").replace("~0", "~")
        out.append(int(seg) if seg.isdigit() else seg)
    return tuple(out)
