"""The providers' tool JSON as their SDKs take it (providers.md A2, B2, C2, D2, D6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.importers import Cli
from toolstand.importers.build import write_new
from toolstand.importers.providers import parse_provider_tools
from toolstand.spec.contract import load_contract
from toolstand.util.problems import LoadError

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WHEN = {
    "type": "object",
    "properties": {"when": {"type": "string", "format": "date"}, "seats": {"type": "integer"}},
    "required": ["when"],
    "additionalProperties": False,
}

# one fixture per wire form, as the SDK's own examples write them
OPENAI_CHAT = [
    {"type": "function", "function": {"name": "get_weather", "description": "Get current weather for a city.", "parameters": CITY, "strict": False}},
    {"type": "function", "function": {"name": "book_table", "description": "Book a table.", "parameters": WHEN}},
]  # fmt: skip
OPENAI_RESPONSES = [
    {"type": "function", "name": "get_weather", "description": "Get current weather for a city.", "parameters": CITY, "strict": True},
    {"type": "function", "name": "book_table", "description": "Book a table.", "parameters": WHEN, "strict": None},
]  # fmt: skip
ANTHROPIC = [
    {"name": "get_weather", "description": "Get current weather for a city.", "input_schema": CITY},
    {"name": "book_table", "description": "Book a table.", "input_schema": WHEN, "cache_control": {"type": "ephemeral"}},
]  # fmt: skip
GEMINI_JSON_SCHEMA = [
    {"functionDeclarations": [
        {"name": "get_weather", "description": "Get current weather for a city.", "parametersJsonSchema": CITY},
        {"name": "book_table", "description": "Book a table.", "parametersJsonSchema": WHEN},
    ]}
]  # fmt: skip


def tools_of(data: Any, api: str) -> list[dict[str, Any]]:
    got = parse_provider_tools(json.dumps(data, indent=1), api, "tools.json")
    assert got.errors == []
    return got.tools


@pytest.mark.parametrize(
    ("data", "api"),
    [
        (OPENAI_CHAT, "openai"),
        (OPENAI_RESPONSES, "openai"),
        ({"model": "gpt-4.1", "tools": OPENAI_CHAT}, "openai"),
        (ANTHROPIC, "anthropic"),
        (GEMINI_JSON_SCHEMA, "gemini"),
        ({"tools": GEMINI_JSON_SCHEMA}, "gemini"),
        (GEMINI_JSON_SCHEMA[0], "gemini"),
    ],
)
def test_every_wire_form_reads_to_the_same_tools(data: Any, api: str) -> None:
    assert tools_of(data, api) == [
        {
            "name": "get_weather",
            "description": "Get current weather for a city.",
            "parameters": CITY,
        },
        {"name": "book_table", "description": "Book a table.", "parameters": WHEN},
    ]


def test_gemini_openapi_subset_becomes_json_schema_with_each_rewrite_named() -> None:
    decl = {
        "name": "set_level",
        "description": "Set a level.",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "level": {"type": "INTEGER", "format": "enum", "enum": ["1", "2", "3"]},
                "label": {"type": "STRING", "nullable": True, "maxLength": 20},
                "tags": {"type": "ARRAY", "items": {"type": "STRING"}},
            },
            "required": ["level"],
            "propertyOrdering": ["level", "label", "tags"],
        },
    }
    got = parse_provider_tools(
        json.dumps([{"functionDeclarations": [decl]}], indent=1), "gemini", "g.json"
    )
    assert got.tools[0]["parameters"] == {
        "type": "object",
        "properties": {
            "level": {"type": "integer", "enum": [1, 2, 3]},
            "label": {"type": ["string", "null"], "maxLength": 20},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["level"],
        "propertyOrdering": ["level", "label", "tags"],  # kept as given
    }
    paths = {w.path: w.message for w in got.warnings}
    base = "$[0].functionDeclarations[0].parameters.properties"
    assert "read as numbers" in paths[f"{base}.level.enum"]
    assert "type ['string', 'null']" in paths[f"{base}.label.nullable"]


def test_what_a_contract_cannot_hold_is_a_warning_naming_the_field() -> None:
    text = json.dumps(ANTHROPIC, indent=1)
    got = parse_provider_tools(text, "anthropic", "a.json")
    (warning,) = got.warnings
    assert warning.path == "$[1].cache_control" and warning.line is not None
    assert '"cache_control"' in text.splitlines()[warning.line - 1]
    got = parse_provider_tools(json.dumps(OPENAI_CHAT, indent=1), "openai", "o.json")
    assert [w.path for w in got.warnings] == ["$[0].function.strict"]


def test_broken_tool_json_names_file_line_and_path() -> None:
    bad = [{"name": "ok", "description": "d", "input_schema": CITY}, {"description": "no name"}]
    got = parse_provider_tools(json.dumps(bad, indent=1), "anthropic", "a.json")
    (error,) = got.errors
    assert (error.file, error.path) == ("a.json", "$[1].name") and error.line is not None
    both = [{"functionDeclarations": [{"name": "x", "parameters": {}, "parametersJsonSchema": {}}]}]
    got = parse_provider_tools(json.dumps(both), "gemini", "g.json")
    assert "exclude each other" in got.errors[0].message
    with pytest.raises(LoadError, match="expected a JSON array of tools"):
        parse_provider_tools('"tools"', "openai", "o.json")


def test_a_name_given_twice_is_an_error_naming_the_source(tmp_path: Path, cli: Cli) -> None:
    twice = [ANTHROPIC[0], {**ANTHROPIC[0], "description": "Again."}]
    src = tmp_path / "tools.json"
    src.write_text(json.dumps(twice, indent=1), encoding="utf-8")
    text = src.read_text(encoding="utf-8")
    (error,) = parse_provider_tools(text, "anthropic", "a.json").errors
    assert error.path == "$[1].name" and error.line is not None
    assert text.splitlines()[error.line - 1].strip() == '"name": "get_weather",'
    assert "duplicate tool name 'get_weather'" in error.message
    out = tmp_path / "c.json"
    ran = cli("contract", "import", "--from", "anthropic", str(src), "--name", "w", "--version", "1",
              "--out", str(out))  # fmt: skip
    assert ran.code == 2 and f"{src}:{error.line}: $[1].name: duplicate tool name" in ran.err
    assert not out.exists()


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "not JSON: Input is a zero-length, empty document"),
        (b"nope\x1b[2J", "not JSON:"),
        (b"\xff\xfe", "not UTF-8 text: byte 1"),
    ],
)
def test_an_empty_or_unreadable_tool_file_is_refused(
    tmp_path: Path, cli: Cli, data: bytes, said: str
) -> None:
    src = tmp_path / "tools.json"
    src.write_bytes(data)
    out = tmp_path / "c.json"
    ran = cli("contract", "import", "--from", "openai", str(src), "--name", "w", "--version", "1",
              "--out", str(out))  # fmt: skip
    assert ran.code == 2 and f"{src}:1: $: {said}" in ran.err
    assert "\x1b" not in ran.err and not out.exists()


def test_server_tools_and_custom_tools_are_skipped_with_a_warning() -> None:
    data = [*ANTHROPIC, {"type": "web_search_20250305", "name": "web_search"}]
    got = parse_provider_tools(json.dumps(data), "anthropic", "a.json")
    assert [t["name"] for t in got.tools] == ["get_weather", "book_table"]
    assert any("server tool" in w.message for w in got.warnings)
    data2 = [*OPENAI_CHAT, {"type": "custom", "name": "free_text"}]
    got = parse_provider_tools(json.dumps(data2), "openai", "o.json")
    assert len(got.tools) == 2 and any("not a function" in w.message for w in got.warnings)


def write(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return str(path)


def test_import_defaults_to_execute_and_names_each_defaulted_tool(tmp_path: Path, cli: Cli) -> None:
    src = write(tmp_path / "tools.json", OPENAI_CHAT)
    out = tmp_path / "c.json"
    argv = ("contract", "import", "--from", "openai", src, "--name", "w", "--version", "1")
    ran = cli(*argv, "--out", str(out))
    assert ran.code == 0 and ran.out.strip() == str(out)
    assert (
        "effect execute (state-changing) for: get_weather, book_table (no readOnlyHint: true)"
        in ran.err
    )
    contract = load_contract(out)
    assert [t.effect for t in contract.tools] == ["execute", "execute"]
    assert contract.source is not None and contract.source["kind"] == "openai"
    ran = cli(*argv, "--out", str(out))
    assert ran.code == 2 and "already exists; not overwritten" in ran.err


def test_an_out_path_that_cannot_be_written_is_a_clean_error(tmp_path: Path, cli: Cli) -> None:
    src = write(tmp_path / "tools.json", ANTHROPIC)
    argv = ("contract", "import", "--from", "anthropic", src, "--name", "w", "--version", "1")
    folder = tmp_path / "a_folder"
    folder.mkdir()
    ran = cli(*argv, "--out", str(folder), "--force")
    assert ran.code == 2 and f"{folder}: $: cannot write: Is a directory" in ran.err
    assert list(folder.iterdir()) == [] and not list(tmp_path.glob(".*.tmp"))
    below_a_file = tmp_path / "tools.json" / "c.json"
    ran = cli(*argv, "--out", str(below_a_file))
    assert ran.code == 2 and f"{below_a_file}: $: cannot write:" in ran.err


def test_force_overwrites_an_existing_contract(tmp_path: Path, cli: Cli) -> None:
    src = write(tmp_path / "tools.json", ANTHROPIC)
    out = tmp_path / "c.json"
    out.write_text("an older contract", encoding="utf-8")
    ran = cli("contract", "import", "--from", "anthropic", src, "--name", "w", "--version", "2",
              "--out", str(out), "--force")  # fmt: skip
    assert ran.code == 0 and load_contract(out).version == "2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "tools.json"]


def test_a_file_another_process_made_after_the_check_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "c.json"
    out.write_bytes(b"theirs")
    with monkeypatch.context() as m:
        m.setattr(Path, "exists", lambda self: False)  # as if written just after the check
        with pytest.raises(LoadError, match="already exists; not overwritten"):
            write_new(out, b"ours")
    assert out.read_bytes() == b"theirs" and [p.name for p in tmp_path.iterdir()] == ["c.json"]


def test_effect_flags_set_effects_and_refuse_unknown_tools(tmp_path: Path, cli: Cli) -> None:
    src = write(tmp_path / "tools.json", ANTHROPIC)
    out = str(tmp_path / "c.json")
    ran = cli("contract", "import", "--from", "anthropic", src, "--name", "w", "--version", "1", "--out", out,
              "--effect", "get_weather=read", "book_table=prepare")  # fmt: skip
    assert ran.code == 0 and "defaulted" not in ran.err
    assert [t.effect for t in load_contract(out).tools] == ["read", "prepare"]
    ran = cli("contract", "import", "--from", "anthropic", src, "--name", "w", "--version", "1", "--out",
              str(tmp_path / "d.json"), "--effect", "get_wether=read")  # fmt: skip
    assert (
        ran.code == 2
        and "no such tool: get_wether; the source has: book_table, get_weather" in ran.err
    )
    ran = cli("contract", "import", "--from", "anthropic", src, "--name", "w", "--version", "1", "--out",
              str(tmp_path / "d.json"), "--effect", "get_weather=harmless")  # fmt: skip
    assert ran.code == 2 and "EFFECT one of read, prepare, execute" in ran.err
    ran = cli("contract", "import", "--from", "anthropic", src, "--name", "w", "--version", "1", "--out",
              str(tmp_path / "d.json"), "--effect", "get_weather=read", "get_weather=execute")  # fmt: skip
    assert ran.code == 2 and "'get_weather' is given read and execute: give one effect" in ran.err
    assert not (tmp_path / "d.json").exists()


@pytest.mark.parametrize("api", ["openai", "anthropic", "gemini"])
def test_import_export_import_changes_nothing(tmp_path: Path, cli: Cli, api: str) -> None:
    """A contract imported, exported as the adapter sends it and imported again is the
    same contract, byte for byte: same tools, same effects, same source hash."""
    data = {"openai": OPENAI_RESPONSES, "anthropic": ANTHROPIC, "gemini": GEMINI_JSON_SCHEMA}[api]
    effects = ["--effect", "get_weather=read", "book_table=execute"]
    first = tmp_path / "first.json"
    src = write(tmp_path / "src.json", data)
    assert cli("contract", "import", "--from", api, src, "--name", "w", "--version", "3", "--out", str(first), *effects).code == 0  # fmt: skip
    exported = cli("contract", "export", "--to", api, "--tools", str(first))
    assert exported.code == 0
    again = write(tmp_path / "exported.json", orjson.loads(exported.out))
    second = tmp_path / "second.json"
    assert cli("contract", "import", "--from", api, again, "--name", "w", "--version", "3", "--out", str(second), *effects).code == 0  # fmt: skip
    assert second.read_bytes() == first.read_bytes()


def test_gemini_defs_and_refs_become_dollar_defs_and_refs() -> None:
    decl = {"name": "f", "description": "F.", "parameters": {
        "type": "OBJECT", "properties": {"at": {"ref": "#/defs/Place"}},
        "defs": {"Place": {"type": "STRING"}}}}  # fmt: skip
    got = parse_provider_tools(json.dumps([decl]), "gemini", "g.json")
    assert got.errors == []
    assert got.tools[0]["parameters"] == {
        "type": "object",
        "properties": {"at": {"$ref": "#/$defs/Place"}},
        "$defs": {"Place": {"type": "string"}},
    }
    assert {w.path for w in got.warnings} == {
        "$[0].parameters.defs",
        "$[0].parameters.properties.at.ref",
    }


def test_a_gemini_type_list_holding_an_object_is_kept_not_a_crash() -> None:
    odd = {"type": [{}], "enum": ["1"]}
    decl = {"name": "f", "parameters": {"type": "OBJECT", "properties": {"a": odd}}}
    got = parse_provider_tools(json.dumps([decl]), "gemini", "g.json")
    assert got.tools[0]["parameters"]["properties"]["a"] == odd


def test_a_schema_the_contract_refuses_names_the_unwritten_file_by_path(
    tmp_path: Path, cli: Cli
) -> None:
    bad = [{**ANTHROPIC[0], "input_schema": {"type": "object", "properties": {"a": {"type": 3}}}}]
    src = write(tmp_path / "tools.json", bad)
    out = tmp_path / "c.json"
    ran = cli("contract", "import", "--from", "anthropic", src, "--name", "w", "--version", "1",
              "--out", str(out))  # fmt: skip
    assert ran.code == 2 and not out.exists()
    assert f"{out} (not written): $.tools[0].parameters.properties.a.type: " in ran.err


def test_one_source_at_a_time_and_urls_that_are_urls(tmp_path: Path, cli: Cli) -> None:
    src = write(tmp_path / "tools.json", OPENAI_CHAT)
    base = [
        "contract",
        "import",
        "--name",
        "w",
        "--version",
        "1",
        "--out",
        str(tmp_path / "c.json"),
    ]
    ran = cli(*base, "--from", "openai", src, "--mcp", "--", "server")
    assert ran.code == 2 and "give one source" in ran.err
    ran = cli(*base, "--mcp-url", "file:///etc/passwd")
    assert ran.code == 2 and "not an http(s) URL with a host" in ran.err
    ran = cli(*base, "--from", "openai")
    assert ran.code == 2 and "give the openai tool JSON file" in ran.err
    ran = cli("check", "--quiet", "--from", "anthropic")  # not a lint that ignores the flag
    assert ran.code == 2 and "give the anthropic tool JSON file" in ran.err


def test_a_command_after_dashes_goes_only_with_a_server_flag(cli: Cli) -> None:
    ran = cli("check", "--tools", "c.json", "--", "server")
    assert ran.code == 2 and "a command after -- goes with --against-mcp" in ran.err
    ran = cli("contract", "export", "--to", "gemini", "--", "server")
    assert ran.code == 2 and "export takes no command after --" in ran.err


def test_values_a_contract_cannot_hold_are_one_line_errors_from_files(
    tmp_path: Path, cli: Cli
) -> None:
    big = '[{"type":"function","function":{"name":"big","description":"d","parameters":' \
        '{"type":"object","properties":{"n":{"type":"integer","maximum":1180591620717411303424}}}}}]'  # fmt: skip
    deep: dict[str, object] = {"type": "object"}
    for i in range(150):
        deep = {"type": "object", "properties": {f"l{i}": deep}}
    nested = json.dumps([{"type": "function", "function": {"name": "deep", "parameters": deep}}])
    for name, text, message in [
        ("big.json", big, "$[0].function.parameters.properties.n.maximum: 1180591620717411303424 "
                          "is beyond 64 bits"),
        ("deep.json", nested, "nested deeper than 128 levels"),
    ]:  # fmt: skip
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        out = tmp_path / f"out-{name}"
        ran = cli("contract", "import", "--from", "openai", str(path), "--name", "x",
                  "--version", "1", "--out", str(out))  # fmt: skip
        assert ran.code == 2 and message in ran.err, ran.err
        assert "Traceback" not in ran.err and len(ran.err.strip().splitlines()) == 1
        assert not out.exists()
