"""Re-import: a source's fresh tools merged with the user's work in the contract they
replace (``contract import --force`` over an existing contract).

The source owns each tool's name, description, parameters and ``x-mcp``; they are
refreshed. The user owns every other ``x-`` key of a tool (``x-fake``, ``x-sim``), every
``x-`` keyword inside its parameters (``x-normalize``) where that schema still exists,
and an effect that differs from the one the old source implied (an ``--effect``
override): they are kept. A tool gone from the source is dropped, and the summary says
so, with what of the user's went with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from toolstand.adapters.schema import LIST_KEYS, MAP_KEYS, ONE_KEYS
from toolstand.importers.mcp import effect_of
from toolstand.util.problems import Problem, json_path

Parts = tuple[str | int, ...]
# what a tool's source writes: never kept from the old file
SOURCE_KEYS = frozenset({"name", "description", "parameters", "effect", "x-mcp", "x-mcp-name"})


@dataclass
class Previous:
    """The contract a re-import replaces, as its file holds it (raw JSON)."""

    path: str
    tools: dict[str, dict[str, Any]]
    kind: str | None
    # the server's tools its import left out (--skip): left out again
    skipped: frozenset[str] = frozenset()

    def override(self, name: str) -> str | None:
        """The effect the user chose for ``name`` over what its source implied, or None."""
        old = self.tools.get(name)
        if old is None:
            return None
        implied = effect_of(old.get("x-mcp")) if self.kind == "mcp" else "execute"
        effect = old.get("effect", "read")
        return effect if effect != implied else None


def read_previous(path: Path) -> tuple[Previous | None, list[Problem]]:
    """The contract at ``path`` when there is one to merge with; a file that is not a
    contract is replaced, with a warning."""
    if not path.exists():
        return None, []
    try:
        data = orjson.loads(path.read_bytes())
        tools = {t["name"]: t for t in data["tools"] if isinstance(t.get("name"), str)}
        kind = (data.get("x-source") or {}).get("kind")
        skipped = frozenset(
            n for n in (data.get("x-source") or {}).get("skipped") or [] if isinstance(n, str)
        )
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        message = "was not a contract; replaced, nothing of it was kept"
        return None, [Problem(str(path), None, "$", message, "warning")]
    return Previous(str(path), tools, kind if isinstance(kind, str) else None, skipped), []


@dataclass
class Merged:
    """What a re-import did to each tool, for the summary."""

    kept: dict[str, list[str]] = field(default_factory=dict)
    changed: dict[str, list[str]] = field(default_factory=dict)
    unchanged: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    dropped: dict[str, list[str]] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"kept on {name}: {', '.join(what)}" for name, what in self.kept.items() if what]
        if self.changed:
            items = [f"{name} ({', '.join(what)})" for name, what in self.changed.items()]
            out.append(f"changed: {', '.join(items)}")
        if self.unchanged:
            few = len(self.unchanged) <= 6
            names = ", ".join(self.unchanged) if few else f"{len(self.unchanged)} tools"
            out.append(f"unchanged in the source: {names}")
        if self.added:
            out.append(f"added: {', '.join(self.added)}")
        for name, what in self.dropped.items():
            lost = f", and with it {', '.join(what)}" if what else ""
            out.append(f"dropped: {name} (gone from the source){lost}")
        out += [f"not kept: {what}" for what in self.lost]
        return out


def kept_overrides(
    previous: Previous | None, names: list[str], given: dict[str, str]
) -> dict[str, str]:
    """The old contract's effect overrides for tools still in the source, unless the
    command line names the tool again."""
    if previous is None:
        return {}
    out = {}
    for name in names:
        effect = previous.override(name)
        if effect is not None and name not in given:
            out[name] = effect
    return out


def merge(
    tools: list[dict[str, Any]], previous: Previous, overrides: dict[str, str]
) -> tuple[list[dict[str, Any]], Merged]:
    """``tools`` (fresh from the source, effects decided) with the user's keys put back."""
    merged = Merged()
    fresh = {t["name"] for t in tools}
    out = []
    for tool in tools:
        name = tool["name"]
        old = previous.tools.get(name)
        if old is None:
            merged.added.append(name)
            out.append(tool)
            continue
        kept: list[str] = []
        if name in overrides:
            implied = (
                "the source implies " + effect_of(tool.get("x-mcp")) if "x-mcp" in tool else ""
            )
            kept.append(f"effect {overrides[name]}" + (f" ({implied})" if implied else ""))
        new = dict(tool)
        for key, value in old.items():
            if key.startswith("x-") and key not in SOURCE_KEYS:
                new[key] = value
                kept.append(key)
        params, put, lost = _put_annotations(old.get("parameters"), tool["parameters"])
        new["parameters"] = params
        kept += [f"{key} at {where}" for where, key in put]
        merged.lost += [f"{key} at {name} {where} (that schema is gone)" for where, key in lost]
        changed = [k for k in ("description", "parameters", "x-mcp") if _differs(old, tool, k)]
        if changed:
            merged.changed[name] = changed
        else:
            merged.unchanged.append(name)
        merged.kept[name] = kept
        out.append(new)
    for name, old in previous.tools.items():
        if name not in fresh:
            mine = [k for k in old if k.startswith("x-") and k not in SOURCE_KEYS]
            merged.dropped[name] = mine
    return out, merged


def _differs(old: dict[str, Any], new: dict[str, Any], key: str) -> bool:
    a, b = old.get(key), new.get(key)
    if key == "parameters":
        a = _without_annotations(a)
    return bool(
        orjson.dumps(a, option=orjson.OPT_SORT_KEYS) != orjson.dumps(b, option=orjson.OPT_SORT_KEYS)
    )


def _annotations(node: Any, parts: Parts = ()) -> list[tuple[Parts, str, Any]]:
    """Every ``x-`` keyword of a schema (not a property named ``x-...``), with its path."""
    if not isinstance(node, dict):
        return []
    out = [(parts, k, v) for k, v in node.items() if isinstance(k, str) and k.startswith("x-")]
    for key, value in node.items():
        if key in MAP_KEYS and isinstance(value, dict):
            for name, sub in value.items():
                out += _annotations(sub, (*parts, key, name))
        elif key in ONE_KEYS:
            out += _annotations(value, (*parts, key))
        elif key in LIST_KEYS and isinstance(value, list):
            for i, sub in enumerate(value):
                out += _annotations(sub, (*parts, key, i))
    return out


def _without_annotations(schema: Any) -> Any:
    out = orjson.loads(orjson.dumps(schema))
    for parts, key, _ in _annotations(schema):
        node = _at(out, parts)
        if isinstance(node, dict):
            node.pop(key, None)
    return out


def _at(node: Any, parts: Parts) -> Any:
    for part in parts:
        keyed = isinstance(node, dict) and isinstance(part, str) and part in node
        if not keyed and not (
            isinstance(node, list) and isinstance(part, int) and part < len(node)
        ):
            return None
        node = node[part]
    return node


def _put_annotations(
    old: Any, new: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, str]], list[tuple[str, str]]]:
    """``new`` with the old schema's ``x-`` keywords put back where the same schema
    still is; (path, key) of each put back and of each whose schema is gone."""
    out = orjson.loads(orjson.dumps(new))
    put: list[tuple[str, str]] = []
    lost: list[tuple[str, str]] = []
    for parts, key, value in _annotations(old):
        node = _at(out, parts)
        if not isinstance(node, dict):
            lost.append((json_path(parts), key))
        elif key not in node:
            node[key] = value
            put.append((json_path(parts), key))
    return out, put, lost
