"""The command-line side of importing: `contract import`, `contract export` and the drift
part of `check` (``--against-mcp``, ``--against-mcp-url``, ``--against FILE --from``).

Warnings and summaries go to stderr; what a user would pipe (the written path, the
exported tools, one line per difference) goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from toolstand.importers.providers import SourceTools
from toolstand.util.printable import visible
from toolstand.util.problems import LoadError, Problem


def _say(problems: list[Problem]) -> None:
    for problem in problems:
        print(str(problem), file=sys.stderr)


def read_source(args: argparse.Namespace) -> tuple[SourceTools, str]:
    """The tools of the source the flags name, and how to name that source in a message."""
    command: list[str] = args.server_command
    given = [args.source_file is not None, bool(args.mcp or command), args.mcp_url is not None]
    if sum(given) > 1:
        message = "give one source: a tool JSON file, --mcp -- CMD..., or --mcp-url URL"
        raise LoadError([Problem("--mcp", None, "$", message)])
    if args.api is not None and args.source_file is None:
        raise LoadError([Problem("--from", None, "$", f"give the {args.api} tool JSON file")])
    if args.source_file is not None:
        from toolstand.importers.providers import read_provider_tools

        if args.api is None:
            raise LoadError([Problem("--from", None, "$", "name the file's API with --from")])
        return read_provider_tools(args.source_file, args.api), args.source_file
    from toolstand.importers.mcp import fetch, listing_tools

    if args.mcp_url is None and not (args.mcp and command):
        raise LoadError(
            [Problem("--mcp", None, "$", "give the server: --mcp -- CMD ARGS... or --mcp-url URL")]
        )
    if args.mcp_url is not None and not _http_url(args.mcp_url):
        message = f"{args.mcp_url!r} is not an http(s) URL with a host"
        raise LoadError([Problem("--mcp-url", None, "$", message)])
    where = args.mcp_url or " ".join(command)
    listing = fetch(None if args.mcp_url else command, args.mcp_url)
    source = listing_tools(listing, where)
    print(
        visible(
            f"MCP server {_named(listing.server)}: {len(listing.tools)} tools "
            f"in {listing.pages} pages"
        ),
        file=sys.stderr,
    )
    return source, where


def _http_url(url: str) -> bool:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _named(server: dict[str, Any]) -> str:
    return f"{server.get('name', '?')} {server.get('version', '')}".strip()


def cmd_contract_import(args: argparse.Namespace) -> int:
    from toolstand.importers.build import build_contract, parse_effects, write_new

    effects = parse_effects(args.effect or [])  # before a server is started for nothing
    source, where = read_source(args)
    contract, text, warnings = build_contract(
        source, name=args.name, version=args.version, effects=effects, out=args.out
    )
    write_new(Path(args.out), text, force=args.force)
    _say(warnings)
    print(
        visible(f"imported {len(contract.tools)} tools from {where} into {args.out}"),
        file=sys.stderr,
    )
    print(args.out)
    return 0


def cmd_contract_export(args: argparse.Namespace) -> int:
    from toolstand.importers.export import EXPORT_APIS, export_tools
    from toolstand.spec.contract import load_contract

    contract = load_contract(args.tools)
    tools = contract.tools
    if args.only is not None:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        if not wanted:
            message = f"names no tool (got {args.only!r})"
            raise LoadError([Problem("--only", None, "$", message)])
        unknown = sorted(set(wanted) - set(contract.by_name))
        if unknown:
            allowed = ", ".join(contract.by_name)
            message = f"no such tool: {', '.join(unknown)}; the contract has: {allowed}"
            raise LoadError([Problem("--only", None, "$", message)])
        tools = contract.subset(wanted)
    wire = export_tools(tools, args.to, _options(args.option or [], EXPORT_APIS[args.to]))
    sys.stdout.write(orjson.dumps(wire, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


def _options(items: list[str], api: str) -> dict[str, Any]:
    """``--option key=value``: a JSON value when it parses as one (true, 3), else text;
    checked as a run's ``options`` for ``api`` are."""
    from pydantic import ValidationError

    from toolstand.spec.config import RunOptions, option_problem
    from toolstand.util.problems import pydantic_message

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        problem = "write KEY=VALUE" if not sep or not key else option_problem(api, key)
        if problem is not None:
            raise LoadError([Problem("--option", None, "$", f"{item!r}: {problem}")])
        try:
            out[key] = orjson.loads(value)
        except orjson.JSONDecodeError:
            out[key] = value
    try:
        RunOptions.model_validate(out)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = f"$.{'.'.join(str(p) for p in err['loc'])}"
        raise LoadError([Problem("--option", None, where, pydantic_message(err))]) from None
    return out


def cmd_check_drift(args: argparse.Namespace) -> int:
    """Drift between the contract and its live source; 1 when it fails the bump rule."""
    from toolstand.importers.build import source_hash
    from toolstand.importers.drift import compare, gate
    from toolstand.lint.check import read_lock, record_source
    from toolstand.spec.contract import load_contract

    contract_path = Path(args.tools)
    contract = load_contract(contract_path)
    source, where = read_source(args)
    if source.errors:
        raise LoadError(source.errors)
    if not args.quiet:
        _say(source.warnings)
    was, now = (contract.source or {}).get("server"), source.source.get("server")
    if was and now and was != now:
        print(
            visible(f"note: the server was {_named(was)} when imported, now {_named(now)}"),
            file=sys.stderr,
        )
    diffs = compare(contract, source.tools, annotated=source.source.get("kind") == "mcp")
    for diff in diffs:
        print(str(diff))
    live = source_hash(source.tools)
    verdict = gate(contract, diffs, read_lock(contract_path), live)
    status = "ok" if verdict.passed else "FAILED"
    print(
        visible(f"drift {status}: {verdict.reason} ({args.tools} against {where})"), file=sys.stderr
    )
    if verdict.passed and args.lock:
        path = record_source(contract, contract_path, live)
        print(visible(f"recorded the source's hash in {path}"), file=sys.stderr)
    return 0 if verdict.passed else 1
