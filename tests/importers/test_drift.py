"""Drift between a contract and its live source: one line per difference (tool, JSON
path), exit 1 when the contract differs and its version was not bumped; --lock."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tests.support.importers import SERVER, Cli, contract_of
from toolstand.importers.drift import compare, gate
from toolstand.spec.contract import parse_contract

SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string", "maxLength": 10}},
    "required": ["q"],
}
SEARCH = {"name": "search", "description": "Search.", "parameters": SCHEMA}


def test_a_changed_keyword_is_one_line_naming_tool_and_path() -> None:
    contract = contract_of([{**SEARCH, "effect": "read"}])
    live = [
        {
            **SEARCH,
            "parameters": {**SCHEMA, "properties": {"q": {"type": "string", "maxLength": 20}}},
        }
    ]
    (diff,) = compare(contract, live, annotated=False)
    assert str(diff) == "search: $.tools[0].parameters.properties.q.maxLength: changed: 10 → 20"


def test_added_removed_and_described_tools_each_get_a_line() -> None:
    other = {"name": "other", "description": "O.", "parameters": {"type": "object"}}
    contract = contract_of([{**SEARCH, "effect": "read"}, {**other, "effect": "read"}])
    live = [
        {**SEARCH, "description": "Search the web."},
        {"name": "new", "description": "", "parameters": {"type": "object"}},
    ]
    lines = [str(d) for d in compare(contract, live, annotated=False)]
    assert lines == [
        'search: $.tools[0].description: changed: "Search." → "Search the web."',
        "other: $.tools[1]: removed from the source",
        "new: $.tools: added in the source (not in the contract)",
    ]


def test_the_stands_own_keywords_are_not_drift() -> None:
    mine = {
        **SCHEMA,
        "properties": {"q": {"type": "string", "maxLength": 10, "x-normalize": ["strip"]}},
    }
    contract = contract_of([{**SEARCH, "parameters": mine, "effect": "read"}])
    assert compare(contract, [SEARCH], annotated=False) == []


def test_an_annotation_that_moves_the_effect_is_drift_and_others_are_not() -> None:
    contract = contract_of([{**SEARCH, "effect": "read", "x-mcp": {"readOnlyHint": True}}])
    same_effect = [{**SEARCH, "x-mcp": {"readOnlyHint": True, "openWorldHint": True}}]
    assert compare(contract, same_effect, annotated=True) == []
    (diff,) = compare(contract, [{**SEARCH, "x-mcp": {}}], annotated=True)
    assert diff.path == "$.tools[0].x-mcp.readOnlyHint"
    assert diff.message == "changed: true → absent; the effect it implies moves read → execute"


def test_the_bump_rule() -> None:
    contract = contract_of([{**SEARCH, "effect": "read"}], version="1", imported_version="1")
    diffs = compare(contract, [{**SEARCH, "description": "x"}], annotated=False)
    assert not gate(contract, diffs, None, "h").passed
    bumped = contract_of([{**SEARCH, "effect": "read"}], version="2", imported_version="1")
    assert gate(bumped, diffs, None, "h").passed
    assert gate(contract, [], None, "h").passed
    # a lock that accepted this source at this contract; another source is not accepted
    lock = {"version": "1", "hash": contract.hash, "source_hash": "h"}
    assert gate(contract, diffs, lock, "h").passed and not gate(contract, diffs, lock, "h2").passed
    # hand-written, never recorded: a difference fails whatever the version
    assert not gate(
        contract_of([{**SEARCH, "effect": "read"}], version="9"), diffs, None, "h"
    ).passed


@pytest.fixture(scope="module")
def imported_shop(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The test server's contract, imported once for the module: each test gets a copy."""
    from toolstand.cli import main

    out = tmp_path_factory.mktemp("drift") / "shop.json"
    assert main(["contract", "import", "--name", "shop", "--version", "1.0", "--out", str(out),
                 "--mcp", "--", *SERVER]) == 0  # fmt: skip
    return out.read_bytes()


@pytest.fixture
def shop(tmp_path: Path, imported_shop: bytes) -> Path:
    out = tmp_path / "shop.json"
    out.write_bytes(imported_shop)
    return out


def bump(path: Path, version: str) -> None:
    data = orjson.loads(path.read_bytes())
    data["version"] = version
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))


