"""The canonical tool contract: ToolSpec, loading, meta-validation and the contract hash.

A ``$ref`` must point inside its tool's schema (``#...``): toolstand never fetches a
schema, so what the hash covers is all the judge validates against. A remote ref is a
load error, and every validator is built on a registry that refuses to retrieve.
"""

from __future__ import annotations

from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolstand.spec.meta_check import (
    DATA_KEYWORDS,
    NAMED_SCHEMAS,
    Where,
    dialect,
    meta_problem,
)
from toolstand.spec.schema_limits import depth_problem, mentions, ref_cycle_problem
from toolstand.types import Effect
from toolstand.util.canonical import canonical_hash
from toolstand.util.jsonpos import line_index, line_of
from toolstand.util.problems import (
    LoadError,
    Problem,
    json_document,
    json_path,
    pydantic_message,
    read_file,
    utf8_text,
)

# jsonschema and referencing (~80 ms to import) are imported where a validator or a ref
# lookup is first needed: the TUI's first paint needs neither (tui/model/project.py)
if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from referencing import Registry

# Domain normalizers a parameter may declare in "x-normalize" (version 1 of the list).
# Version 2 adds BFCL's leniencies: bfcl_string (its standardize_string) and int_as_float.
NORMALIZERS_VERSION = 2
NORMALIZERS: tuple[str, ...] = (
    "strip",
    "casefold",
    "collapse_spaces",
    "bfcl_string",
    "int_as_float",
)
REF_KEYWORDS = ("$ref", "$dynamicRef")


def _refuse(uri: str) -> NoReturn:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # an attrs class


@cache
def no_retrieve() -> Registry[Any]:
    """The registry every validator resolves refs in: the JSON Schema specifications
    (jsonschema adds them) and nothing that would need a connection; one for all."""
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


# validators by their schema's JSON (key order kept: it orders the errors): BFCL's
# cases repeat their functions, and a built validator keeps nothing of a call, so one
# serves every tool and case with that schema
_VALIDATORS: dict[bytes, Draft202012Validator] = {}
_VALIDATORS_MAX = 16384


def validator_for(schema: dict[str, Any]) -> Draft202012Validator:
    """A validator of the schema's own dialect that can never fetch a remote ``$ref``;
    one per distinct schema."""
    try:
        key = orjson.dumps(schema)
    except TypeError:  # not JSON data (orjson's errors are TypeErrors): not remembered
        return build_validator(schema)
    found = _VALIDATORS.get(key)
    if found is None:
        if len(_VALIDATORS) >= _VALIDATORS_MAX:
            del _VALIDATORS[next(iter(_VALIDATORS))]  # the oldest
        found = _VALIDATORS[key] = build_validator(schema)
    return found


def build_validator(schema: Any) -> Draft202012Validator:
    """A new validator for ``schema`` (``validator_for`` reuses one where it can)."""
    from toolstand.spec.ecma_regex import with_ecma_patterns

    kind = with_ecma_patterns(dialect(schema))
    validator: Draft202012Validator = kind(schema, registry=no_retrieve())
    return validator


class FakeRule(BaseModel):
    """One ``x-fake`` entry: the result a call gets when its arguments match ``when``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    when: dict[str, Any] = Field(default_factory=dict)
    result: dict[str, Any]


class SimHints(BaseModel):
    """``x-sim``: the words that make the simulated model reach for this tool.

    ``hints`` are lower-case stems of the user's words pointing at the tool (used
    instead of the ones derived from its name and description); ``values`` maps an enum
    value of its parameters to the stems that make the model pick it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hints: list[str] = Field(default_factory=list)
    values: dict[str, list[str]] = Field(default_factory=dict)


