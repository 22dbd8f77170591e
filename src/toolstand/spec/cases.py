"""Cases and expectations: the scenarios, loaded from JSONL with line numbers.

A case file is one JSON object a line. A line holding only ``{"cases_version": "..."}``
declares the file's version (else the report uses the file's hash). Blank lines are
allowed and kept. Every problem names file:line and the JSON path of the field.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from toolstand.spec.contract import Contract, ToolSpec, tool_problems
from toolstand.util.canonical import sha256_hex
from toolstand.util.problems import (
    LoadError,
    Problem,
    json_path,
    pydantic_message,
    read_file,
    reject_duplicate_keys,
)

CATEGORIES: tuple[str, ...] = (
    "positive",
    "missing_data",
    "ambiguous",
    "invalid_id",
    "irrelevant",
    "boundary",
    "conflicting",
    "implicit_intent",
    "recovery",
    "parallel",
    "slot_filling",
    "policy",
)


# the validation-context key of a load's tools by their JSON (``Case._shared_tools``)
SHARED_TOOLS = "toolstand.shared_tools"
SharedTools = dict[bytes, ToolSpec]


def id_problem(case_id: str) -> str | None:
    """Why ``case_id`` cannot name a case, or None. An id is printable text: it lands in
    terminals, JUnit XML and spreadsheets, where an ESC, a NUL or a bidi override would
    act instead of print (``str.isprintable``: no control, format or separator
    character, no space but ' ')."""
    for i, ch in enumerate(case_id):
        if not ch.isprintable():
            return (
                f"an id must be printable text: character {i + 1} is U+{ord(ch):04X}"
                f" (Unicode category {unicodedata.category(ch)}), which does not print"
            )
    return None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Message(_Strict):
    role: Literal["user", "assistant"]
    content: str


class _Arguments(_Strict):
    """Expected arguments: exact ``arguments``, or per parameter the ``accept``able
    values with the parameters that ``may_omit`` be left out (BFCL's possible answers);
    a parameter in neither must be absent."""

    arguments: dict[str, Any] | None = None
    accept: dict[str, list[Any]] | None = None
    may_omit: list[str] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> _Arguments:
        if self.arguments is not None and (self.accept is not None or self.may_omit is not None):
            raise ValueError("give either 'arguments' or 'accept'/'may_omit', not both")
        if self.may_omit is not None and self.accept is None:
            raise ValueError("'may_omit' needs 'accept' (which may be {})")
        for name, values in (self.accept or {}).items():
            if not values:
                raise ValueError(f"accept[{name!r}] lists no value; put the name in may_omit")
        return self

    @property
    def names_arguments(self) -> bool:
        """Whether the arguments are checked at all (else only the tool is)."""
        return self.arguments is not None or self.accept is not None

    @property
    def example_arguments(self) -> dict[str, Any] | None:
        """One argument set that passes: the exact one, or each first acceptable value."""
        if self.accept is not None:
            return {name: values[0] for name, values in self.accept.items()}
        return self.arguments


class ExpectedCall(_Arguments):
    tool: str


class Expectation(_Arguments):
    kind: Literal["tool_call", "text", "refusal"]
    tool: str | None = None
    calls: list[ExpectedCall] | None = None
    order: Literal["any", "strict"] = "any"
    must_not_call: bool | list[str] | None = None
    contains_any: list[str] | None = None

    @model_validator(mode="after")
    def _coherent(self) -> Expectation:
        if self.kind == "tool_call":
            # naming neither tool nor calls accepts any call of an offered tool
            if self.tool is not None and self.calls:
                raise ValueError("give either 'tool' (one call) or 'calls' (several), not both")
            if self.must_not_call is True:
                raise ValueError("kind tool_call contradicts must_not_call: true")
        else:
            if self.tool is not None or self.calls or self.names_arguments:
                raise ValueError(f"kind {self.kind} cannot name a tool, calls or arguments")
        if self.names_arguments and self.tool is None:
            raise ValueError("'arguments' and 'accept' need 'tool'")
        return self

    @property
    def expected_calls(self) -> list[ExpectedCall]:
        """The expected calls in one list, whether written as tool/arguments or calls."""
        if self.calls:
            return list(self.calls)
        if self.tool is not None:
            return [
                ExpectedCall(
                    tool=self.tool,
                    arguments=self.arguments,
                    accept=self.accept,
                    may_omit=self.may_omit,
                )
            ]
        return []

    @property
    def any_call(self) -> bool:
        """A call is expected and any call of an offered tool will do (BFCL's relevance)."""
        return self.kind == "tool_call" and self.tool is None and not self.calls

    @property
    def forbidden_tools(self) -> set[str] | None:
        """Tool names never to be called; None when must_not_call is true (no call at all)."""
        if isinstance(self.must_not_call, list):
            return set(self.must_not_call)
        return set()


class Followup(_Strict):
    tool_results: dict[str, Any] = Field(default_factory=dict)
    must_not_call: list[str] = Field(default_factory=list)
    contains_any: list[str] | None = None
    must_not_contain: list[str] = Field(default_factory=list)


class Case(_Strict):
    id: str = Field(min_length=1)
    user: str | None = None
    messages: list[Message] | None = None
    category: str | None = None
    active_tools: list[str] | None = None
    # the case's own tools, offered instead of the contract's (BFCL: per question)
    tools: list[ToolSpec] | None = None
    expect: Expectation
    followup: Followup | None = None
    note: str | None = None

    @field_validator("tools", mode="wrap")
    @classmethod
    def _shared_tools(
        cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        """Within one load (``SHARED_TOOLS`` in the context), a tool written exactly as
        an earlier case wrote it (the same JSON, byte for byte) is that case's ToolSpec:
        validated, checked and given a validator once, not once per case. Any other
        list is validated as written, so its errors are the ones it always had."""
        known = info.context.get(SHARED_TOOLS) if isinstance(info.context, dict) else None
        if known is None or not isinstance(value, list):
            return handler(value)
        try:
            keys = [orjson.dumps(tool) for tool in value]
        except TypeError:  # not JSON data (orjson's errors are TypeErrors)
            return handler(value)
        found = [known.get(key) for key in keys]
        if None in found:
            found = [known.setdefault(k, t) for k, t in zip(keys, handler(value), strict=True)]
        return found

    @field_validator("id")
    @classmethod
    def _printable_id(cls, value: str) -> str:
        problem = id_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _one_prompt(self) -> Case:
        if (self.user is None) == (self.messages is None):
            raise ValueError(
                "give exactly one of 'user' (one message) or 'messages' (a conversation)"
            )
        if self.messages is not None and (not self.messages or self.messages[-1].role != "user"):
            raise ValueError("'messages' must end with the user's last message")
        return self

    @property
    def conversation(self) -> list[dict[str, str]]:
        """The conversation to send, as role/content dicts (system prompt not included)."""
        if self.messages is not None:
            return [m.model_dump() for m in self.messages]
        return [{"role": "user", "content": self.user or ""}]

    def contract_for(self, contract: Contract) -> Contract:
        """The contract this case is judged and offered against: its own ``tools`` when
        it has them (under the contract's name and version), else ``contract``."""
        if self.tools is None:
            return contract
        # the ToolSpecs are the case's own objects (not revalidated): their validators,
        # built once, are shared by every attempt
        return Contract(name=contract.name, version=contract.version, tools=self.tools)

    @property
    def last_user_text(self) -> str:
        return self.conversation[-1]["content"]

    @property
    def expects_call(self) -> bool:
        return self.expect.kind == "tool_call"

    def to_json_line(self) -> str:
        """Serialize compactly, leaving out what is unset (the seed's own style)."""
        data = self.model_dump(mode="json", exclude_none=True, exclude_defaults=True, by_alias=True)
        data["expect"] = self.expect.model_dump(
            mode="json", exclude_none=True, exclude_defaults=True
        )
        data["expect"]["kind"] = self.expect.kind
        return orjson.dumps(data).decode()


@dataclass
class CaseLine:
    """A line of a case file: its number, its exact text, and the case if it holds one."""

    number: int
    text: str
    case: Case | None = None
    file: str | None = None  # set when the line came into a set of files (load_case_set)


@dataclass
class CaseFile:
    path: str
    lines: list[CaseLine]
    version: str | None
    sha256: str
    problems: list[Problem] = field(default_factory=list)
    # the files of a set loaded as one (load_case_set); empty for a single file
    files: list[str] = field(default_factory=list)

    @property
    def cases(self) -> list[Case]:
        return [ln.case for ln in self.lines if ln.case is not None]

    @property
    def cases_version(self) -> str:
        return self.version or f"sha256:{self.sha256}"

    def by_id(self) -> dict[str, Case]:
        return {c.id: c for c in self.cases}


def parse_case_line(text: str, file: str, number: int, shared: SharedTools | None = None) -> Case:
    """Parse one line into a Case; raises LoadError naming file:line and the field.
    ``shared``: the tools of the lines parsed before it, which its own may be."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise LoadError([Problem(file, number, "$", f"not a JSON object: {exc}")]) from None
    if not isinstance(data, dict):
        raise LoadError([Problem(file, number, "$", "each line must be a JSON object")])
    reject_duplicate_keys(text, file, number, parsed=data)
    try:
        case = Case.model_validate(
            data, context={SHARED_TOOLS: shared} if shared is not None else None
        )
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            parts = list(err["loc"])
            # an unknown key is the file's own, "[" and all; the rest may hold union tags
            own = [parts.pop()] if err.get("type") == "extra_forbidden" and parts else []
            loc = [p for p in parts if not (isinstance(p, str) and ("[" in p or p in _UNION_TAGS))]
            loc += own
            problems.append(Problem(file, number, json_path(loc), pydantic_message(err)))
        raise LoadError(problems) from None
    if case.tools is not None:
        tool_issues = tool_problems(case.tools, ("tools",), meta=False)
        if tool_issues:
            raise LoadError([Problem(file, number, json_path(p), m) for p, m in tool_issues])
    return case


_UNION_TAGS = {"bool", "list[str]", "str", "int", "float", "dict[str,any]"}


def version_of(line: str) -> str | None:
    """The version a case file's line states, when it holds only ``{"cases_version":
    ...}`` (such a line is no case); else None."""
    if not line.lstrip().startswith('{"cases_version"'):
        return None
    try:
        meta = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if isinstance(meta, dict) and set(meta) == {"cases_version"}:
        return str(meta["cases_version"])
    return None


def count_rows(data: bytes) -> int:
    """How many lines of a case file are cases or broken lines (parse_cases lists both;
    blank and version lines are neither), by parse_cases's own rules but parsing no case:
    a BOM before line 1 is not part of it, and a line that is no UTF-8 is a broken line
    even when it reads as a version line with the bad bytes replaced."""
    texts = data.decode("utf-8", errors="replace").split("\n")  # no line end replaced
    count = 0
    for number, (raw, text) in enumerate(zip(data.split(b"\n"), texts, strict=True), 1):
        if number == 1:
            text = text.removeprefix("\ufeff")
        if not text.strip():
            continue
        if b'"cases_version"' in raw:
            try:
                strict = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                strict = None
            if strict is not None and version_of(strict) is not None:
                continue
        count += 1
    return count


def parse_cases(
    data: bytes, file: str = "<cases>", *, strict: bool = True, shared: SharedTools | None = None
) -> CaseFile:
    """Parse a whole case file. With ``strict`` any problem raises LoadError. Its cases
    share their identical tools (also with those in ``shared``, another file's)."""
    shared = {} if shared is None else shared
    lines: list[CaseLine] = []
    problems: list[Problem] = []
    version: str | None = None
    seen: dict[str, int] = {}
    raw_lines = data.split(b"\n")
    for number, raw in enumerate(raw_lines, start=1):
        if number > 1 and raw == b"" and number == len(raw_lines):
            break  # the empty string after the final newline
        try:
            # a BOM some editors put at the start of the file is not part of line 1
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            # one bad line must not hide the others: it is a problem of its own line
            lines.append(CaseLine(number, raw.decode("utf-8", errors="replace")))
            problems.append(
                Problem(file, number, "$", f"not UTF-8 text: byte {exc.start + 1} is {exc.reason}")
            )
            continue
        entry = CaseLine(number, line)
        lines.append(entry)
        if not line.strip():
            continue
        found = version_of(line)
        if found is not None:
            version = found
            continue
        try:
            case = parse_case_line(line, file, number, shared)
        except LoadError as exc:
            problems.extend(exc.problems)
            continue
        if case.id in seen:
            problems.append(
                Problem(
                    file,
                    number,
                    "$.id",
                    f"duplicate id {case.id!r} (first on line {seen[case.id]})",
                )
            )
            continue
        seen[case.id] = number
        entry.case = case
    result = CaseFile(file, lines, version, sha256_hex(data), problems)
    if strict and problems:
        raise LoadError(problems)
    return result


def load_cases(
    path: str | Path, *, strict: bool = True, shared: SharedTools | None = None
) -> CaseFile:
    return parse_cases(read_file(path), str(path), strict=strict, shared=shared)


def case_paths(source: str | Path | list[str] | list[Path]) -> list[Path]:
    """The files a config's ``cases`` names: one file, a list of files, or a folder of
    ``*.jsonl`` (sorted by name)."""
    items = [Path(p) for p in source] if isinstance(source, list) else [Path(source)]
    out: list[Path] = []
    for item in items:
        out += sorted(item.glob("*.jsonl")) if item.is_dir() else [item]
    return out


def load_case_set(source: str | Path | list[str] | list[Path], *, strict: bool = True) -> CaseFile:
    """Load one case file, or several as one set (ids unique across them).

    A set's path is the folder, or the files joined by ``, ``; its hash covers every
    file's hash in order; a declared version is used only when every file declares the
    same one."""
    paths = case_paths(source)
    if len(paths) == 1 and not (isinstance(source, str | Path) and Path(source).is_dir()):
        return load_cases(paths[0], strict=strict)
    label = set_label(source)
    if not paths:
        raise LoadError([Problem(label, None, "$", "no *.jsonl case file here")])
    shared: SharedTools = {}  # a tool repeated across the files is one ToolSpec too
    files = [load_cases(p, strict=False, shared=shared) for p in paths]
    return case_set(label, files, strict=strict)


def set_label(source: str | Path | list[str] | list[Path]) -> str:
    """A set's path in its run header: the folder, or the files joined by ``, ``."""
    return str(source) if isinstance(source, str | Path) else ", ".join(map(str, source))


def case_set(label: str, files: list[CaseFile], *, strict: bool = True) -> CaseFile:
    """Files loaded on their own, as one set (see ``load_case_set``); a case whose id an
    earlier file holds is a problem of its line, left out of the set."""
    problems = [p for f in files for p in f.problems]
    first: dict[str, str] = {}
    for f in files:
        for line in f.lines:
            if line.case is None:
                continue
            where = f"{f.path}:{line.number}"
            if line.case.id in first:
                problems.append(
                    Problem(
                        f.path,
                        line.number,
                        "$.id",
                        f"duplicate id {line.case.id!r} (first at {first[line.case.id]})",
                    )
                )
                line.case = None
                continue
            first[line.case.id] = where
    versions = {f.version for f in files}
    version = versions.pop() if len(versions) == 1 else None
    digest = sha256_hex("\n".join(f.sha256 for f in files).encode())
    for f in files:
        for ln in f.lines:
            ln.file = f.path
    lines = [ln for f in files for ln in f.lines]
    merged = CaseFile(label, lines, version, digest, problems, [f.path for f in files])
    if strict and problems:
        raise LoadError(problems)
    return merged
