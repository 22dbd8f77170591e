"""A case being edited: form values, the case line they make, and what is wrong with it.

No Textual here: the form widget hands over FormValues and shows what ``check_draft``
returns, field by field. The rules are the core's (``parse_case_line``,
``violations``, ``check_cases``); this module only routes their findings to
the field the user can fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from toolstand.lint.check import check_cases
from toolstand.spec.cases import CaseFile, CaseLine, parse_case_line
from toolstand.spec.contract import Contract, ToolSpec
from toolstand.spec.violations import violations
from toolstand.util.canonical import canonical_equal
from toolstand.util.printable import visible, visible_lines
from toolstand.util.problems import LoadError, Problem

ROLES = ("user", "assistant")


@dataclass
class FormValues:
    """What the form shows, as text and choices (JSON fields stay text until checked)."""

    id: str = ""
    category: str | None = None
    conversation: bool = False
    user: str = ""
    messages: str = ""  # "user: ..." / "assistant: ..." turns
    all_tools: bool = True
    active_tools: list[str] = field(default_factory=list)
    kind: str = "text"
    several: bool = False
    tool: str | None = None
    arguments: str = ""
    calls: str = ""
    order: str = "any"
    must_not_call: str = "unset"  # unset | all | tools
    must_not_call_tools: list[str] = field(default_factory=list)
    contains_any: str = ""
    followup: bool = False
    tool_results: str = ""
    followup_must_not_call: list[str] = field(default_factory=list)
    followup_contains_any: str = ""
    must_not_contain: str = ""
    note: str = ""
    # what the form has no field for, carried into the line as it was: a case's own
    # ``tools`` and an expectation's ``accept``/``may_omit`` (every BFCL case)
    carried: dict[str, Any] = field(default_factory=dict)
    carried_expect: dict[str, Any] = field(default_factory=dict)


# the keys values_from_case shows in fields; any other key of a case is carried
_FORM_KEYS = frozenset(
    ("id", "category", "user", "messages", "active_tools", "expect", "followup", "note")
)
_EXPECT_CARRIED = ("accept", "may_omit")


@dataclass
class Draft:
    data: dict[str, Any] | None
    text: str | None
    field_errors: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    changed: bool = True

    @property
    def valid(self) -> bool:
        return self.text is not None and not self.field_errors and not self.errors

    @property
    def reason(self) -> str:
        """The first problem, as one line naming the field."""
        for name, msgs in self.field_errors.items():
            return f"{name}: {msgs[0]}"
        return self.errors[0] if self.errors else ""


# orjson escapes C0 controls in JSON text but leaves DEL and C1 as they are; escaped as
# \u00XX they read the same to JSON and cannot drive the terminal
_RAW_IN_JSON = re.compile("[\x7f-\x9f]")


def _pretty(value: Any) -> str:
    text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _lines(values: list[str] | None) -> str:
    """One item a line; control characters (a newline inside an item too) spelled."""
    return "\n".join(visible(str(v)) for v in values or [])


def _messages(messages: Any) -> str:
    return visible_lines("\n".join(f"{m.get('role')}: {m.get('content')}" for m in messages or []))


def _kept(typed: str, original: Any, spell: Callable[[Any], str]) -> bool:
    """The form shows ``original`` spelled (control characters as \\xNN) and the user
    left it as shown: the original value stands, not its spelling."""
    return original is not None and typed == spell(original)


def values_from_case(data: dict[str, Any]) -> FormValues:
    """Form values showing a case dict (as read from its line)."""
    expect = data.get("expect") or {}
    followup = data.get("followup")
    mnc = expect.get("must_not_call")
    messages = data.get("messages")
    v = FormValues(
        id=visible(str(data.get("id", ""))),
        category=data.get("category"),
        conversation=messages is not None,
        user=visible_lines(data.get("user") or ""),
        messages=_messages(messages),
        all_tools=data.get("active_tools") is None,
        active_tools=list(data.get("active_tools") or []),
        kind=expect.get("kind", "text"),
        several=bool(expect.get("calls")),
        tool=expect.get("tool"),
        arguments=_pretty(expect["arguments"]) if expect.get("arguments") is not None else "",
        calls=_pretty(expect["calls"]) if expect.get("calls") else "",
        order=expect.get("order", "any"),
        must_not_call="all" if mnc is True else "tools" if isinstance(mnc, list) else "unset",
        must_not_call_tools=list(mnc) if isinstance(mnc, list) else [],
        contains_any=_lines(expect.get("contains_any")),
        followup=followup is not None,
        note=visible(data.get("note") or ""),
        carried={k: data[k] for k in data if k not in _FORM_KEYS},
        # with the tool they belong to: another tool chosen drops them
        carried_expect={k: expect[k] for k in ("tool", *_EXPECT_CARRIED) if k in expect},
    )
    if followup is not None:
        if followup.get("tool_results"):
            v.tool_results = _pretty(followup["tool_results"])
        v.followup_must_not_call = list(followup.get("must_not_call") or [])
        v.followup_contains_any = _lines(followup.get("contains_any"))
        v.must_not_contain = _lines(followup.get("must_not_contain"))
    return v


def parse_conversation(text: str) -> tuple[list[dict[str, str]], str | None]:
    """Turns written as "user: ..." / "assistant: ..."; a line without a role continues
    the turn above. Returns the messages and the problem, if any."""
    out: list[dict[str, str]] = []
    for n, line in enumerate(text.split("\n"), start=1):
        head, sep, rest = line.partition(":")
        if sep and head.strip() in ROLES:
            out.append({"role": head.strip(), "content": rest.removeprefix(" ")})
        elif out:
            out[-1]["content"] += "\n" + line
        elif line.strip():
            return [], f"line {n}: start each turn with 'user:' or 'assistant:'"
    for m in out:
        m["content"] = m["content"].rstrip("\n")
    if not out:
        return [], "write at least one 'user:' turn"
    if out[-1]["role"] != "user":
        return out, "the conversation must end with the user's last message"
    return out, None


def _json(text: str) -> tuple[Any, str | None]:
    try:
        return orjson.loads(text), None
    except orjson.JSONDecodeError as exc:
        return None, f"invalid_json: {exc}"


def argument_errors(arguments: Any, tool: ToolSpec | None, prefix: str = "$") -> list[str]:
    """Schema violations of expected arguments, each as subcode and JSON path."""
    if not isinstance(arguments, dict):
        return [f"invalid_json: {prefix} must be a JSON object"]
    if tool is None:
        return []
    return [
        f"invalid_arguments.{v.subcode} at {prefix}{v.path.removeprefix('$')}: {v.message}"
        for v in violations(tool, arguments)
    ]


def _string_lines(text: str) -> list[str]:
    # surrounding spaces are invisible in the form, so they never count
    return [s.strip() for s in text.split("\n") if s.strip()]


def _ordered(new: dict[str, Any], original: dict[str, Any] | None) -> dict[str, Any]:
    """Keep the original's key order so an edited line reads like its neighbours."""
    if not original:
        return new
    out = {k: new[k] for k in original if k in new}
    out.update((k, v) for k, v in new.items() if k not in out)
    return out


