"""The providers' tool JSON, as their SDKs take it, read into toolstand's tool form.

Accepted: a JSON array of tools, or an object holding one under ``tools`` (a request
body). OpenAI: chat's ``{"type": "function", "function": {...}}`` and Responses' flat
``{"type": "function", "name", ...}``. Anthropic: ``{"name", "description",
"input_schema"}``. Gemini: Tool objects with ``functionDeclarations`` (or a bare list
of declarations), each with ``parameters`` (the OpenAPI subset, upper-case types) or
``parametersJsonSchema``. Parameter schemas are kept as given; whatever cannot be kept
(a per-tool ``strict``, Anthropic's ``cache_control``, Gemini's ``response``) is a
warning naming its field, never a silent drop.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolstand.importers.gemini_schema import from_gemini_schema
from toolstand.importers.values import value_problem
from toolstand.util.jsonpos import line_index, line_of
from toolstand.util.problems import LoadError, Problem, json_document, json_path, read_file

Parts = tuple[str | int, ...]
# an imported tool before its effect is known: name, description, parameters (+ x-mcp)
RawTool = dict[str, Any]

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
# what a contract's tool name may be (contract.ToolSpec), checked against the source
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def name_problem(name: Any, read: list[RawTool]) -> str | None:
    """Why ``name`` cannot name a contract's tool beside the tools ``read`` so far, or None."""
    if not isinstance(name, str) or not name:
        return "a tool needs a non-empty string 'name'"
    if not NAME.match(name):
        return f"{name!r} cannot name a tool here: letters, digits, _ and -, at most 64"
    if any(tool["name"] == name for tool in read):
        return f"duplicate tool name {name!r}: a contract's tools have distinct names"
    return None


@dataclass
class SourceTools:
    """The tools read from a source, with the warnings and errors met on the way."""

    tools: list[RawTool] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    errors: list[Problem] = field(default_factory=list)
    # what the contract records in x-source besides its hash (kind, server ...)
    source: dict[str, Any] = field(default_factory=dict)
    # what the import summary says besides (tools renamed, skipped)
    notes: list[str] = field(default_factory=list)