class ToolSpec(BaseModel):
    """One tool as the application defines it, independent of any provider.

    ``x-fake`` (the fake executor's default results), ``x-sim`` (the simulator's hints)
    and ``x-mcp`` (an imported tool's MCP annotations, camelCase as on the wire) are
    never sent to a provider; they are hashed only when present."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True
    )

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str
    parameters: dict[str, Any]
    effect: Effect = "read"
    fake: list[FakeRule] | None = Field(default=None, alias="x-fake")
    sim: SimHints | None = Field(default=None, alias="x-sim")
    mcp: dict[str, Any] | None = Field(default=None, alias="x-mcp")
    # where an imported tool came from: BFCL's original (dotted) name, or an MCP
    # server's name that the wire pattern does not allow (github.create_issue)
    bfcl_name: str | None = Field(default=None, alias="x-bfcl-name")
    mcp_name: str | None = Field(default=None, alias="x-mcp-name")

    # Each found once per ToolSpec: a case file's identical tools share one (cases.py)

    @cached_property
    def validator(self) -> Draft202012Validator:
        return validator_for(self.parameters)

    @cached_property
    def limit_problem(self) -> Where | None:
        """Nesting too deep or a ``$ref`` cycle (paths within ``parameters``): found
        before any other walk, each of which would hit the recursion limit on them."""
        return depth_problem(self.parameters, ()) or ref_cycle_problem(self.parameters, ())

    @cached_property
    def meta_schema_problem(self) -> Where | None:
        """Where (within ``parameters``) and why they are not a valid JSON Schema."""
        return meta_problem(self.parameters)

    @cached_property
    def shape_problems(self) -> tuple[Where, ...]:
        """The rest of what is wrong in this tool, paths from the tool: unknown types and
        normalizers, refs to nothing, bad ``x-fake``/``x-sim`` (see ``tool_problems``)."""
        at: tuple[str | int, ...] = ("parameters",)
        out = _type_problems(self.parameters, at)
        if self.parameters.get("type") != "object":
            out.append(((*at, "type"), 'tool parameters must be {"type": "object", ...}'))
        out += _x_normalize_problems(self.parameters, at)
        out += ref_problems(self.parameters, at)
        out += extension_problems(self, ())
        return tuple(out)


class Contract(BaseModel):
    """A named, versioned set of tools.

    ``x-source`` says where an imported contract came from (``kind``: mcp, openai,
    anthropic, gemini; an MCP server's name and version; the version and source hash it
    was imported at), so drift can be measured against it later."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True
    )

    name: str
    version: str
    tools: list[ToolSpec]
    source: dict[str, Any] | None = Field(default=None, alias="x-source")

    @cached_property
    def by_name(self) -> dict[str, ToolSpec]:
        return {t.name: t for t in self.tools}

    @cached_property
    def hash(self) -> str:
        """SHA-256 of the canonical JSON (sorted keys, no whitespace)."""
        data = self.model_dump(mode="json")
        for tool in data["tools"]:  # a contract without the x- keys keeps its old hash
            for key in ("x-fake", "x-sim", "x-mcp", "x-bfcl-name", "x-mcp-name"):
                if tool.get(key) is None:
                    tool.pop(key, None)
        if data.get("x-source") is None:
            data.pop("x-source", None)
        return canonical_hash(data)

    @cached_property
    def by_source_name(self) -> dict[str, ToolSpec]:
        """Tools renamed for the wire, by the name their MCP server gives them."""
        return {t.mcp_name: t for t in self.tools if t.mcp_name is not None}

    def tool(self, name: str) -> ToolSpec | None:
        """The tool of this name: the wire name, else an MCP server's own (``x-mcp-name``)."""
        found = self.by_name.get(name)
        return found if found is not None else self.by_source_name.get(name)

    def subset(self, names: list[str] | None) -> list[ToolSpec]:
        """The tools offered for a case: all, or the named ones in contract order."""
        if names is None:
            return list(self.tools)
        wanted = set(names)
        return [t for t in self.tools if t.name in wanted]


def _x_normalize_problems(schema: Any, parts: tuple[str | int, ...]) -> list[tuple[tuple, str]]:
    out: list[tuple[tuple, str]] = []
    if isinstance(schema, dict):
        rules = schema.get("x-normalize")
        if rules is not None:
            if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
                out.append(((*parts, "x-normalize"), "must be a list of normalizer names"))
            else:
                for i, rule in enumerate(rules):
                    if rule not in NORMALIZERS:
                        allowed = ", ".join(NORMALIZERS)
                        out.append(
                            (
                                (*parts, "x-normalize", i),
                                f"unknown normalizer {rule!r}; allowed: {allowed}",
                            )
                        )
        for key, value in schema.items():
            if key != "x-normalize":
                out.extend(_x_normalize_problems(value, (*parts, key)))
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            out.extend(_x_normalize_problems(value, (*parts, i)))
    return out


