"""BFCL's questions and possible answers as toolstand cases (`toolstand import bfcl`).

One case per BFCL entry: the case ``id`` is BFCL's id, the question its ``messages``, the
entry's functions its own ``tools`` (bfcl_schema), the possible answer its expectation:

- per parameter the acceptable values (``accept``); ``""`` in BFCL's list means the
  parameter may be left out (``may_omit``); a nested dict answer (each key with its own
  list) is expanded into the concrete dicts it accepts;
- the parallel categories: several expected calls, in any order;
- irrelevance: ``must_not_call: true``; live_relevance: at least one call, any arguments.

BFCL's questions may open with a system message; a case holds user and assistant turns
only, so the system text is put before the first user message (said in the README).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from toolstand.importers.bfcl_schema import (
    DEFAULT_MEMBER,
    marked_count,
    schema_type,
    to_tool,
    wire_name,
    wire_names,
)
from toolstand.importers.bfcl_source import CATEGORIES, REFUSED, BfclSource
from toolstand.importers.build import write_new
from toolstand.spec.cases import Case
from toolstand.spec.contract import ToolSpec
from toolstand.util.problems import LoadError, Problem

PARALLEL = frozenset({"parallel", "parallel_multiple", "live_parallel", "live_parallel_multiple"})
NO_CALL = frozenset({"irrelevance", "live_irrelevance"})
ANY_CALL = frozenset({"live_relevance"})
# a nested answer expands into at most this many concrete values (BFCL's largest: 4)
MAX_EXPANSION = 256


@dataclass
class Imported:
    """What one import wrote, for the command's summary."""

    out: Path
    version: str
    counts: dict[str, int] = field(default_factory=dict)
    renamed: int = 0
    nullable: int = 0  # parameters whose default None made them take null
    default_member: int = 0  # parameters that take their declared default outside the schema


def check_categories(names: list[str] | None) -> list[str]:
    """The categories to import (all eleven by default); refused ones name why."""
    if not names:
        return list(CATEGORIES)
    problems = []
    for name in names:
        if name in REFUSED:
            problems.append(
                Problem("--category", None, "$", f"{name}: not imported: {REFUSED[name]}")
            )
        elif name not in CATEGORIES:
            allowed = ", ".join(CATEGORIES)
            problems.append(
                Problem("--category", None, "$", f"unknown {name!r}; allowed: {allowed}")
            )
    if problems:
        raise LoadError(problems)
    return list(dict.fromkeys(names))


def messages(question: Any) -> list[dict[str, str]]:
    """BFCL's first (only) turn as user/assistant messages, a system text put before
    the first user message."""
    turn = question[0] if isinstance(question, list) and question else []
    if not isinstance(turn, list) or not all(isinstance(m, dict) for m in turn):
        raise ValueError("question: a turn is a list of {role, content} objects")
    system = [str(m["content"]) for m in turn if m.get("role") == "system"]
    out = [
        {"role": m["role"], "content": str(m.get("content") or "")}
        for m in turn
        if m.get("role") in ("user", "assistant")
    ]
    if system:
        first = next((m for m in out if m["role"] == "user"), None)
        if first is not None:
            first["content"] = "\n\n".join([*(s.strip() for s in system), first["content"]])
    return out


def _expand(value: Any) -> list[Any]:
    """A nested BFCL answer value as the concrete values it accepts: a dict whose every
    key lists alternatives (``""``: the key may be absent) becomes each combination; a
    list of such dicts, each combination of its items. Anything else is itself."""
    if isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
        keys = list(value)
        options = [[*_concrete(value[k])] for k in keys]
        out: list[Any] = []
        for combo in itertools.product(*options):
            out.append({k: v for k, v in zip(keys, combo, strict=True) if v is not _OMIT})
            if len(out) >= MAX_EXPANSION:
                break
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        lists: list[Any] = []
        for items in itertools.product(*(_expand(v) for v in value)):
            lists.append(list(items))
            if len(lists) >= MAX_EXPANSION:
                break
        return lists
    return [value]


_OMIT = object()