class _Builder:
    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self.errors: dict[str, list[str]] = {}

    def fail(self, name: str, message: str) -> None:
        self.errors.setdefault(name, []).append(message)

    def json_field(self, name: str, text: str) -> Any:
        value, problem = _json(text)
        if problem:
            self.fail(name, problem)
        return value

    def expect(self, v: FormValues, original: dict[str, Any]) -> dict[str, Any]:
        e: dict[str, Any] = {"kind": v.kind}
        carried = v.carried_expect
        if v.kind == "tool_call" and v.several:
            calls = self.json_field("calls", v.calls or "[]")
            if calls is not None and not isinstance(calls, list):
                self.fail("calls", 'give a JSON list of {"tool": ..., "arguments": {...}}')
            elif calls is not None:
                for i, call in enumerate(calls):
                    if not isinstance(call, dict) or "arguments" not in call:
                        continue
                    tool = self.contract.tool(str(call.get("tool")))
                    for msg in argument_errors(call["arguments"], tool, f"$[{i}].arguments"):
                        self.fail("calls", msg)
                e["calls"] = calls
            if v.order != "any" or "order" in original:
                e["order"] = v.order
        elif v.kind == "tool_call":
            if v.tool:
                e["tool"] = v.tool
            if v.arguments.strip():
                args = self.json_field("arguments", v.arguments)
                if args is not None:
                    tool = self.contract.tool(v.tool or "")
                    for msg in argument_errors(args, tool):
                        self.fail("arguments", msg)
                    e["arguments"] = args
            elif v.tool and v.tool == carried.get("tool"):  # no arguments typed
                e.update((k, carried[k]) for k in _EXPECT_CARRIED if k in carried)
        if v.must_not_call == "all":
            e["must_not_call"] = True
        elif v.must_not_call == "tools":
            e["must_not_call"] = self._in_contract_order(v.must_not_call_tools)
        if _kept(v.contains_any, original.get("contains_any"), _lines):
            e["contains_any"] = original["contains_any"]
        elif contains := _string_lines(v.contains_any):
            e["contains_any"] = contains
        return _ordered(e, original)

    def followup(self, v: FormValues, original: dict[str, Any]) -> dict[str, Any]:
        f: dict[str, Any] = {}
        if v.tool_results.strip():
            results = self.json_field("tool_results", v.tool_results)
            if results is not None and not isinstance(results, dict):
                self.fail("tool_results", "give a JSON object: tool name -> its result object")
            elif results is not None:
                for name, result in results.items():
                    if not isinstance(result, dict):
                        self.fail("tool_results", f"$.{name}: a result is a JSON object")
                f["tool_results"] = results
        if v.followup_must_not_call:
            f["must_not_call"] = self._in_contract_order(v.followup_must_not_call)
        for key, typed in (
            ("contains_any", v.followup_contains_any),
            ("must_not_contain", v.must_not_contain),
        ):
            if _kept(typed, original.get(key), _lines):
                f[key] = original[key]
            elif items := _string_lines(typed):
                f[key] = items
        return _ordered(f, original)

    def _in_contract_order(self, names: list[str]) -> list[str]:
        known = [t.name for t in self.contract.tools if t.name in names]
        return known + [n for n in names if n not in known]

    def case(self, v: FormValues, original: dict[str, Any] | None) -> dict[str, Any]:
        orig = original or {}
        kept = _kept(v.id, orig.get("id"), lambda x: visible(str(x)))
        d: dict[str, Any] = {"id": orig["id"] if kept else v.id.strip()}
        if v.category:
            d["category"] = v.category
        if v.conversation and _kept(v.messages, orig.get("messages"), _messages):
            d["messages"] = orig["messages"]
        elif v.conversation:
            messages, problem = parse_conversation(v.messages)
            if problem:
                self.fail("prompt", problem)
            d["messages"] = messages
        else:
            d["user"] = orig["user"] if _kept(v.user, orig.get("user"), visible_lines) else v.user
        if not v.all_tools:
            d["active_tools"] = self._in_contract_order(v.active_tools)
        d["expect"] = self.expect(v, orig.get("expect") or {})
        d.update((k, val) for k, val in v.carried.items() if k not in d)
        if v.followup:
            d["followup"] = self.followup(v, orig.get("followup") or {})
        if _kept(v.note, orig.get("note"), visible):
            d["note"] = orig["note"]
        elif v.note.strip():
            d["note"] = v.note
        return _ordered(d, orig)


