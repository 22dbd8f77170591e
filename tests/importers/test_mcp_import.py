"""`contract import --mcp` against a real MCP server started as a subprocess (stdio) or
listening on 127.0.0.1 (streamable HTTP): every page, effects, x-mcp, the server named."""

from __future__ import annotations

import builtins
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.importers import SERVER, Cli
from toolstand.importers.mcp import Listing, listing_tools
from toolstand.spec.contract import Contract, load_contract

NAMES = ["get_order", "list_orders", "add_note", "cancel_order", "track_parcel"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Contract, str]:
    """The test server's contract, imported once for the module (pages of 2: 3 pages),
    with a name given only through the environment the server inherits."""
    from toolstand.cli import main

    out = tmp_path_factory.mktemp("mcp") / "shop.json"
    mp = pytest.MonkeyPatch()
    mp.setenv("SHOP_SERVER_NAME", "shop-from-env")
    try:
        code = main(["contract", "import", "--name", "shop", "--version", "1.0", "--out", str(out),
                     "--effect", "add_note=prepare", "--mcp", "--", *SERVER])  # fmt: skip
    finally:
        mp.undo()
    assert code == 0
    return load_contract(out), out.read_text(encoding="utf-8")


def test_every_page_is_imported_in_order(imported: tuple[Contract, str]) -> None:
    contract, _ = imported
    assert [t.name for t in contract.tools] == NAMES


def test_effects_follow_read_only_hint_and_the_flags(imported: tuple[Contract, str]) -> None:
    contract, _ = imported
    effects = {t.name: t.effect for t in contract.tools}
    # additive add_note is marked a draft by --effect; the rest default to execute
    assert effects == {"get_order": "read", "list_orders": "read", "add_note": "prepare",
                       "cancel_order": "execute", "track_parcel": "execute"}  # fmt: skip


def test_annotations_kept_in_x_mcp_and_the_server_recorded(imported: tuple[Contract, str]) -> None:
    contract, text = imported
    # the output contract comes along (the SDK derives one from the return type)
    assert (contract.by_name["get_order"].mcp or {})["outputSchema"]["type"] == "object"
    by = {
        t.name: {k: v for k, v in (t.mcp or {}).items() if k != "outputSchema"}
        for t in contract.tools
    }
    assert by["get_order"] == {"title": "Order", "readOnlyHint": True}
    assert by["add_note"] == {"readOnlyHint": False, "destructiveHint": False}
    assert by["cancel_order"] == {"destructiveHint": True}
    assert by["track_parcel"] == {}
    assert contract.source is not None
    # the name came through the environment: the user's whole environment reached it
    assert contract.source["server"] == {"name": "shop-from-env", "version": "2.0.1"}
    assert contract.source["kind"] == "mcp" and contract.source["imported_version"] == "1.0"
    assert '"x-mcp"' in text and '"x-source"' in text


