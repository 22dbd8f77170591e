"""`contract import --mcp` against the servers users run, played by raw_server.py: names
the wire cannot carry, --skip, SDK 1.x servers, values JSON or the stand cannot hold, and
authenticated streamable HTTP servers."""

from __future__ import annotations

import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.importers import Cli, Ran, raw_server, tool
from toolstand.spec.contract import load_contract


def _import(cli: Cli, out: Path, *flags: str) -> Ran:
    return cli("contract", "import", "--name", "s", "--version", "1", "--out", str(out), *flags)


MIXED = [tool("good_tool"), tool("github.create_issue"), tool("files/read", True),
         tool("github_create_issue")]  # fmt: skip


def test_names_the_wire_cannot_carry_are_renamed_and_kept(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "c.json"
    ran = _import(cli, out, "--mcp", "--", *raw_server(tmp_path, MIXED))
    assert ran.code == 0, ran.err
    contract = load_contract(out)
    assert [t.name for t in contract.tools] == [
        "good_tool", "github_create_issue_2", "files_read", "github_create_issue"
    ]  # fmt: skip
    assert [t.mcp_name for t in contract.tools] == [None, "github.create_issue", "files/read", None]
    assert "renamed for the wire (the server's name kept in x-mcp-name): " \
        "github.create_issue → github_create_issue_2, files/read → files_read" in ran.err  # fmt: skip
    # answered by either name
    renamed = contract.tool("github.create_issue")
    assert renamed is not None and renamed.name == "github_create_issue_2"
    assert contract.tool("github_create_issue_2") is renamed
    # and drift matches them again
    ran = cli("check", "--tools", str(out), "--against-mcp", "--", *raw_server(tmp_path, MIXED))
    assert ran.code == 0 and "drift ok: the contract matches its source" in ran.err, ran.err


def test_skip_leaves_tools_out_and_drift_remembers(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "c.json"
    server = raw_server(tmp_path, MIXED)
    ran = _import(cli, out, "--skip", "files/read", "--skip", "good_tool", "--mcp", "--", *server)
    assert ran.code == 0, ran.err
    contract = load_contract(out)
    assert [t.name for t in contract.tools] == ["github_create_issue_2", "github_create_issue"]
    assert "skipped: files/read, good_tool" in ran.err
    assert contract.source is not None and contract.source["skipped"] == ["files/read", "good_tool"]
    ran = cli("check", "--tools", str(out), "--against-mcp", "--", *server)
    assert ran.code == 0 and "drift ok" in ran.err, ran.err


def test_skip_of_a_tool_the_server_lacks_is_refused(tmp_path: Path, cli: Cli) -> None:
    ran = _import(
        cli, tmp_path / "c.json", "--skip", "nope", "--mcp", "--", *raw_server(tmp_path, MIXED)
    )
    assert ran.code == 2 and "--skip: $: no such tool: nope; the server has: good_tool, " in ran.err


def test_an_sdk_1_server_is_asked_the_handshake_it_knows(tmp_path: Path, cli: Cli) -> None:
    log = tmp_path / "methods.log"
    server = raw_server(tmp_path, [tool("a", True)], "--v1", "--log", str(log))
    ran = _import(cli, tmp_path / "c.json", "--mcp", "--", *server)
    assert ran.code == 0, ran.err
    # no probe the server cannot validate, so none of its pydantic errors on stderr
    assert log.read_text(encoding="utf-8").split() == ["initialize", "tools/list"]


def test_the_mcp_flag_without_a_command_says_how(tmp_path: Path, cli: Cli) -> None:
    ran = _import(cli, tmp_path / "c.json", "--mcp", sys.executable, "server.py")
    assert ran.code == 2
    assert "put the server's command after --: --mcp -- " in ran.err


BIGINT = (
    'TOOLS = [{"name": "big", "inputSchema": {"type": "object", "properties": '
    '{"n": {"type": "integer", "maximum": 2**70}}}}]'
)
NAN = (
    'TOOLS = [{"name": "nan", "inputSchema": {"type": "object", "properties": '
    '{"x": {"type": "number", "default": float("nan")}}}}]'
)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (BIGINT, "$.tools[0].inputSchema.properties.n.maximum: 1180591620717411303424 is "
                 "beyond 64 bits"),
        (NAN, "$.tools[0].inputSchema.properties.x.default: NaN is not a JSON number"),
    ],
)  # fmt: skip
def test_values_a_contract_cannot_hold_are_one_line_errors(
    tmp_path: Path, cli: Cli, source: str, message: str
) -> None:
    out = tmp_path / "c.json"
    ran = _import(cli, out, "--mcp", "--", *raw_server(tmp_path, source))
    assert ran.code == 2 and message in ran.err, ran.err
    assert "Traceback" not in ran.err and not out.exists()