class _Reader:
    """Collects problems against one source file, with the line of each JSON path."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.index = line_index(text)
        self.out = SourceTools()

    def problem(self, parts: Parts, message: str, severity: str = "error") -> None:
        p = Problem(self.file, line_of(self.index, parts), json_path(parts), message, severity)
        (self.out.errors if severity == "error" else self.out.warnings).append(p)

    def warn(self, parts: Parts, message: str) -> None:
        self.problem(parts, message, "warning")

    def dropped(self, item: dict[str, Any], parts: Parts, kept: set[str]) -> None:
        for key in item:
            if key not in kept:
                self.warn((*parts, key), f"'{key}' has no place in a contract; not imported")

    def add(self, parts: Parts, name: Any, description: Any, params: Any, where: str) -> None:
        wrong = name_problem(name, self.out.tools)
        if wrong is not None:
            self.problem((*parts, "name"), wrong)
            return
        if description is None:
            self.warn(parts, f"tool {name!r} has no description; imported as an empty one")
            description = ""
        elif not isinstance(description, str):
            self.problem((*parts, "description"), "must be a string")
            return
        if params is None:
            self.warn(parts, f"tool {name!r} has no {where}; imported as an object with none")
            params = dict(EMPTY_PARAMETERS)
        elif not isinstance(params, dict):
            self.problem((*parts, where), "must be a JSON Schema object")
            return
        self.out.tools.append({"name": name, "description": description, "parameters": params})


def _openai(r: _Reader, item: dict[str, Any], parts: Parts) -> None:
    if item.get("type", "function") != "function":
        r.warn((*parts, "type"), f"a {item.get('type')!r} tool is not a function; skipped")
        return
    if isinstance(item.get("function"), dict):  # chat completions
        r.dropped(item, parts, {"type", "function"})
        fn, parts = item["function"], (*parts, "function")
    else:  # responses: flat
        fn = item
    r.dropped(fn, parts, {"type", "name", "description", "parameters", "strict"})
    if fn.get("strict") is not None:
        r.warn(
            (*parts, "strict"),
            "strict is a run option in toolstand (options.strict), not part of a tool; "
            "not imported",
        )
    r.add(parts, fn.get("name"), fn.get("description"), fn.get("parameters"), "parameters")


def _anthropic(r: _Reader, item: dict[str, Any], parts: Parts) -> None:
    kind = item.get("type", "custom")
    if kind != "custom":
        r.warn((*parts, "type"), f"a {kind!r} tool is a server tool, not yours; skipped")
        return
    r.dropped(item, parts, {"type", "name", "description", "input_schema"})
    r.add(
        parts, item.get("name"), item.get("description"), item.get("input_schema"), "input_schema"
    )


_DECLARATIONS_KEYS = ("functionDeclarations", "function_declarations")


def _gemini(r: _Reader, item: dict[str, Any], parts: Parts) -> None:
    key = next((k for k in _DECLARATIONS_KEYS if k in item), _DECLARATIONS_KEYS[-1])
    decls = item.get(key)
    if decls is None and "name" in item:  # a bare declaration
        _gemini_declaration(r, item, parts)
        return
    if not isinstance(decls, list):
        r.warn(parts, "a Tool without functionDeclarations (a built-in tool); skipped")
        return
    r.dropped(item, parts, {key})
    for i, decl in enumerate(decls):
        if isinstance(decl, dict):
            _gemini_declaration(r, decl, (*parts, key, i))
        else:
            r.problem((*parts, key, i), "a function declaration is an object")


_JSON_SCHEMA_KEYS = ("parametersJsonSchema", "parameters_json_schema")


def _gemini_declaration(r: _Reader, decl: dict[str, Any], parts: Parts) -> None:
    json_key = next((k for k in _JSON_SCHEMA_KEYS if k in decl), None)
    r.dropped(decl, parts, {"name", "description", "parameters", *_JSON_SCHEMA_KEYS})
    if json_key is not None and "parameters" in decl:
        r.problem(parts, f"'parameters' and '{json_key}' exclude each other: give one")
        return
    if json_key is not None:
        params = decl[json_key]
        where = json_key
    else:
        params, notes = from_gemini_schema(decl.get("parameters"), (*parts, "parameters"))
        where = "parameters"
        for at, message in notes:
            r.warn(at, message)
    r.add(parts, decl.get("name"), decl.get("description"), params, where)


_READERS: dict[str, Callable[[_Reader, dict[str, Any], Parts], None]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "gemini": _gemini,
}


def parse_provider_tools(text: str | bytes, api: str, file: str) -> SourceTools:
    """The tools of one provider's tool JSON; problems name the source's line and path."""
    if api not in _READERS:
        raise LoadError(
            [Problem("--from", None, "$", f"unknown API {api!r}; allowed: {', '.join(_READERS)}")]
        )
    raw, data = json_document(text, file)
    r = _Reader(file, raw)
    odd = value_problem(_faithful(raw, data), ())
    if odd is not None:
        path, message = odd
        raise LoadError([Problem(file, None, path, message)])
    base: Parts = ()
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data, base = data["tools"], ("tools",)
    elif isinstance(data, dict) and api == "gemini":
        data = [data]  # one Tool object
    if not isinstance(data, list):
        r.problem((), "expected a JSON array of tools, or an object with 'tools'")
        raise LoadError(r.out.errors)
    for i, item in enumerate(data):
        if isinstance(item, dict):
            _READERS[api](r, item, (*base, i))
        else:
            r.problem((*base, i), "a tool is an object")
    r.out.source = {"kind": api}
    return r.out


def _faithful(raw: str, data: Any) -> Any:
    """``data`` with integers as the text writes them: orjson reads one beyond 64 bits as
    a float, without a word. Only text with such a run of digits pays for a second read."""
    if not re.search(r"\d{19,}", raw):
        return data
    import json

    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return data


def read_provider_tools(path: str | Path, api: str) -> SourceTools:
    return parse_provider_tools(read_file(path), api, str(path))
