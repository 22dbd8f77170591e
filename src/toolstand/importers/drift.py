"""Drift between a contract and the live source of its tools, and the version-bump rule.

A difference is a tool added or removed, a description or parameter schema changed,
or an MCP annotation whose change moves the effect it implies. Each is one line naming
the tool and the JSON path in the contract. Private ``x-`` keywords inside parameters
(``x-normalize``) are the stand's own and are not compared: the adapters never send them;
a property *named* ``x-...`` is sent, and compared. Values are compared with their JSON
types (``1``, ``1.0`` and ``true`` differ); ``required``, ``type``, ``enum`` and the
members of ``anyOf``/``oneOf``/``allOf`` are sets, so a new order is no drift.

The rule (seed 001, now against the source of truth): a contract that differs from its
source fails unless its version moved on from the one it was recorded at — the lock's
version when ``check --lock`` recorded the source, else the version it was imported at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolstand.adapters.schema import MAP_KEYS, strip_private
from toolstand.importers.mcp import effect_of
from toolstand.importers.providers import RawTool
from toolstand.spec.contract import DATA_KEYWORDS, Contract
from toolstand.util.printable import visible
from toolstand.util.problems import json_path

Parts = tuple[str | int, ...]
_MISSING = object()


@dataclass(frozen=True)
class Drift:
    tool: str
    path: str
    message: str

    def __str__(self) -> str:
        return visible(f"{self.tool}: {self.path}: {self.message}")


def _show(value: Any) -> str:
    if value is _MISSING:
        return "absent"
    import orjson

    text = orjson.dumps(value).decode()
    return text if len(text) <= 60 else text[:57] + "..."


def _public(name: str, schema: dict[str, Any]) -> Any:
    """The schema as the adapters send it: without the stand's private ``x-`` keywords
    (``x-normalize``), at any depth; a property *named* ``x-...`` is kept."""
    return strip_private(name, schema)[0]


# keywords whose list value means a set: reordering it changes nothing the judge checks
# (nor what a schema accepts). Every other list (prefixItems, default, examples, const)
# is compared in order.
SET_KEYWORDS = frozenset({"required", "type", "enum", "anyOf", "oneOf", "allOf"})


def _same(a: Any, b: Any) -> bool:
    """JSON equality that tells 1 from 1.0 from true, and [0, 1] from [false, true]."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _key(value: Any) -> str:
    """A value's canonical text, with its types (1 and 1.0 differ)."""
    import orjson

    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _as_set(key: Any, old: list[Any], new: list[Any]) -> bool:
    """Whether two lists under ``key`` hold the same members in another order."""
    return key in SET_KEYWORDS and sorted(map(_key, old)) == sorted(map(_key, new))


def _diff(
    old: Any, new: Any, parts: Parts, data: bool = False, keyword: str | None = None
) -> list[tuple[Parts, str]]:
    """Each path where two JSON values differ, deepest first found. ``data``: inside a
    data keyword (``enum``, ``default`` ...); ``keyword``: the schema keyword whose value
    these are (None for a property's name, or data)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[Parts, str]] = []
        for key in [*old, *(k for k in new if k not in old)]:
            a, b = old.get(key, _MISSING), new.get(key, _MISSING)
            if a is _MISSING:
                out.append(((*parts, key), f"added in the source: {_show(b)}"))
            elif b is _MISSING:
                out.append(((*parts, key), f"removed from the source (was {_show(a)})"))
            else:
                at_keyword = not data and keyword not in MAP_KEYS
                inner = data or (at_keyword and key in DATA_KEYWORDS)
                out += _diff(a, b, (*parts, key), inner, key if at_keyword else None)
        return out
    if isinstance(old, list) and isinstance(new, list):
        if _as_set(keyword, old, new):
            return []
        if len(old) == len(new) and keyword not in ("required", "type", "enum"):
            return [d for i, (a, b) in enumerate(zip(old, new, strict=True))
                    for d in _diff(a, b, (*parts, i), data)]  # fmt: skip
    if _same(old, new):
        return []
    return [(parts, f"changed: {_show(old)} → {_show(new)}")]


def _implied(tool_effect: str, annotations: dict[str, Any] | None) -> str:
    """The effect the contract's side implies: from its x-mcp when it has one."""
    if annotations is not None:
        return effect_of(annotations)
    return "read" if tool_effect == "read" else "execute"