def _refs(
    schema: Any, parts: tuple[str | int, ...] = ()
) -> list[tuple[tuple[str | int, ...], str]]:
    """(path, value) of every ``$ref`` / ``$dynamicRef``; data keywords (``enum``,
    ``default`` ...) are not walked."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in REF_KEYWORDS and isinstance(value, str):
                out.append(((*parts, key), value))
            elif key not in DATA_KEYWORDS:
                out.extend(_refs(value, (*parts, key)))
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            out.extend(_refs(value, (*parts, i)))
    return out


def ref_problems(
    schema: dict[str, Any], parts: tuple[str | int, ...] = ()
) -> list[tuple[tuple[str | int, ...], str]]:
    """Every ``$ref`` the judge could not follow, with why: one outside the schema (never
    fetched), or a ``#...`` that points at nothing in it (the judge would raise on it for
    every attempt). A schema with an ``$id`` moves the base of its refs: those are left to
    jsonschema rather than guessed at."""
    if not mentions(schema, b'"$ref"', b'"$dynamicRef"'):
        return []  # most tools: no key spells a ref, so there is nothing to follow
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    moved_base = _has_id(schema)
    resolver = (
        no_retrieve()
        .with_resource("urn:toolstand:tool", DRAFT202012.create_resource(schema))
        .resolver(base_uri="urn:toolstand:tool")
    )
    out: list[tuple[tuple[str | int, ...], str]] = []
    for where, value in _refs(schema, parts):
        if not value.startswith("#"):
            out.append((where, "remote $ref is not allowed, inline it"))
        elif where[-1] == "$ref" and not moved_base:
            try:
                resolver.lookup(value)
            except Unresolvable:
                out.append((where, f"{value!r} points at nothing in this tool's schema"))
    return out


def _has_id(schema: Any) -> bool:
    """Whether ``$id`` appears at any depth (outside data keywords)."""
    if isinstance(schema, dict):
        return "$id" in schema or any(
            _has_id(v) for k, v in schema.items() if k not in DATA_KEYWORDS
        )
    return isinstance(schema, list) and any(_has_id(v) for v in schema)


JSON_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})


def tool_problems(
    tools: list[ToolSpec], base: tuple[str | int, ...], *, meta: bool = True
) -> list[Where]:
    """Meta-validation of a tool list (a contract's or a case's own): duplicate names,
    schemas that are not Draft 2020-12 objects, unknown normalizers, refs to nothing.

    ``meta=False`` leaves out the full meta-schema check (a case's tools get it from
    `check` and `run`, in ``check_cases``) but still names every ``type`` that is not a
    JSON type."""
    out: list[Where] = []
    seen: dict[str, int] = {}
    for i, tool in enumerate(tools):
        at: tuple[str | int, ...] = (*base, i)
        if tool.name in seen:
            first = seen[tool.name]
            out.append(
                ((*at, "name"), f"duplicate tool name {tool.name!r} (first at tools[{first}])")
            )
        seen.setdefault(tool.name, i)
        problem = tool.limit_problem
        if problem is None and meta:
            problem = tool.meta_schema_problem
        if problem is not None:
            out.append(((*at, "parameters", *problem[0]), problem[1]))
            continue
        out += [((*at, *parts), message) for parts, message in tool.shape_problems]
    return out


def _type_problems(schema: Any, parts: tuple[str | int, ...]) -> list[tuple[tuple, str]]:
    """Every ``type`` (in properties, items, $defs ...) that names no JSON type."""
    out: list[tuple[tuple, str]] = []
    if isinstance(schema, dict):
        kind = schema.get("type")
        names = kind if isinstance(kind, list) else [kind] if kind is not None else []
        for name in names:
            if not isinstance(name, str) or name not in JSON_TYPES:
                allowed = ", ".join(sorted(JSON_TYPES))
                out.append(((*parts, "type"), f"unknown type {name!r}; allowed: {allowed}"))
        for key, value in schema.items():
            if key in NAMED_SCHEMAS and isinstance(value, dict):
                for name, sub in value.items():
                    out.extend(_type_problems(sub, (*parts, key, name)))
            elif key not in DATA_KEYWORDS and key != "type":
                out.extend(_type_problems(value, (*parts, key)))
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            out.extend(_type_problems(value, (*parts, i)))
    return out


def extension_problems(
    tool: ToolSpec, base: tuple[str | int, ...]
) -> list[tuple[tuple[str | int, ...], str]]:
    """What is wrong in a tool's ``x-fake`` and ``x-sim`` beyond their shape: a ``when``
    or ``values`` naming what the schema does not declare, a result that is not
    ``{"ok": true, ...}`` or ``{"ok": false, "error": {"code": ...}}``, an empty stem."""
    props = tool.parameters.get("properties")
    names = sorted(props) if isinstance(props, dict) else []
    out: list[tuple[tuple[str | int, ...], str]] = []
    for i, rule in enumerate(tool.fake or []):
        where = (*base, "x-fake", i)
        for arg in rule.when:
            if arg not in names:
                allowed = ", ".join(names) or "none"
                out.append(
                    ((*where, "when", arg), f"not a parameter of this tool; allowed: {allowed}")
                )
        out.extend(((*where, "result", *p), m) for p, m in _result_problems(rule.result))
    if tool.sim is not None:
        enums = _enum_values(props if isinstance(props, dict) else {})
        for i, stem in enumerate(tool.sim.hints):
            if not stem.strip():
                out.append(((*base, "x-sim", "hints", i), "a hint must be a non-empty stem"))
        for value in tool.sim.values:
            if value not in enums:
                allowed = ", ".join(sorted(enums)) or "none"
                out.append(
                    (
                        (*base, "x-sim", "values", value),
                        f"not an enum value of this tool; allowed: {allowed}",
                    )
                )
    return out


def _result_problems(result: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    ok = result.get("ok")
    if not isinstance(ok, bool):
        return [(("ok",), 'a result needs "ok": true or false')]
    error = result.get("error")
    if ok is False and not (isinstance(error, dict) and isinstance(error.get("code"), str)):
        return [
            (("error",), 'a failed result needs "error": {"code": "...", ...} (a problem object)')
        ]
    return []


def _enum_values(props: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for prop in props.values():
        enum = prop.get("enum") if isinstance(prop, dict) else None
        if isinstance(enum, list):
            out.update(v for v in enum if isinstance(v, str))
    return out


def parse_contract(text: str | bytes, file: str = "<contract>", *, meta: bool = True) -> Contract:
    """Parse and meta-validate a contract; every problem names file:line and JSON path.

    ``meta=False`` leaves out the meta-schema check of the tools' parameters (where
    meta_check cannot vouch for a schema, jsonschema's: its import and its check are most
    of a small contract's load); ``meta_problems`` then finds what it would have raised."""
    raw_text, data = json_document(text, file)
    index = line_index(raw_text)
    problems: list[Problem] = []

    def add(parts: tuple[str | int, ...], message: str) -> None:
        problems.append(Problem(file, line_of(index, parts), json_path(parts), message))

    if not isinstance(data, dict):
        add((), "a contract is an object {name, version, tools}")
        raise LoadError(problems)
    try:
        contract = Contract.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            add(tuple(err["loc"]), pydantic_message(err))
        raise LoadError(problems) from None
    for parts, message in tool_problems(contract.tools, ("tools",), meta=meta):
        add(parts, message)
    if problems:
        raise LoadError(problems)
    return contract


def meta_problems(contract: Contract, text: str | bytes, file: str) -> list[Problem]:
    """What ``parse_contract(text, file)`` raises, none if it returns, for the contract
    ``parse_contract(text, file, meta=False)`` returned: the same problems in the same
    order (with the rest of the check passed, only the meta-schema's can be left)."""
    found = tool_problems(contract.tools, ("tools",))
    if not found:
        return []
    index = line_index(utf8_text(text, file))
    return [Problem(file, line_of(index, parts), json_path(parts), m) for parts, m in found]


def load_contract(path: str | Path) -> Contract:
    return parse_contract(read_file(path), str(path))