# JSON path prefixes of the core's problems, and the form field that can fix each
_FIELDS: tuple[tuple[str, str], ...] = (
    ("$.id", "id"),
    ("$.category", "category"),
    ("$.user", "prompt"),
    ("$.messages", "prompt"),
    ("$.active_tools", "active_tools"),
    ("$.expect.tool", "tool"),
    ("$.expect.arguments", "arguments"),
    ("$.expect.calls", "calls"),
    ("$.expect.order", "calls"),
    ("$.expect.must_not_call", "must_not_call"),
    ("$.expect.contains_any", "contains_any"),
    ("$.expect", "kind"),
    ("$.followup.tool_results", "tool_results"),
    ("$.followup.must_not_call", "followup_must_not_call"),
    ("$.followup.contains_any", "followup_contains_any"),
    ("$.followup.must_not_contain", "must_not_contain"),
    ("$.followup", "followup"),
    ("$.note", "note"),
)


def field_of(path: str) -> str | None:
    for prefix, name in _FIELDS:
        if path == prefix or path.startswith((prefix + ".", prefix + "[")):
            return name
    return None


def check_draft(
    values: FormValues,
    contract: Contract,
    casefile: CaseFile,
    own_line: int | None,
    original: dict[str, Any] | None,
) -> Draft:
    """Build the case line from the form and say what blocks saving it, field by field."""
    builder = _Builder(contract)
    data = builder.case(values, original)
    changed = original is None or not canonical_equal(data, original)
    unparsed = set(builder.errors)
    draft = Draft(data, None, {k: list(v) for k, v in builder.errors.items()}, changed=changed)
    text = orjson.dumps(data).decode()
    number = own_line or len(casefile.lines) + 1
    problems: list[Problem] = []
    try:
        case = parse_case_line(text, casefile.path, number)
    except LoadError as exc:
        problems = exc.problems
    else:
        for line in casefile.lines:
            if line.number != own_line and line.case is not None and line.case.id == case.id:
                problems.append(
                    Problem(
                        casefile.path,
                        number,
                        "$.id",
                        f"id {case.id!r} is used on line {line.number}",
                    )
                )
        alone = CaseFile(casefile.path, [CaseLine(number, text, case)], None, "")
        problems += check_cases(alone, contract)
    for p in problems:
        name = field_of(p.path)
        if p.severity == "warning":
            draft.warnings.append(f"{p.path}: {p.message}")
        elif name in unparsed or (name == "kind" and unparsed):
            continue  # a field that does not parse yet: its own message says more
        elif name is not None:
            draft.field_errors.setdefault(name, []).append(p.message)
        else:
            draft.errors.append(f"{p.path}: {p.message}")
    if not draft.field_errors and not draft.errors:
        draft.text = text
    return draft