def _concrete(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        out += [_OMIT] if v == "" else _expand(v)
    return out


def expected_call(name: str, params: dict[str, list[Any]], tool: ToolSpec | None) -> dict[str, Any]:
    """One BFCL ground-truth call as an expected call with accept/may_omit."""
    accept: dict[str, list[Any]] = {}
    may_omit: list[str] = []
    for param, values in params.items():
        kept = [v for v in values if v != ""]
        if len(kept) < len(values):
            may_omit.append(param)
            if tool is not None and param not in (tool.parameters.get("properties") or {}):
                continue  # BFCL refuses a parameter its function does not declare
        nested = tool is not None and schema_type(tool, param) in ("object", "array")
        expanded = [x for v in kept for x in (_expand(v) if nested else [v])]
        if expanded:
            accept[param] = list({orjson.dumps(x): x for x in expanded}.values())
    wire = tool.name if tool is not None else wire_name(name)
    return {"tool": wire, "accept": accept, "may_omit": may_omit}


def _truth_calls(truth: Any) -> list[tuple[str, dict[str, list[Any]]]]:
    """BFCL's ground truth as (function, {parameter: acceptable values}) pairs; a
    ValueError when it has another shape (a string of values would be read as letters)."""
    if not isinstance(truth, list | None):
        raise ValueError("ground_truth: a list of {function: {parameter: [values]}}")
    out = []
    for item in truth or []:
        if not isinstance(item, dict):
            raise ValueError("ground_truth: each item is {function: {parameter: [values]}}")
        for name, params in item.items():
            if not isinstance(params, dict) or not all(
                isinstance(v, list) for v in params.values()
            ):
                raise ValueError(f"ground_truth: {name}: each parameter lists its values")
            out.append((name, params))
    return out


def expectation(
    category: str, truth: list[dict[str, Any]] | None, tools: list[ToolSpec]
) -> dict[str, Any]:
    """The case's ``expect`` for one entry of ``category``."""
    if category in NO_CALL:
        return {"kind": "text", "must_not_call": True}
    if category in ANY_CALL:
        return {"kind": "tool_call"}
    by_name = {t.bfcl_name or t.name: t for t in tools}
    calls = [expected_call(n, p, by_name.get(n)) for n, p in _truth_calls(truth)]
    if category in PARALLEL or len(calls) != 1:
        return {"kind": "tool_call", "calls": calls, "order": "any"}
    return {"kind": "tool_call", **calls[0]}


def to_case(
    category: str, entry: dict[str, Any], truth: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """One BFCL entry as a case line's object, validated as a Case."""
    functions = entry.get("function") or []
    names = wire_names(
        [f["name"] for f in functions if isinstance(f, dict) and isinstance(f.get("name"), str)]
    )
    tools = [
        to_tool(f, names.get(str(f.get("name"))) if isinstance(f, dict) else None)
        for f in functions
    ]
    data = {
        "id": entry["id"],
        "category": category,
        "messages": messages(entry.get("question")),
        "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools],
        "expect": expectation(category, truth, tools),
    }
    Case.model_validate(data)
    return data


def import_category(source: BfclSource, category: str) -> list[dict[str, Any]]:
    """Every entry of one category as a case; a LoadError names the entry that fails."""
    name = f"BFCL_v4_{category}.json"
    entries = source.entries(name)
    if entries is None:
        raise LoadError([Problem(source.label, None, "$", f"no {name} in this source")])
    answers: dict[str, Any] = {}
    if category not in NO_CALL | ANY_CALL:
        found = source.entries(f"possible_answer/{name}")
        if found is None:
            raise LoadError([Problem(source.label, None, "$", f"no possible_answer/{name}")])
        answers = {a["id"]: a.get("ground_truth") for _, a in found}
    cases = []
    where = f"{source.label}: {name}"
    first: dict[str, int] = {}
    for number, entry in entries:
        seen = first.setdefault(entry["id"], number)
        if seen != number:
            message = f"duplicate id {entry['id']!r} (first on line {seen})"
            raise LoadError([Problem(where, number, "$.id", message)])
        try:
            cases.append(to_case(category, entry, answers.get(entry["id"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise LoadError([Problem(where, number, "$", f"{entry['id']}: {exc}")]) from None
    return cases


def config_for(contract: str) -> dict[str, Any]:
    """The config an import writes: the careful simulator, every category, mode auto."""
    return {
        "runs": [
            {"provider": "sim", "model": "sim-careful", "api": "openai-chat", "base_url": "sim"}
        ],
        "tools": contract,
        "cases": ".",
        "modes": ["auto"],
        "repetitions": 1,
        "parallelism": 8,
    }


def write_import(source: BfclSource, out: Path, categories: list[str]) -> Imported:
    """Write ``out/<category>.jsonl``, ``out/contract.json`` and ``out/config.json``.

    Nothing on disk is overwritten: files that exist are refused before anything is
    written, and each file is written whole (a temporary name, then a rename)."""
    targets = [out / f"{c}.jsonl" for c in categories] + [
        out / "contract.json",
        out / "config.json",
    ]
    there = [str(t) for t in targets if t.exists()]
    if there:
        raise LoadError(
            [Problem(t, None, "$", "exists; import into a new folder or remove it") for t in there]
        )
    lines = {c: import_category(source, c) for c in categories}
    out.mkdir(parents=True, exist_ok=True)
    version = f"bfcl-{source.version}"
    result = Imported(out, source.version)
    for category, cases in lines.items():
        body = [orjson.dumps({"cases_version": version})] if source.version != "unknown" else []
        body += [orjson.dumps(c) for c in cases]
        write_new(out / f"{category}.jsonl", b"\n".join(body) + b"\n")
        result.counts[category] = len(cases)
        result.renamed += sum(1 for c in cases for t in c["tools"] if "x-bfcl-name" in t)
        params = [t["parameters"] for c in cases for t in c["tools"]]
        result.nullable += sum(marked_count(p) for p in params)
        result.default_member += sum(marked_count(p, DEFAULT_MEMBER) for p in params)
    # the cases bring their own tools: the contract only names what they came from
    contract = {"name": "bfcl", "version": source.version, "tools": []}
    write_new(out / "contract.json", orjson.dumps(contract, option=orjson.OPT_INDENT_2) + b"\n")
    config = config_for("contract.json")
    write_new(out / "config.json", orjson.dumps(config, option=orjson.OPT_INDENT_2) + b"\n")
    return result