def test_input_schemas_are_kept_as_the_server_gives_them(imported: tuple[Contract, str]) -> None:
    contract, _ = imported
    order_id = contract.by_name["get_order"].parameters["properties"]["order_id"]
    assert order_id["pattern"] == r"^ORD-\d{6}$" and order_id["type"] == "string"
    limit = contract.by_name["list_orders"].parameters["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 50, 10)


def test_the_warning_lists_the_tools_defaulted_to_execute(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "one_page.json"
    ran = cli("contract", "import", "--name", "s", "--version", "1", "--out", str(out),
              "--mcp", "--", *SERVER, "--page-size", "50")  # fmt: skip
    assert ran.code == 0
    assert "5 tools in 1 pages" in ran.err
    assert (
        "effect execute (state-changing) for: add_note (its server's readOnlyHint: false); "
        "by default for: cancel_order, track_parcel (no readOnlyHint: true)" in ran.err
    )


@pytest.fixture
def http_server() -> Iterator[str]:
    """The test server on streamable HTTP at 127.0.0.1; its URL once it listens."""
    proc = subprocess.Popen([*SERVER, "--http"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())  # printed once the socket listens
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_streamable_http_server_imports_the_same_tools(
    http_server: str, tmp_path: Path, cli: Cli, imported: tuple[Contract, str]
) -> None:
    out = tmp_path / "http.json"
    ran = cli("contract", "import", "--name", "shop", "--version", "1.0", "--out", str(out),
              "--effect", "add_note=prepare", "--mcp-url", http_server)  # fmt: skip
    assert ran.code == 0, ran.err
    over_http = load_contract(out)
    assert over_http.tools == imported[0].tools
    assert over_http.source is not None and over_http.source["server"]["name"] == "test-shop"
    ran = cli("check", "--tools", str(out), "--against-mcp-url", http_server)
    assert ran.code == 0 and "drift ok: the contract matches its source" in ran.err


def test_a_server_that_fails_to_start_is_a_clean_error(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "never.json"
    ran = cli("contract", "import", "--name", "s", "--version", "1", "--out", str(out),
              "--mcp", "--", sys.executable, "-c", "import sys; sys.exit(3)")  # fmt: skip
    assert ran.code == 2 and "MCP server failed" in ran.err
    assert not out.exists()


def test_a_server_that_never_answers_is_refused_after_the_timeout(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolstand.importers import mcp

    monkeypatch.setattr(mcp, "TIMEOUT", 1.0)
    out = tmp_path / "silent.json"
    ran = cli("contract", "import", "--name", "s", "--version", "1", "--out", str(out),
              "--mcp", "--", sys.executable, "-c", "import time; time.sleep(60)")  # fmt: skip
    assert ran.code == 2 and "did not answer initialize within 1 s" in ran.err
    assert not out.exists()


def test_escapes_in_the_servers_name_are_spelled_out(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHOP_SERVER_NAME", "shop\x1b]0;owned\x07")
    out = tmp_path / "named.json"
    ran = cli("contract", "import", "--name", "s", "--version", "1", "--out", str(out),
              "--mcp", "--", *SERVER, "--page-size", "50")  # fmt: skip
    assert ran.code == 0 and "MCP server shop\\x1b]0;owned\\x07 2.0.1: 5 tools" in ran.err
    assert "\x1b" not in ran.err and "\x07" not in ran.err


def test_a_server_printing_garbage_is_a_clean_error(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "garbage.json"
    script = "print('\\x1b[2J not json'); import sys; sys.stdout.flush()"
    ran = cli("contract", "import", "--name", "s", "--version", "1", "--out", str(out),
              "--mcp", "--", sys.executable, "-c", script)  # fmt: skip
    assert ran.code == 2 and "MCP server failed" in ran.err
    assert "\x1b" not in ran.err and not out.exists()


def test_without_the_sdk_the_command_says_how_to_install_it(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_mcp(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "mcp" or name.startswith("mcp."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mcp)
    ran = cli("contract", "import", "--name", "s", "--version", "1", "--out", str(tmp_path / "x.json"),
              "--mcp", "--", "server")  # fmt: skip
    assert ran.code == 2 and "pip install 'toolstand[mcp]'" in ran.err


def test_a_recorded_listing_converts_without_the_sdk() -> None:
    listing = Listing(
        {"name": "rec", "version": "0.1"},
        [
            {
                "name": "a",
                "description": "A.",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": True},
            },
            {"name": "b", "inputSchema": {"type": "object"}},
            {"name": "c", "inputSchema": "nope"},
            {"name": "d.e", "inputSchema": {"type": "object"}},
            {"name": "a", "inputSchema": {"type": "object"}},
        ],
    )
    got = listing_tools(listing, "rec")
    assert [t["name"] for t in got.tools] == ["a", "b", "d_e"]
    assert got.tools[0]["x-mcp"] == {"readOnlyHint": True} and got.tools[1]["description"] == ""
    assert got.tools[2]["x-mcp-name"] == "d.e"
    assert [e.path for e in got.errors] == ["$.tools[2].inputSchema", "$.tools[4].name"]
    assert "duplicate tool name 'a'" in got.errors[1].message
    assert "has no description" in got.warnings[0].message


def test_the_readmes_example_server_and_cases_check_clean(tmp_path: Path, cli: Cli) -> None:
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "notes.json"
    server = [sys.executable, str(root / "examples" / "mcp" / "notes_server.py")]
    ran = cli("contract", "import", "--name", "notes", "--version", "1.0.0", "--out", str(out),
              "--effect", "add_note=prepare", "--mcp", "--", *server)  # fmt: skip
    assert ran.code == 0 and "for: delete_note (no readOnlyHint: true)" in ran.err
    effects = {t.name: t.effect for t in load_contract(out).tools}
    assert effects == {"search_notes": "read", "add_note": "prepare", "delete_note": "execute"}
    ran = cli(
        "check",
        "--quiet",
        "--tools",
        str(out),
        "--cases",
        str(root / "examples" / "mcp" / "cases.jsonl"),
    )
    assert ran.code == 0 and "0 errors" in ran.err
