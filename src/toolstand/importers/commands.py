"""The command-line side of importing: `contract import`, `contract export` and the drift
part of `check` (``--against-mcp``, ``--against-mcp-url``, ``--against FILE --from``).

Warnings and summaries go to stderr; what a user would pipe (the written path, the
exported tools, one line per difference) goes to stdout.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from toolstand.importers.providers import SourceTools
from toolstand.util.printable import visible
from toolstand.util.problems import LoadError, Problem


def _say(problems: list[Problem]) -> None:
    for problem in problems:
        print(str(problem), file=sys.stderr)


def read_source(
    args: argparse.Namespace, skip: frozenset[str] = frozenset()
) -> tuple[SourceTools, str]:
    """The tools of the source the flags name (less those in ``--skip`` and ``skip``),
    and how to name that source in a message."""
    command: list[str] = args.server_command
    if args.mcp and not command and args.mcp_url is None:
        message = "put the server's command after --: --mcp -- CMD ARGS..."
        raise LoadError([Problem("--mcp", None, "$", message)])
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
    headers = parse_headers(args.header or [])
    if headers and args.mcp_url is None:
        message = "headers go to a streamable HTTP server: give --mcp-url URL"
        raise LoadError([Problem("--header", None, "$", message)])
    where = args.mcp_url or " ".join(command)
    listing = fetch(None if args.mcp_url else command, args.mcp_url, headers)
    source = listing_tools(listing, where, frozenset(args.skip or []), skip)
    print(
        visible(
            f"MCP server {_named(listing.server)}: {len(listing.tools)} tools "
            f"in {listing.pages} pages"
        ),
        file=sys.stderr,
    )
    return source, where


# header names whose value is a credential: it must come from the environment
_SECRET = re.compile(r"authorization|cookie|token|key|secret|password", re.IGNORECASE)
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def parse_headers(items: list[str]) -> dict[str, str]:
    """``--header 'NAME: VALUE'``, with ``${VAR}`` in VALUE read from the environment
    (quoted so the shell leaves it: ``ps`` and the shell's history show the name only).
    A credential's header must take its secret from a variable, never be given it."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition(":")
        name, value = name.strip(), value.strip()
        if (
            not sep
            or not name
            or not value
            or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name)
        ):
            message = f"{visible(item[:40])!r}: write 'NAME: VALUE', e.g. 'Authorization: Bearer ${{MCP_TOKEN}}'"
            raise LoadError([Problem("--header", None, "$", message)])
        if _SECRET.search(name) and not _REFERENCE.search(value):
            message = (
                f"{name}: take the value from an environment variable, never the secret "
                f"itself (it would show in ps and your shell's history): "
                f"--header '{name}: Bearer ${{MCP_TOKEN}}'"
            )
            raise LoadError([Problem("--header", None, "$", message)])

        out[name] = _REFERENCE.sub(partial(_variable, name), value)
    return out


def _variable(header: str, match: re.Match[str]) -> str:
    var = match.group(1) or match.group(2)
    if var not in os.environ:
        message = f"{header}: the environment variable {var} is not set"
        raise LoadError([Problem("--header", None, "$", message)])
    return os.environ[var]


def _http_url(url: str) -> bool:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _named(server: dict[str, Any]) -> str:
    return f"{server.get('name', '?')} {server.get('version', '')}".strip()


def cmd_contract_import(args: argparse.Namespace) -> int:
    from toolstand.importers.build import build_contract, exists_error, parse_effects, write_new
    from toolstand.importers.merge import read_previous

    effects = parse_effects(args.effect or [])  # before a server is started for nothing
    out = Path(args.out)
    if out.exists() and not args.force:
        raise exists_error(out)  # before a server is started for nothing
    previous, replaced = read_previous(out) if args.force else (None, [])
    source, where = read_source(args, previous.skipped if previous is not None else frozenset())
    contract, text, warnings, summary = build_contract(
        source,
        name=args.name,
        version=args.version,
        effects=effects,
        out=args.out,
        previous=previous,
    )
    write_new(out, text, force=args.force)
    _say([*replaced, *warnings])
    for note in source.notes:
        print(visible(note), file=sys.stderr)
    if previous is not None:
        print(visible(f"re-imported over {args.out}, merging:"), file=sys.stderr)
        for line in summary:
            print(visible(f"  {line}"), file=sys.stderr)
    print(
        visible(f"imported {len(contract.tools)} tools from {where} into {args.out}"),
        file=sys.stderr,
    )
    print(args.out)
    return 0


def cmd_contract_export(args: argparse.Namespace) -> int:
    from toolstand.importers.export import EXPORT_APIS, export_tools, note_line
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
    wire, notes = export_tools(tools, args.to, _options(args.option or [], EXPORT_APIS[args.to]))
    sys.stdout.write(orjson.dumps(wire, option=orjson.OPT_INDENT_2).decode() + "\n")
    for note in notes:  # as a run records them: what the model is sent differs here
        print(visible(note_line(note)), file=sys.stderr)
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
    skipped = (contract.source or {}).get("skipped")
    kept_out = frozenset(n for n in skipped or [] if isinstance(n, str))
    source, where = read_source(args, kept_out)
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
