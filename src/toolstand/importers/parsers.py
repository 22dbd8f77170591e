"""The command-line flags of importing and drift: `contract import|export` and
`check --against*`. Kept beside the importers so cli.py stays a table of commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from toolstand.types import APIS, PROVIDER_APIS

if TYPE_CHECKING:
    # cli._sub: a subcommand whose --help ends with one example
    Sub = Callable[
        [argparse._SubParsersAction[argparse.ArgumentParser], str, str, str],
        argparse.ArgumentParser,
    ]

_MCP_ENV = (
    "toolstand starts the server and stops it when done, and passes it your whole "
    "environment (the SDK alone would pass only HOME, PATH and a few more; servers need "
    "their own keys)"
)


def _source_flags(p: argparse.ArgumentParser, *, mcp: str, file: str) -> None:
    """Where tools live: a stdio MCP server, a streamable HTTP one, a provider's JSON."""
    p.add_argument("--mcp", dest="mcp", action="store_true", help=f"{mcp}; {_MCP_ENV}")
    p.add_argument(
        "--mcp-url",
        metavar="URL",
        help="a streamable HTTP MCP server, e.g. http://127.0.0.1:8000/mcp",
    )
    _server_flags(p)
    p.add_argument("--from", dest="api", choices=PROVIDER_APIS, help=file)


def _server_flags(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """What an MCP server is sent (headers) and which of its tools are left out."""
    p.add_argument(
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help="an HTTP header for --mcp-url, its secret from the environment: "
        "--header 'Authorization: Bearer ${MCP_TOKEN}' (single quotes: the shell, ps and "
        "your history see the variable's name only)",
    )
    p.add_argument(
        "--skip",
        action="append",
        metavar="TOOL",
        help="leave out the server's tool TOOL (its own name); recorded in x-source, so "
        "drift leaves it out too",
    )


def add_drift_flags(c: argparse.ArgumentParser) -> None:
    """`check --against*`: drift between the contract and the live source of its tools."""
    g = c.add_argument_group(
        "drift",
        "compare the contract (--tools) with its source: one line per difference (tool, "
        "JSON path); exit 1 when they differ and the contract's version was not bumped",
    )
    g.add_argument(
        "--against-mcp",
        dest="mcp",
        action="store_true",
        help=f"against the stdio MCP server whose command follows --; {_MCP_ENV}",
    )
    g.add_argument(
        "--against-mcp-url",
        dest="mcp_url",
        metavar="URL",
        help="against a streamable HTTP MCP server",
    )
    _server_flags(g)
    g.add_argument(
        "--against",
        dest="source_file",
        metavar="FILE",
        help="against a provider's tool JSON (with --from)",
    )
    g.add_argument(
        "--from",
        dest="api",
        choices=PROVIDER_APIS,
        help="the API of --against FILE",
    )


def add_contract_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], make: Sub, from_config: str
) -> None:
    """`contract import` and `contract export`."""
    ct = make(
        sub,
        "contract",
        "make a contract from where the tools live, or show it as an API receives it",
        "toolstand contract import --name shop --version 1 --out contracts/shop.json "
        "--mcp -- python my_server.py",
    )
    csub = ct.add_subparsers(
        dest="contract_command",
        metavar="ACTION",
        required=True,
        help="import: write a contract from a source; export: print its tools for an API",
    )
    imp = make(
        csub,
        "import",
        "a contract from a provider's tool JSON or a live MCP server (tools/list, all pages)",
        "toolstand contract import --from openai tools.json --name shop --version 1 "
        "--out contracts/shop.json --effect get_order=read",
    )
    imp.add_argument("source_file", nargs="?", metavar="FILE", help="the tool JSON (with --from)")
    _source_flags(
        imp,
        mcp="the stdio MCP server whose command follows --",
        file="the API whose tool JSON FILE holds (OpenAI chat or Responses, Anthropic, Gemini)",
    )
    imp.add_argument("--name", required=True, help="the contract's name (required)")
    imp.add_argument("--version", required=True, help="the contract's version (required)")
    imp.add_argument(
        "--out", required=True, metavar="PATH", help="the contract file to write (required)"
    )
    imp.add_argument(
        "--effect",
        nargs="+",
        action="extend",
        metavar="NAME=EFFECT",
        help="a tool's effect: read, prepare or execute (default: from MCP's readOnlyHint, "
        "else execute, with a warning naming each tool so defaulted)",
    )
    imp.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    exp = make(
        csub,
        "export",
        "print the contract's tools exactly as the adapter sends them",
        "toolstand contract export --to anthropic --tools contracts/delivery_tools.json",
    )
    exp.add_argument(
        "--to",
        required=True,
        choices=("openai", *APIS),
        help="the wire API (openai is openai-chat)",
    )
    exp.add_argument("--tools", help=f"the contract ({from_config})")
    exp.add_argument(
        "--config",
        help="the config naming the contract (default: config.json, else "
        "config.example.json, in the current folder)",
    )
    exp.add_argument("--only", metavar="NAMES", help="only these tools, comma-separated")
    exp.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="a run option the adapter reads, e.g. strict=true or gemini_schema=parameters",
    )
