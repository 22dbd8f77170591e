"""`check` warns on what providers refuse in an (imported) contract — a property name
outside Anthropic's pattern, a tool name Gemini refuses, a huge description — and on
two cases that ask the same thing; `check --no-cases` lints the contract alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.importers import Cli


def _contract(tmp_path: Path, tools: list[dict[str, object]]) -> Path:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"name": "c", "version": "1", "tools": tools}), encoding="utf-8")
    return path


def _tool(
    name: str, description: str = "d", props: dict[str, Any] | None = None
) -> dict[str, object]:
    return {"name": name, "description": description, "effect": "read",
            "parameters": {"type": "object", "properties": props or {}}}  # fmt: skip


def test_names_and_descriptions_providers_refuse_are_warnings(tmp_path: Path, cli: Cli) -> None:
    path = _contract(tmp_path, [
        _tool("odd", "d", {"user.name": {"type": "string"}, "first name": {"type": "string"},
                        "имя": {"type": "string"}}),
        _tool("1st_tool"),
        _tool("long", "x" * 100_000),
    ])  # fmt: skip
    ran = cli("check", "--tools", str(path), "--no-cases")
    assert ran.code == 0, ran.out + ran.err
    assert "$.tools[0].parameters.properties.first name: warning: anthropic: a property name " \
        "must match ^[a-zA-Z0-9_.-]{1,64}$" in ran.out  # fmt: skip
    assert "$.tools[0].parameters.properties.имя: warning: anthropic" in ran.out
    assert "properties.user.name: warning" not in ran.out  # dots are allowed
    assert "$.tools[1].name: warning: gemini: a function name starts with a letter or _" in ran.out
    assert "$.tools[2].description: warning: 100000 characters" in ran.out
    assert "check ok: 0 errors" in ran.err and "no cases" in ran.err


def test_two_cases_asking_the_same_are_a_warning(tmp_path: Path, cli: Cli) -> None:
    path = _contract(tmp_path, [_tool("f", props={"q": {"type": "string"}})])
    cases = tmp_path / "cases.jsonl"
    lines = [
        {"id": "a", "user": "Same?", "expect": {"kind": "tool_call", "tool": "f"}},
        {"id": "b", "user": " Same?", "expect": {"kind": "text"}},
        {"id": "c", "user": "Other?", "expect": {"kind": "text"}},
    ]
    cases.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    ran = cli("check", "--tools", str(path), "--cases", str(cases))
    assert ran.code == 0, ran.out + ran.err
    assert f"{cases}:2: $.user: warning: the same question as case 'a' (line 1)" in ran.out
    assert ran.out.count("the same question") == 1


def test_a_case_naming_a_renamed_tool_by_its_servers_name_is_an_error(
    tmp_path: Path, cli: Cli
) -> None:
    renamed = {**_tool("github_create_issue"), "x-mcp-name": "github.create_issue"}
    path = _contract(tmp_path, [renamed])
    cases = tmp_path / "cases.jsonl"
    line = {
        "id": "a",
        "user": "File it",
        "expect": {"kind": "tool_call", "tool": "github.create_issue"},
    }
    cases.write_text(json.dumps(line) + "\n", encoding="utf-8")
    ran = cli("check", "--tools", str(path), "--cases", str(cases))
    assert ran.code == 1
    assert "$.expect.tool: 'github.create_issue' is the server's name; the model is sent " \
        "'github_create_issue': expect that" in ran.out  # fmt: skip