class _Refusing(http.server.BaseHTTPRequestHandler):
    """Answers every request with the status its server was made with, and keeps the
    Authorization header it got."""

    def _answer(self) -> None:
        self.server.seen.append(self.headers.get("Authorization"))  # type: ignore[attr-defined]
        self.send_response(self.server.status)  # type: ignore[attr-defined]
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(params=[401, 403])
def refusing(request: pytest.FixtureRequest) -> Iterator[http.server.HTTPServer]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Refusing)
    server.status = request.param  # type: ignore[attr-defined]
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def test_401_and_403_are_named_and_the_header_comes_from_the_environment(
    tmp_path: Path, cli: Cli, refusing: http.server.HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TEST_TOKEN", "s3cret-t0ken")
    url = f"http://127.0.0.1:{refusing.server_address[1]}/mcp"
    ran = _import(cli, tmp_path / "c.json", "--mcp-url", url,
                  "--header", "Authorization: Bearer ${MCP_TEST_TOKEN}")  # fmt: skip
    assert ran.code == 2
    status = refusing.status  # type: ignore[attr-defined]
    named = {401: "401 Unauthorized", 403: "403 Forbidden"}[status]
    assert f"the server answered {named}" in ran.err, ran.err
    assert refusing.seen[0] == "Bearer s3cret-t0ken"  # type: ignore[attr-defined]
    assert "s3cret" not in ran.err


def test_a_literal_secret_or_a_missing_variable_is_refused(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCP_ABSENT_TOKEN", raising=False)
    url = "http://127.0.0.1:9/mcp"
    ran = _import(
        cli, tmp_path / "c.json", "--mcp-url", url, "--header", "Authorization: Bearer abc"
    )
    assert ran.code == 2 and "never the secret itself" in ran.err and "abc" not in ran.err
    ran = _import(cli, tmp_path / "c.json", "--mcp-url", url,
                  "--header", "Authorization: Bearer ${MCP_ABSENT_TOKEN}")  # fmt: skip
    assert ran.code == 2 and "MCP_ABSENT_TOKEN is not set" in ran.err
    ran = _import(cli, tmp_path / "c.json", "--mcp-url", url, "--header", "no colon")
    assert ran.code == 2 and "write 'NAME: VALUE'" in ran.err


def test_the_effect_warning_tells_a_servers_word_from_a_default(tmp_path: Path, cli: Cli) -> None:
    tools = [tool("said_not_read", False), tool("unsaid"), tool("reader", True)]
    tools.append({**tool("stringly"), "annotations": {"readOnlyHint": "true"}})
    tools.append({**tool("both"), "annotations": {"readOnlyHint": True, "destructiveHint": True}})
    out = tmp_path / "c.json"
    ran = _import(cli, out, "--mcp", "--", *raw_server(tmp_path, tools))
    assert ran.code == 0, ran.err
    assert (
        "effect execute (state-changing) for: said_not_read (its server's readOnlyHint: false);"
        " by default for: unsaid, stringly (no readOnlyHint: true)" in ran.err
    )
    assert "defaulted" not in ran.err
    assert "$.tools[3].annotations.readOnlyHint: warning: \"true\" is a string, not true: " \
        "stringly is taken as not read-only (execute)" in ran.err  # fmt: skip
    assert "$.tools[4].annotations: warning: readOnlyHint and destructiveHint are both true: " \
        "both is taken as read (a read-only tool destroys nothing)" in ran.err  # fmt: skip
    effects = {t.name: t.effect for t in load_contract(out).tools}
    assert effects == {"said_not_read": "execute", "unsaid": "execute", "reader": "read",
                       "stringly": "execute", "both": "read"}  # fmt: skip


def test_keys_a_contract_has_no_place_for_are_one_warning_each(tmp_path: Path, cli: Cli) -> None:
    tools = [{**tool(n), "title": n.upper(), "execution": {"taskSupport": "forbidden"}}
             for n in ("a", "b", "c")]  # fmt: skip
    tools[0]["outputSchema"] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    out = tmp_path / "c.json"
    ran = _import(cli, out, "--mcp", "--", *raw_server(tmp_path, tools))
    assert ran.code == 0, ran.err
    assert "$.tools[*].title: warning: 'title' (3 tools) has no place in a contract" in ran.err
    assert ran.err.count("'execution'") == 1
    output = load_contract(out).by_name["a"].mcp
    assert output == {"outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}


DRAFT7 = "http://json-schema.org/draft-07/schema#"


def test_a_draft_07_schema_is_read_and_enforced_in_its_own_dialect(
    tmp_path: Path, cli: Cli
) -> None:
    """zod and npm servers declare draft-07: its dependencies and tuple items hold."""
    pay = {"name": "pay", "description": "d", "inputSchema": {
        "$schema": DRAFT7, "type": "object",
        "definitions": {"Id": {"type": "string", "pattern": "^[0-9]+$"}},
        "properties": {"id": {"$ref": "#/definitions/Id"}, "card": {"type": "string"},
                       "cvv": {"type": "string"},
                       "pt": {"type": "array", "items": [{"type": "number"}, {"type": "number"}],
                              "additionalItems": False}},
        "dependencies": {"card": ["cvv"]}}}  # fmt: skip
    out = tmp_path / "c.json"
    ran = _import(cli, out, "--mcp", "--", *raw_server(tmp_path, [pay]))
    assert ran.code == 0, ran.err
    check = load_contract(out).by_name["pay"].validator
    assert check.is_valid({"id": "12", "card": "4111", "cvv": "123", "pt": [1, 2]})
    assert not check.is_valid({"card": "4111"})  # dependencies: card needs cvv
    assert not check.is_valid({"pt": [1, "x"]})  # tuple items
    assert not check.is_valid({"pt": [1, 2, 3]})  # additionalItems: false
    assert not check.is_valid({"id": "ab"})  # the ref into definitions


def test_a_listing_the_sdk_cannot_read_names_the_sdks_complaint(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nesting deeper than the SDK's JSON reader goes: it drops the message and logs
    why; the timeout says so instead of blaming a silent server."""
    from toolstand.importers import mcp

    monkeypatch.setattr(mcp, "TIMEOUT", 2.0)
    deep = (
        'd = {"type": "object"}\n'
        "for i in range(300):\n"
        '    d = {"type": "object", "properties": {f"l{i}": d}}\n'
        'TOOLS = [{"name": "deep", "description": "d", "inputSchema": d}]\n'
    )
    ran = _import(cli, tmp_path / "c.json", "--mcp", "--", *raw_server(tmp_path, deep))
    assert ran.code == 2
    assert "the MCP SDK logged: Failed to parse JSONRPC message from server" in ran.err, ran.err


def test_an_ecma_letter_class_in_a_pattern_is_read_as_ecma_means_it(
    tmp_path: Path, cli: Cli
) -> None:
    code = tool("code", code={"type": "string", "pattern": r"^(?=.*\d)\p{L}+\d$"})
    out = tmp_path / "c.json"
    ran = _import(cli, out, "--mcp", "--", *raw_server(tmp_path, [code]))
    assert ran.code == 0, ran.err
    spec = load_contract(out).by_name["code"]
    assert spec.parameters["properties"]["code"]["pattern"] == r"^(?=.*\d)\p{L}+\d$"  # as sent
    assert spec.validator.is_valid({"code": "Привет1"})
    assert not spec.validator.is_valid({"code": "abc_1"}) and not spec.validator.is_valid(
        {"code": "abc"}
    )


def test_a_listing_of_more_than_a_thousand_pages_is_read_whole(tmp_path: Path, cli: Cli) -> None:
    tools = [tool(f"t{i}", True) for i in range(1001)]
    out = tmp_path / "c.json"
    ran = _import(cli, out, "--mcp", "--", *raw_server(tmp_path, tools, "--page-size", "1"))
    assert ran.code == 0, ran.err
    assert "1001 tools in 1001 pages" in ran.err
    assert len(load_contract(out).tools) == 1001
