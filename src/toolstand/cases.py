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
    field_validator,
    model_validator,
)

from toolstand.canonical import sha256_hex
from toolstand.problems import (
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


class ExpectedCall(_Strict):
    tool: str
    arguments: dict[str, Any] | None = None


class Expectation(_Strict):
    kind: Literal["tool_call", "text", "refusal"]
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    calls: list[ExpectedCall] | None = None
    order: Literal["any", "strict"] = "any"
    must_not_call: bool | list[str] | None = None
    contains_any: list[str] | None = None

    @model_validator(mode="after")
    def _coherent(self) -> Expectation:
        if self.kind == "tool_call":
            if self.tool is None and not self.calls:
                raise ValueError("kind tool_call needs 'tool' or 'calls'")
            if self.tool is not None and self.calls:
                raise ValueError("give either 'tool' (one call) or 'calls' (several), not both")
            if self.must_not_call is True:
                raise ValueError("kind tool_call contradicts must_not_call: true")
        else:
            if self.tool is not None or self.calls or self.arguments is not None:
                raise ValueError(f"kind {self.kind} cannot name a tool, calls or arguments")
        if self.arguments is not None and self.tool is None:
            raise ValueError("'arguments' needs 'tool'")
        return self

    @property
    def expected_calls(self) -> list[ExpectedCall]:
        """The expected calls in one list, whether written as tool/arguments or calls."""
        if self.calls:
            return list(self.calls)
        if self.tool is not None:
            return [ExpectedCall(tool=self.tool, arguments=self.arguments)]
        return []

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
    expect: Expectation
    followup: Followup | None = None
    note: str | None = None

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

    @property
    def last_user_text(self) -> str:
        return self.conversation[-1]["content"]

    @property
    def expects_call(self) -> bool:
        return self.expect.kind == "tool_call"

    def to_json_line(self) -> str:
        """Serialize compactly, leaving out what is unset (the seed's own style)."""
        data = self.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
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


@dataclass
class CaseFile:
    path: str
    lines: list[CaseLine]
    version: str | None
    sha256: str
    problems: list[Problem] = field(default_factory=list)

    @property
    def cases(self) -> list[Case]:
        return [ln.case for ln in self.lines if ln.case is not None]

    @property
    def cases_version(self) -> str:
        return self.version or f"sha256:{self.sha256}"

    def by_id(self) -> dict[str, Case]:
        return {c.id: c for c in self.cases}


def parse_case_line(text: str, file: str, number: int) -> Case:
    """Parse one line into a Case; raises LoadError naming file:line and the field."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise LoadError([Problem(file, number, "$", f"not a JSON object: {exc}")]) from None
    if not isinstance(data, dict):
        raise LoadError([Problem(file, number, "$", "each line must be a JSON object")])
    reject_duplicate_keys(text, file, number)
    try:
        return Case.model_validate(data)
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


_UNION_TAGS = {"bool", "list[str]", "str", "int", "float", "dict[str,any]"}


def parse_cases(data: bytes, file: str = "<cases>", *, strict: bool = True) -> CaseFile:
    """Parse a whole case file. With ``strict`` any problem raises LoadError."""
    lines: list[CaseLine] = []
    problems: list[Problem] = []
    version: str | None = None
    seen: dict[str, int] = {}
    raw_lines = data.split(b"\n")
    for number, raw in enumerate(raw_lines, start=1):
        if number > 1 and raw == b"" and number == len(raw_lines):
            break  # the empty string after the final newline
        try:
            line = raw.decode("utf-8")
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
        if line.lstrip().startswith('{"cases_version"'):
            try:
                meta = orjson.loads(line)
            except orjson.JSONDecodeError:
                meta = None
            if isinstance(meta, dict) and set(meta) == {"cases_version"}:
                version = str(meta["cases_version"])
                continue
        try:
            case = parse_case_line(line, file, number)
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


def load_cases(path: str | Path, *, strict: bool = True) -> CaseFile:
    return parse_cases(read_file(path), str(path), strict=strict)
