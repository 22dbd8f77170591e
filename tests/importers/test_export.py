"""`contract export`: the tools exactly as the adapter puts them in its request body."""

from __future__ import annotations

import orjson
import pytest

from tests.support.importers import Cli
from toolstand.adapters import get_adapter
from toolstand.adapters.base import RequestSettings
from toolstand.spec.contract import Contract

APIS = {"openai": "openai-chat", "openai-responses": "openai-responses", "anthropic": "anthropic", "gemini": "gemini"}  # fmt: skip


def sent_tools(contract: Contract, api: str, options: dict[str, object] | None = None) -> object:
    """What a run would send: the adapter's body for a real case's request."""
    built = get_adapter(api).build_request(
        base_url="https://api.example.com",
        model="m",
        system="You route delivery questions.",
        messages=[{"role": "user", "content": "Where is ORD-123456?"}],
        tools=contract.tools,
        settings=RequestSettings(tool_choice="required", options=dict(options or {})),
    )
    return built.http.body["tools"]


@pytest.mark.parametrize("to", list(APIS))
def test_export_prints_what_the_adapter_sends(
    cli: Cli, contract: Contract, root: object, to: str
) -> None:
    ran = cli("contract", "export", "--to", to, "--tools", f"{root}/contracts/delivery_tools.json")
    assert ran.code == 0
    assert orjson.loads(ran.out) == sent_tools(contract, APIS[to])
    assert "x-normalize" not in ran.out  # the stand's own keywords never reach a model


def test_export_takes_run_options_and_a_subset(cli: Cli, contract: Contract, root: object) -> None:
    path = f"{root}/contracts/delivery_tools.json"
    ran = cli("contract", "export", "--to", "openai", "--tools", path, "--option", "strict=true")
    assert orjson.loads(ran.out) == sent_tools(contract, "openai-chat", {"strict": True})
    assert all(t["function"]["strict"] is True for t in orjson.loads(ran.out))
    ran = cli(
        "contract",
        "export",
        "--to",
        "gemini",
        "--tools",
        path,
        "--option",
        "gemini_schema=parameters",
    )
    assert "parametersJsonSchema" not in ran.out and '"parameters"' in ran.out
    first = contract.tools[0].name
    ran = cli("contract", "export", "--to", "anthropic", "--tools", path, "--only", first)
    assert [t["name"] for t in orjson.loads(ran.out)] == [first]
    ran = cli("contract", "export", "--to", "anthropic", "--tools", path, "--only", "nope")
    assert ran.code == 2 and "no such tool: nope" in ran.err
    ran = cli("contract", "export", "--to", "gemini", "--tools", path, "--option", "strict=true")
    assert (
        ran.code == 2 and "gemini takes no option 'strict'; its options: gemini_schema" in ran.err
    )
    ran = cli(
        "contract", "export", "--to", "gemini", "--tools", path, "--option", "gemini_schema=x"
    )
    assert ran.code == 2 and "$.gemini_schema" in ran.err


@pytest.mark.parametrize("only", ["", " , "])
def test_an_only_that_names_no_tool_is_refused(cli: Cli, root: object, only: str) -> None:
    path = f"{root}/contracts/delivery_tools.json"
    ran = cli("contract", "export", "--to", "anthropic", "--tools", path, "--only", only)
    assert ran.code == 2 and ran.out == "" and f"--only: $: names no tool (got {only!r})" in ran.err


GEMINI_CASE = {
    "name": "g",
    "version": "1",
    "tools": [
        {
            "name": "pick",
            "description": "Pick things.",
            "effect": "read",
            "parameters": {
                "type": "object",
                "$defs": {"size": {"type": "string", "enum": ["s", "m"]}},
                "properties": {
                    "mode": {"type": ["string", "null"], "enum": ["a", "b", None]},
                    "level": {"type": "integer", "enum": [1, 2]},
                    "size": {"$ref": "#/$defs/size"},
                    "mixed": {"enum": [1, "x"]},
                    "both": {
                        "allOf": [{"type": "object", "properties": {"p": {"type": "string"}}}]
                    },
                },
            },
        }
    ],
}


def test_gemini_parameters_keeps_what_the_form_can_hold_and_says_each_change(
    cli: Cli, tmp_path: object
) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "g.json"
    path.write_text(orjson.dumps(GEMINI_CASE).decode(), encoding="utf-8")
    ran = cli("contract", "export", "--to", "gemini", "--tools", str(path),
              "--option", "gemini_schema=parameters")  # fmt: skip
    assert ran.code == 0, ran.err
    (decl,) = orjson.loads(ran.out)[0]["functionDeclarations"]
    props = decl["parameters"]["properties"]
    assert props["mode"] == {"type": "string", "nullable": True, "enum": ["a", "b"]}
    assert props["level"] == {"type": "integer", "format": "enum", "enum": ["1", "2"]}
    assert props["size"] == {"type": "string", "enum": ["s", "m"]}
    assert props["mixed"] == {"anyOf": [{"type": "integer", "format": "enum", "enum": ["1"]},
                                        {"type": "string", "enum": ["x"]}]}  # fmt: skip
    assert props["both"] == {"type": "object", "properties": {"p": {"type": "string"}}}
    assert "$defs" not in decl["parameters"]
    # every note the run would record, on stderr
    assert "pick: $.properties.size: rewritten $ref: #/$defs/size inlined" in ran.err
    assert "pick: $.properties.both: rewritten allOf: merged into the schema" in ran.err
    assert "pick: $.properties.level: rewritten enum: enum as type integer, format enum" in ran.err
    # and the importer reads the form back to the same constraints
    back = tmp_path_file = Path(str(tmp_path)) / "back.json"
    back.write_text(ran.out, encoding="utf-8")
    out = Path(str(tmp_path)) / "round.json"
    ran = cli("contract", "import", "--from", "gemini", str(tmp_path_file), "--name", "g",
              "--version", "1", "--out", str(out))  # fmt: skip
    assert ran.code == 0, ran.err
    round_props = orjson.loads(out.read_bytes())["tools"][0]["parameters"]["properties"]
    assert round_props["level"] == {"type": "integer", "enum": [1, 2]}
    assert round_props["mode"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
