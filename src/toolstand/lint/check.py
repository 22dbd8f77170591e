"""`toolstand check`: lint contracts and cases, each problem as file:line: path: message."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from toolstand.spec.cases import CaseFile, load_case_set
from toolstand.spec.contract import Contract, ToolSpec, load_contract, validator_for
from toolstand.spec.portability import portability_warnings
from toolstand.spec.violations import violations
from toolstand.util.jsonpos import line_index, line_of
from toolstand.util.problems import LoadError, Problem, json_path

# Keywords each API rejects or ignores, so the user knows which constraints only
# toolstand's own validation enforces (each API's tool-schema reference).
_GEMINI_SCHEMA_FIELDS = {
    "type", "format", "title", "description", "nullable", "enum", "properties", "required",
    "items", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern",
    "minProperties", "maxProperties", "propertyOrdering", "anyOf", "default", "example",
}  # fmt: skip
_STRUCTURAL = {
    "properties",
    "items",
    "$defs",
    "definitions",
    "anyOf",
    "oneOf",
    "allOf",
    "prefixItems",
}


@dataclass
class CheckResult:
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]


def _walk(
    schema: Any, parts: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    if not isinstance(schema, dict):
        return
    yield parts, schema
    for key in ("properties", "$defs", "definitions"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            for name, value in sub.items():
                yield from _walk(value, (*parts, key, name))
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _walk(items, (*parts, "items"))
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        sub = schema.get(key)
        if isinstance(sub, list):
            for i, value in enumerate(sub):
                yield from _walk(value, (*parts, key, i))


def api_warnings(contract: Contract, file: str, text: str) -> list[Problem]:
    """Per API, the schema keywords it rejects or drops."""
    # here, not at the top: the TUI's form checks drafts with this module, and the
    # adapters package (every adapter) is not needed to draw the Cases screen
    from toolstand.adapters.strict import ANTHROPIC_UNSUPPORTED, OPENAI_UNSUPPORTED

    index = line_index(text)
    out: list[Problem] = []

    def warn(parts: tuple[str | int, ...], message: str) -> None:
        out.append(Problem(file, line_of(index, parts), json_path(parts), message, "warning"))

    for ti, tool in enumerate(contract.tools):
        base: tuple[str | int, ...] = ("tools", ti, "parameters")
        for parts, node in _walk(tool.parameters, base):
            for key in node:
                if key in _STRUCTURAL or key.startswith("x-"):
                    continue
                if key not in _GEMINI_SCHEMA_FIELDS:
                    warn(
                        (*parts, key),
                        f"gemini: '{key}' is not a field of the OpenAPI-subset 'parameters' schema "
                        "(a 400 there); toolstand sends 'parametersJsonSchema', where enforcement is "
                        "unconfirmed: only toolstand's validation enforces it",
                    )
                if key in ANTHROPIC_UNSUPPORTED:
                    warn(
                        (*parts, key),
                        f"anthropic strict tools: '{key}' is not supported (400 with strict: true)",
                    )
                if key in OPENAI_UNSUPPORTED:
                    warn(
                        (*parts, key),
                        f"openai strict mode: '{key}' is not supported (400 with strict: true)",
                    )
            if node.get("type") == "object":
                props = set((node.get("properties") or {}).keys())
                missing = sorted(props - set(node.get("required") or []))
                if missing:
                    warn(
                        (*parts, "required"),
                        f"openai strict mode: every property must be required; optional here: {', '.join(missing)}",
                    )
                if node.get("additionalProperties") is not False:
                    warn(
                        parts,
                        "openai and anthropic strict modes need additionalProperties: false on every object",
                    )
    portability_warnings(contract, warn)
    return out


def twin_warnings(casefile: CaseFile) -> list[Problem]:
    """A case asking what an earlier one asks (same conversation, same tools offered):
    a real model cannot tell them apart, whatever each expects."""
    out: list[Problem] = []
    first: dict[tuple[Any, ...], tuple[str, int]] = {}
    for line in casefile.lines:
        case = line.case
        if case is None:
            continue
        talk = tuple((m["role"], m["content"].strip()) for m in case.conversation)
        tools = tuple(t.name for t in case.tools) if case.tools is not None else None
        key = (talk, tools, tuple(case.active_tools or ()))
        if key in first:
            cid, number = first[key]
            where = "$.user" if case.user is not None else "$.messages"
            message = (
                f"the same question as case {cid!r} (line {number}): a model cannot tell "
                "them apart (the simulator answers each by its id)"
            )
            out.append(Problem(line.file or casefile.path, line.number, where, message, "warning"))
        else:
            first[key] = (case.id, line.number)
    return out


def check_cases(casefile: CaseFile, contract: Contract) -> list[Problem]:
    """Unknown tools, expected arguments against the schema, self-contradictions."""
    out: list[Problem] = []
    for line in casefile.lines:
        case = line.case
        if case is None:
            continue
        own = case.contract_for(contract)  # a case with its own tools is checked on those
        known = set(own.by_name)
        file = line.file or casefile.path
        for i, spec in enumerate(case.tools or []):
            problem = spec.meta_schema_problem
            if problem is not None:
                where = json_path(("tools", i, "parameters", *problem[0]))
                out.append(Problem(file, line.number, where, problem[1]))

        def add(
            parts: tuple[str | int, ...],
            message: str,
            severity: str = "error",
            n: int = line.number,
            f: str = file,
        ) -> None:
            out.append(Problem(f, n, json_path(parts), message, severity))

        allowed = ", ".join(sorted(known))
        for i, name in enumerate(case.active_tools or []):
            if name not in known:
                add(("active_tools", i), f"unknown tool {name!r}; the contract has: {allowed}")
        expected = case.expect.expected_calls
        for i, exp in enumerate(expected):
            parts: tuple[str | int, ...] = (
                ("expect", "calls", i) if case.expect.calls else ("expect",)
            )
            tool = own.tool(exp.tool)
            if tool is None:
                add((*parts, "tool"), f"unknown tool {exp.tool!r}; the contract has: {allowed}")
                continue
            if tool.name != exp.tool:  # found by x-mcp-name: no call the model makes matches
                add((*parts, "tool"), f"{exp.tool!r} is the server's name; the model is sent "
                    f"{tool.name!r}: expect that")  # fmt: skip
                continue
            if case.active_tools is not None and exp.tool not in case.active_tools:
                add((*parts, "tool"), f"expects {exp.tool!r}, which active_tools does not offer")
            if exp.arguments is not None:
                for v in violations(tool, exp.arguments):
                    add(
                        (*parts, "arguments", *v.parts),
                        f"expected arguments break the {exp.tool} schema ({v.subcode}): {v.message}",
                    )
            for at, message in accept_problems(tool, exp.accept or {}, exp.may_omit or []):
                add((*parts, *at), message, "warning")
        if isinstance(case.expect.must_not_call, list):
            for i, name in enumerate(case.expect.must_not_call):
                if name not in known:
                    add(
                        ("expect", "must_not_call", i),
                        f"unknown tool {name!r}; the contract has: {allowed}",
                    )
                if any(e.tool == name for e in expected):
                    add(
                        ("expect", "must_not_call", i),
                        f"contradicts the expectation: {name!r} is both expected and forbidden",
                    )
        if case.expect.kind == "tool_call" and case.expect.contains_any:
            add(
                ("expect", "contains_any"),
                "contains_any is checked only on a text answer; it has no effect on kind tool_call",
                "warning",
            )
        if case.followup is not None:
            if case.expect.kind != "tool_call":
                add(
                    ("followup",),
                    "followup runs only after an expected call; this case expects none",
                    "warning",
                )
            for name in case.followup.tool_results:
                if name not in known:
                    add(
                        ("followup", "tool_results", name),
                        f"unknown tool {name!r}; the contract has: {allowed}",
                    )
            for i, name in enumerate(case.followup.must_not_call):
                if name not in known:
                    add(
                        ("followup", "must_not_call", i),
                        f"unknown tool {name!r}; the contract has: {allowed}",
                    )
    return out


# what a parameter's schema may hold beside "type" and "enum" for an acceptable value to
# be checked here rather than by jsonschema: keywords that assert nothing (annotations)
_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly",
     "$comment"}
)  # fmt: skip
# JSON Schema's types as jsonschema tells them (an integer may be written 1.0; a bool
# is no number)
_HAS_TYPE = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def plainly_valid(schema: Any, value: Any) -> bool:
    """True when ``schema`` asserts only a type (and, for a string, an enum) and ``value``
    meets it: jsonschema would find nothing, so no validator is built or run. False
    means only "ask jsonschema" (BFCL: 3,000 distinct parameter schemas, most of them
    ``{"type": ..., "description": ...}``)."""
    if not isinstance(schema, dict):
        return False
    for key in schema:
        if key not in _ANNOTATIONS and key not in ("type", "enum") and not key.startswith("x-"):
            return False
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "type" in schema and not any(k in _HAS_TYPE and _HAS_TYPE[k](value) for k in kinds):
        return False
    if "enum" in schema:  # a string equals only a string: Python's == is JSON's here
        enum = schema["enum"]
        return isinstance(value, str) and isinstance(enum, list) and value in enum
    return True


def accept_problems(
    tool: ToolSpec, accept: dict[str, list[Any]], may_omit: list[str]
) -> list[tuple[tuple[str | int, ...], str]]:
    """Acceptable values that no schema-valid call can give, and required parameters
    marked as omissible: a call that follows them fails as ``invalid_arguments``."""
    props = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or [])
    out: list[tuple[tuple[str | int, ...], str]] = []
    for name, values in accept.items():
        if name not in props:
            out.append((("accept", name), f"{tool.name} has no parameter {name!r}"))
            continue
        schema = props[name]
        for i, value in enumerate(values):
            if plainly_valid(schema, value):
                continue
            error = next(iter(validator_for(schema).iter_errors(value)), None)
            if error is not None:
                out.append(
                    (
                        ("accept", name, i),
                        f"this value breaks the {tool.name} schema: {error.message}",
                    )
                )
    for i, name in enumerate(may_omit):
        if name in required:
            out.append((("may_omit", i), f"{name!r} is required by the {tool.name} schema"))
    return out


def case_problems(casefile: CaseFile, contract: Contract) -> list[Problem]:
    """Every problem `check` finds in a case file that loaded; `run` refuses its errors."""
    return [*casefile.problems, *check_cases(casefile, contract), *twin_warnings(casefile)]


def lock_path(contract_path: Path) -> Path:
    return contract_path.with_suffix(".lock.json")


def check_lock(contract: Contract, contract_path: Path) -> list[Problem]:
    """Fail when the contract changed without a version bump; else record hash and version."""
    path = lock_path(contract_path)
    record = {"name": contract.name, "version": contract.version, "hash": contract.hash}
    if path.exists():
        try:
            old = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError as exc:
            return [Problem(str(path), None, "$", f"lock file is not JSON: {exc}")]
        if old.get("hash") == contract.hash:
            return []
        if old.get("version") == contract.version:
            return [
                Problem(
                    str(contract_path),
                    None,
                    "$.version",
                    f"contract changed without a version bump: hash {old.get('hash', '?')[:12]} → "
                    f"{contract.hash[:12]} at version {contract.version!r}; bump 'version'",
                )
            ]
    path.write_bytes(orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n")
    return []


def read_lock(contract_path: Path) -> dict[str, Any] | None:
    """The lock beside a contract, or None when there is none (or it is not an object)."""
    path = lock_path(contract_path)
    if not path.exists():
        return None
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise LoadError([Problem(str(path), None, "$", f"lock file is not JSON: {exc}")]) from None
    return data if isinstance(data, dict) else None


def record_source(contract: Contract, contract_path: Path, source_hash: str) -> Path:
    """Write the lock with the source's hash beside the contract's (drift passed)."""
    path = lock_path(contract_path)
    record = {
        "name": contract.name,
        "version": contract.version,
        "hash": contract.hash,
        "source_hash": source_hash,
    }
    path.write_bytes(orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n")
    return path


def run_check(tools: Path, cases: Path | list[Path] | None, *, lock: bool = False) -> CheckResult:
    """Lint the contract, and the cases against it (none: the contract alone)."""
    result = CheckResult()
    try:
        contract = load_contract(tools)
    except LoadError as exc:
        result.problems.extend(exc.problems)
        return result
    result.problems.extend(api_warnings(contract, str(tools), tools.read_text(encoding="utf-8")))
    try:
        casefile = load_case_set(cases, strict=False) if cases is not None else None
    except LoadError as exc:
        result.problems.extend(exc.problems)
    else:
        if casefile is not None:
            result.problems.extend(case_problems(casefile, contract))
    if lock and not result.errors:
        result.problems.extend(check_lock(contract, tools))
    return result
