"""Values a source may send that a contract cannot hold faithfully: integers beyond 64
bits (the hash and every JSON writer here refuse them), NaN and the infinities (not
JSON: written out they would become null), and nesting deeper than the stand's JSON
reader and validator go. Each is one line naming its path, never a traceback."""

from __future__ import annotations

import math
from typing import Any

from toolstand.util.problems import json_path

Parts = tuple[str | int, ...]
# JSON containers inside one tool; orjson stops at 255 and jsonschema's recursion before
MAX_DEPTH = 128
_INT64 = (-(2**63), 2**64 - 1)


def value_problem(value: Any, parts: Parts = ()) -> tuple[str, str] | None:
    """(path, why) of the first value a contract cannot hold, or None."""
    stack: list[tuple[Any, Parts]] = [(value, parts)]
    while stack:
        node, at = stack.pop()
        if len(at) - len(parts) > MAX_DEPTH:
            return json_path(
                at
            ), f"nested deeper than {MAX_DEPTH} levels; toolstand reads no deeper"
        if isinstance(node, bool):
            continue
        if isinstance(node, int) and not _INT64[0] <= node <= _INT64[1]:
            return json_path(at), (
                f"{node} is beyond 64 bits, which a contract cannot hold; "
                "write it as a float (1e21) if that is what it means"
            )
        if isinstance(node, float) and not math.isfinite(node):
            spelled = "NaN" if math.isnan(node) else ("Infinity" if node > 0 else "-Infinity")
            return json_path(at), f"{spelled} is not a JSON number"
        if isinstance(node, dict):
            stack += [(v, (*at, str(k))) for k, v in reversed(node.items())]
        elif isinstance(node, list):
            stack += [(v, (*at, i)) for i, v in reversed(list(enumerate(node)))]
    return None