def test_live_drift_fails_until_the_version_is_bumped(
    shop: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = cli("check", "--tools", str(shop), "--against-mcp", "--", *SERVER)
    assert (
        ran.code == 0 and ran.out == "" and "drift ok: the contract matches its source" in ran.err
    )
    monkeypatch.setenv("SHOP_SERVER_VARIANT", "pattern")  # the server's next release
    monkeypatch.setenv("SHOP_SERVER_NAME", "renamed-shop")
    ran = cli("check", "--tools", str(shop), "--against-mcp", "--", *SERVER)
    assert ran.code == 1
    assert "note: the server was test-shop 2.0.1 when imported, now renamed-shop 2.0.1" in ran.err
    assert ran.out.splitlines() == [
        f'{tool}: $.tools[{i}].parameters.properties.order_id.pattern: changed: "^ORD-\\\\d{{6}}$" → "^ORD-\\\\d{{7}}$"'
        for i, tool in ((0, "get_order"), (2, "add_note"), (3, "cancel_order"))
    ]
    assert "3 differences and version '1.0' was not bumped since '1.0'" in ran.err
    bump(shop, "1.1")
    ran = cli("check", "--tools", str(shop), "--against-mcp", "--", *SERVER)
    assert ran.code == 0 and len(ran.out.splitlines()) == 3
    assert "accepted by the version bump '1.0' → '1.1'" in ran.err


def test_live_drift_names_lost_read_only_hints_and_new_tools(
    shop: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHOP_SERVER_VARIANT", "unsafe")
    ran = cli("check", "--tools", str(shop), "--against-mcp", "--", *SERVER)
    assert ran.code == 1
    assert ran.out.splitlines() == [
        "get_order: $.tools[0].x-mcp.readOnlyHint: changed: true → false; the effect it implies moves read → execute"
    ]
    monkeypatch.setenv("SHOP_SERVER_VARIANT", "added")
    ran = cli("check", "--tools", str(shop), "--against-mcp", "--", *SERVER)
    assert (
        ran.code == 1
        and ran.out == "refund_order: $.tools: added in the source (not in the contract)\n"
    )


def test_lock_records_the_source_hash_beside_the_contracts(shop: Path, cli: Cli) -> None:
    ran = cli("check", "--tools", str(shop), "--lock", "--against-mcp", "--", *SERVER)
    assert ran.code == 0
    lock = orjson.loads(shop.with_suffix(".lock.json").read_bytes())
    contract = parse_contract(shop.read_bytes())
    assert contract.source is not None
    assert lock == {
        "name": "shop",
        "version": "1.0",
        "hash": contract.hash,
        "source_hash": contract.source["hash"],
    }


def test_drift_against_a_providers_tool_file(tmp_path: Path, cli: Cli) -> None:
    tools = [{"name": "search", "description": "Search.", "input_schema": SCHEMA}]
    src = tmp_path / "tools.json"
    src.write_text(json.dumps(tools), encoding="utf-8")
    out = tmp_path / "c.json"
    assert cli("contract", "import", "--from", "anthropic", str(src), "--name", "c", "--version", "1",
               "--out", str(out), "--effect", "search=read").code == 0  # fmt: skip
    assert cli("check", "--tools", str(out), "--against", str(src), "--from", "anthropic").code == 0
    tools[0]["input_schema"] = {**SCHEMA, "required": []}
    src.write_text(json.dumps(tools), encoding="utf-8")
    ran = cli("check", "--tools", str(out), "--against", str(src), "--from", "anthropic")
    assert (
        ran.code == 1 and ran.out == 'search: $.tools[0].parameters.required: changed: ["q"] → []\n'
    )


def test_escapes_in_a_sources_description_reach_the_terminal_spelled_out(
    tmp_path: Path, cli: Cli
) -> None:
    tools = [{"name": "search", "description": "Search.", "input_schema": SCHEMA}]
    src = tmp_path / "tools.json"
    src.write_text(json.dumps(tools), encoding="utf-8")
    out = tmp_path / "c.json"
    assert cli("contract", "import", "--from", "anthropic", str(src), "--name", "c", "--version", "1",
               "--out", str(out), "--effect", "search=read").code == 0  # fmt: skip
    tools[0]["description"] = "\x1b]0;owned\x07Search\x9b2J"
    tools.append({"name": "x\x1b[2J", "description": "", "input_schema": SCHEMA})
    src.write_text(json.dumps(tools), encoding="utf-8")
    ran = cli("check", "--tools", str(out), "--against", str(src), "--from", "anthropic")
    assert ran.code == 2 and "'x\\x1b[2J' cannot name a tool here" in ran.err
    tools.pop()
    src.write_text(json.dumps(tools), encoding="utf-8")
    ran = cli("check", "--tools", str(out), "--against", str(src), "--from", "anthropic")
    assert ran.code == 1
    assert ran.out == (
        'search: $.tools[0].description: changed: "Search." → '
        '"\\u001b]0;owned\\u0007Search\\x9b2J"\n'
    )
    assert not any(c in ran.out + ran.err for c in "\x1b\x07\x9b")


def test_a_source_naming_a_tool_twice_is_refused_not_matched(tmp_path: Path, cli: Cli) -> None:
    tools = [{"name": "search", "description": "Search.", "input_schema": SCHEMA}]
    src = tmp_path / "tools.json"
    src.write_text(json.dumps(tools), encoding="utf-8")
    out = tmp_path / "c.json"
    assert cli("contract", "import", "--from", "anthropic", str(src), "--name", "c", "--version", "1",
               "--out", str(out), "--effect", "search=read").code == 0  # fmt: skip
    src.write_text(json.dumps(tools * 2), encoding="utf-8")
    ran = cli("check", "--tools", str(out), "--against", str(src), "--from", "anthropic")
    assert ran.code == 2 and "$[1].name: duplicate tool name 'search'" in ran.err
