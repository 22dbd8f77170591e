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