def compare(contract: Contract, source: list[RawTool], *, annotated: bool) -> list[Drift]:
    """Every difference between the contract and the source's tools, contract order first.

    ``annotated``: the source is an MCP server, so effects are compared too."""
    live = {t["name"]: t for t in source}
    out: list[Drift] = []
    for i, spec in enumerate(contract.tools):
        base: Parts = ("tools", i)
        tool = live.get(spec.name)
        if tool is None:
            out.append(Drift(spec.name, json_path(base), "removed from the source"))
            continue
        changes = _diff(spec.description, tool["description"], (*base, "description"))
        changes += _diff(
            _public(spec.name, spec.parameters),
            _public(spec.name, tool["parameters"]),
            (*base, "parameters"),
        )
        out += [Drift(spec.name, json_path(parts), message) for parts, message in changes]
        if annotated:
            out += _effect_drift(spec.name, spec.effect, spec.mcp, tool.get("x-mcp"), base)
    known = set(contract.by_name)
    for tool in source:
        if tool["name"] not in known:
            out.append(Drift(tool["name"], "$.tools", "added in the source (not in the contract)"))
    return out


def _effect_drift(
    name: str, effect: str, was: dict[str, Any] | None, now: dict[str, Any] | None, base: Parts
) -> list[Drift]:
    before, after = _implied(effect, was), effect_of(now)
    if before == after:
        return []
    hint_was = (was or {}).get("readOnlyHint", _MISSING)
    hint_now = (now or {}).get("readOnlyHint", _MISSING)
    return [
        Drift(
            name,
            json_path((*base, "x-mcp", "readOnlyHint")),
            f"changed: {_show(hint_was)} → {_show(hint_now)}; the effect it implies moves "
            f"{before} → {after}",
        )
    ]


def recorded_version(contract: Contract, lock: dict[str, Any] | None) -> str | None:
    """The version the contract last matched its source at: the lock's, when it recorded
    a source, else the one it was imported at; None when neither is known."""
    if lock is not None and lock.get("source_hash") and isinstance(lock.get("version"), str):
        return str(lock["version"])
    version = (contract.source or {}).get("imported_version")
    return version if isinstance(version, str) else None


def bumped(contract: Contract, lock: dict[str, Any] | None) -> bool:
    """Whether the contract's version moved on from the one recorded with its source."""
    was = recorded_version(contract, lock)
    return was is not None and was != contract.version


@dataclass(frozen=True)
class Gate:
    """The drift verdict: pass or fail, and the sentence that says why."""

    passed: bool
    reason: str


def gate(
    contract: Contract, diffs: list[Drift], lock: dict[str, Any] | None, live_hash: str
) -> Gate:
    """Pass when the contract matches its source, when its version was bumped since the
    source was recorded, or when ``check --lock`` accepted this very source at this very
    contract; fail otherwise."""
    if not diffs:
        return Gate(True, "the contract matches its source")
    was = recorded_version(contract, lock)
    n = f"{len(diffs)} difference{'' if len(diffs) == 1 else 's'}"
    if bumped(contract, lock):
        return Gate(
            True,
            f"{n}, accepted by the version bump {was!r} → "
            f"{contract.version!r}; re-import to bring the contract up to date",
        )
    accepted = lock is not None and (
        lock.get("source_hash") == live_hash
        and lock.get("hash") == contract.hash
        and lock.get("version") == contract.version
    )
    if accepted:
        return Gate(True, f"{n}, recorded by check --lock at this version")
    since = (
        f" since {was!r}"
        if was is not None
        else " (no version was recorded with its source: import the contract, or "
        "record it with check --lock once it matches)"
    )
    return Gate(
        False,
        f"{n} and version {contract.version!r} was not bumped{since}",
    )
