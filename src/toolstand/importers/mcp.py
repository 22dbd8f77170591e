"""Tools from a live MCP server: tools/list, every page, over stdio or streamable HTTP.

The official ``mcp`` SDK is an optional extra (``toolstand[mcp]``), imported only here
and only when a command needs it. A stdio server is started and stopped by toolstand
with the user's whole environment: the SDK passes only HOME, PATH and a few more unless
told otherwise, and servers need their own keys.

What the SDK returns is turned into plain data (``listing_tools``) by code that touches
no SDK type, so the conversion is tested on recorded listings as well as live ones.

The handshake is the ``initialize`` one (the SDK's ``mode="legacy"``), which servers of
every SDK generation answer: the 2.x client's default first probes ``server/discover``,
and a 1.x server (most of the package index) prints a pydantic error of ~100 lines for
it. Only a server that refuses ``initialize`` is asked the other way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from toolstand.importers.names import distinct
from toolstand.importers.providers import NAME, SourceTools, name_problem
from toolstand.importers.values import value_problem
from toolstand.util.problems import LoadError, Problem

INSTALL_HINT = "the MCP importer needs the official SDK: pip install 'toolstand[mcp]'"
# a server that keeps handing out cursors is refused rather than followed forever: the
# bound is on the tools (and the timeout on the time), not the pages, which may be small
MAX_TOOLS = 100_000
# seconds for the whole conversation (start, initialize, every page): a server that
# never answers is an error, not a hang
TIMEOUT = 60.0


@dataclass
class Listing:
    """One server's answer: who it is, and every tool of every page (wire form)."""

    server: dict[str, str]
    tools: list[dict[str, Any]] = field(default_factory=list)
    pages: int = 0


def _sdk() -> Any:
    try:
        import mcp
    except ImportError:
        raise LoadError([Problem("--mcp", None, "$", INSTALL_HINT)]) from None
    return mcp


def stdio_target(command: list[str]) -> Any:
    """The SDK's stdio transport for a server, with the user's environment passed on and
    the server's stderr on ours."""
    mcp = _sdk()
    from mcp.client.stdio import stdio_client

    if not command:
        raise LoadError([Problem("--mcp", None, "$", "give the server's command after --")])
    params = mcp.StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    return _whole_group(stdio_client(params, errlog=_errlog()))


@asynccontextmanager
async def _whole_group(transport: Any) -> AsyncIterator[Any]:
    """The SDK's stdio transport, and at its end a SIGKILL to the server's process group:
    the SDK kills the group only when the server itself outlives its grace period, so a
    server that exits at once leaves a child that ignores SIGTERM running with ppid 1.
    The server leads its own session (the SDK starts it so), so its pid is the group's."""
    from mcp.client import stdio

    spawn = getattr(stdio, "_create_platform_compatible_process", None)
    pids: list[int] = []

    async def recording(*args: Any, **kw: Any) -> Any:
        assert spawn is not None
        process = await spawn(*args, **kw)
        pids.append(process.pid)
        return process

    if spawn is not None and os.name == "posix":
        stdio._create_platform_compatible_process = recording
    try:
        async with transport as streams:
            yield streams
    finally:
        if spawn is not None:
            stdio._create_platform_compatible_process = spawn
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


def _errlog() -> Any:
    """Our stderr when it is a real file (the server's process writes to it), else the
    process's own (stderr replaced by a capture, as under pytest)."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__
    return sys.stderr


async def fetch_listing(target: Any, where: str, status: list[int] | None = None) -> Listing:
    """Connect (a URL string or a transport), list every page of tools, disconnect;
    refused when the server has not finished within ``TIMEOUT`` seconds. ``status``:
    the HTTP statuses >= 400 seen on the way, filled by the caller's client."""
    import asyncio

    _sdk()
    from mcp.shared.exceptions import MCPError

    progress = Listing({})  # how far it got: initialize answered, pages read
    progress.pages = -1
    with _sdk_errors() as logged:
        try:
            async with asyncio.timeout(TIMEOUT):
                try:
                    return await _list_every_page(target, where, "legacy", progress)
                except MCPError as exc:
                    if exc.error.code != -32601 or not callable(target):
                        raise
                    # initialize unknown
                    return await _list_every_page(target, where, "auto", progress)
        except TimeoutError:
            message = _timed_out(progress)
            if logged:
                message += f"; the MCP SDK logged: {logged[0]}"
            raise LoadError([Problem(where, None, "$", message)]) from None
        except Exception as exc:  # the SDK's task groups raise groups of anything
            raise LoadError([Problem(where, None, "$", _failure(exc, status))]) from None


def _failure(exc: BaseException, status: list[int] | None) -> str:
    refused = next((s for s in status or [] if s in (401, 403)), None)
    if refused == 401:
        return (
            "the server answered 401 Unauthorized: it wants a token, e.g. "
            "--header 'Authorization: Bearer ${MCP_TOKEN}' with MCP_TOKEN in the environment"
        )
    if refused == 403:
        return "the server answered 403 Forbidden: the token was refused, or lacks the access"
    cause = _leaf(exc)
    return f"MCP server failed: {type(cause).__name__}: {cause}"


@contextmanager
def _sdk_errors() -> Iterator[list[str]]:
    """The first line of each error the SDK logs meanwhile (a message it could not
    read, say), to name the cause when the server seems silent."""
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage().splitlines()[0] if record.getMessage() else "")

    handler = Keep(logging.ERROR)
    logger = logging.getLogger("mcp")
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)


def _timed_out(progress: Listing) -> str:
    """Where a server that ran out the timeout stood: silent in initialize, silent in
    tools/list, or still paging."""
    if progress.pages < 0:
        return f"MCP server did not answer initialize within {TIMEOUT:g} s"
    if progress.pages == 0:
        return f"MCP server did not answer tools/list within {TIMEOUT:g} s"
    return (
        f"MCP server still paging tools/list after {TIMEOUT:g} s: {progress.pages} pages,"
        f" {len(progress.tools)} tools so far"
    )


async def _list_every_page(
    target: Any, where: str, mode: str, progress: Listing | None = None
) -> Listing:
    mcp = _sdk()
    server = target() if callable(target) else target
    async with mcp.Client(server, cache=None, mode=mode) as client:
        info = client.server_info
        listing = Listing({"name": info.name, "version": info.version} if info is not None else {})
        if progress is not None:  # the caller's view of it, for a timeout's message
            progress.tools, progress.pages = listing.tools, 0
        cursor: Any = None
        seen: set[str] = set()
        while len(listing.tools) <= MAX_TOOLS:
            page = await _raw_page(client, cursor)
            listing.pages += 1
            if progress is not None:
                progress.pages = listing.pages
            tools = page.get("tools")
            listing.tools += (
                [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
            )
            cursor = page.get("nextCursor")
            if not cursor:
                return listing
            if str(cursor) in seen:  # a loop: the same pages again, forever
                message = (
                    f"tools/list gave the cursor {_json(cursor)} a second time, after"
                    f" {listing.pages} pages: the server pages in a loop"
                )
                raise LoadError([Problem(where, None, "$", message)])
            seen.add(str(cursor))
    message = f"tools/list still paging after {len(listing.tools)} tools in {listing.pages} pages"
    raise LoadError([Problem(where, None, "$", message)])


async def _raw_page(client: Any, cursor: Any) -> dict[str, Any]:
    """One page of tools/list as the server wrote it: the SDK's typed result would
    coerce ``"true"`` to true, and its JSON dump write NaN as null."""
    from mcp import types
    from pydantic import TypeAdapter

    params = types.PaginatedRequestParams(cursor=str(cursor)) if cursor else None
    raw: dict[str, Any] = await client.session.send_request(
        types.ListToolsRequest(params=params), TypeAdapter(dict[str, Any])
    )
    return raw


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def fetch(
    command: list[str] | None, url: str | None, headers: dict[str, str] | None = None
) -> Listing:
    """The listing of a stdio server (``command``) or a streamable HTTP one (``url``,
    sent ``headers``)."""
    import asyncio

    if url is not None:
        return asyncio.run(_fetch_http(url, headers or {}))
    return asyncio.run(fetch_listing(lambda: stdio_target(command or []), " ".join(command or [])))


async def _fetch_http(url: str, headers: dict[str, str]) -> Listing:
    """Over our own HTTP client: it carries the headers and sees each status (the SDK
    reports a 401 only as "an error response")."""
    _sdk()
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    status: list[int] = []

    async def keep(response: Any) -> None:
        if response.status_code >= 400:
            status.append(response.status_code)

    client = create_mcp_http_client(headers=headers)
    client.event_hooks["response"].append(keep)
    async with client:
        return await fetch_listing(
            lambda: streamable_http_client(url, http_client=client), url, status
        )


def effect_of(annotations: dict[str, Any] | None) -> str:
    """``readOnlyHint: true`` → read; anything else → execute (an additive update
    still changes data, and the hints cannot tell a draft from a change)."""
    return "read" if (annotations or {}).get("readOnlyHint") is True else "execute"


# what of a listed tool a contract has no place for (outputSchema goes into x-mcp)
_DROPPED = ("title", "execution", "icons", "_meta")


def _hint_warnings(hints: dict[str, Any], name: str, where: str, path: str) -> list[Problem]:
    """Annotations that do not say what they seem to: a hint that is not a boolean, a
    tool both read-only and destructive."""
    out = []
    for key in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
        value = hints.get(key)
        if value is not None and not isinstance(value, bool):
            taken = f": {name} is taken as not read-only (execute)" if key == "readOnlyHint" else ""
            message = f"{_json(value)} is a {type(value).__name__.replace('str', 'string')}, not true{taken}"
            out.append(Problem(where, None, f"{path}.{key}", message, "warning"))
    if hints.get("readOnlyHint") is True and hints.get("destructiveHint") is True:
        message = (
            f"readOnlyHint and destructiveHint are both true: {name} is taken as read "
            "(a read-only tool destroys nothing); --effect NAME=execute if it does"
        )
        out.append(Problem(where, None, path, message, "warning"))
    return out


def _json(value: Any) -> str:
    import json

    return json.dumps(value)[:40]


def wire_name(name: str, taken: set[str]) -> str:
    """A name the wire allows for an MCP tool's name that it does not
    (``github.create_issue`` → ``github_create_issue``), distinct from ``taken``."""
    return distinct(re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "tool", taken)


def listing_tools(
    listing: Listing,
    where: str,
    skip: frozenset[str] = frozenset(),
    recorded: frozenset[str] = frozenset(),
) -> SourceTools:
    """The listing as toolstand tools: input schemas as given, annotations (and the
    output schema) in x-mcp; a name the wire cannot carry renamed, the server's kept in
    x-mcp-name; the tools named in ``skip`` (each one the server has) and ``recorded``
    (skipped when the contract was imported) left out."""
    out = SourceTools(source={"kind": "mcp", "server": listing.server})
    listed = [t.get("name") for t in listing.tools]
    unknown = sorted(skip - {n for n in listed if isinstance(n, str)})
    skip = skip | (recorded & {n for n in listed if isinstance(n, str)})
    if unknown:
        has = ", ".join(n for n in listed if isinstance(n, str)) or "none"
        raise LoadError(
            [
                Problem(
                    "--skip",
                    None,
                    "$",
                    f"no such tool: {', '.join(unknown)}; the server has: {has}",
                )
            ]
        )
    if skip:
        out.source["skipped"] = sorted(skip)
    # names the wire allows keep their name; the others are renamed after them
    taken = {n for n in listed if isinstance(n, str) and NAME.match(n) and n not in skip}
    renamed: list[str] = []
    dropped: dict[str, list[int]] = {}
    for i, tool in enumerate(listing.tools):
        name = tool.get("name")
        path = f"$.tools[{i}]"
        if name in skip:
            continue
        original = None
        if isinstance(name, str) and name and not NAME.match(name):
            original, name = name, wire_name(name, taken)
            taken.add(name)
            renamed.append(f"{original} → {name}")
        wrong = name_problem(name, out.tools)
        if wrong is not None:
            out.errors.append(Problem(where, None, f"{path}.name", wrong))
            continue
        params = tool.get("inputSchema")
        if not isinstance(params, dict):
            out.errors.append(Problem(where, None, f"{path}.inputSchema", "not an object"))
            continue
        odd = value_problem(tool, ("tools", i))
        if odd is not None:
            out.errors.append(Problem(where, None, *odd))
            continue
        description = tool.get("description")
        if description is None:
            out.warnings.append(
                Problem(where, None, path, f"tool {name!r} has no description", "warning")
            )
        for key in _DROPPED:
            if key in tool:
                dropped.setdefault(key, []).append(i)
        mcp = dict(tool.get("annotations") or {})
        out.warnings += _hint_warnings(mcp, str(name), where, f"{path}.annotations")
        if "outputSchema" in tool:
            mcp["outputSchema"] = tool["outputSchema"]
        entry = {"name": name, "description": description or "", "parameters": params, "x-mcp": mcp}
        if original is not None:
            entry["x-mcp-name"] = original
        out.tools.append(entry)
    for key, at in dropped.items():
        which = f"$.tools[{at[0]}].{key}" if len(at) == 1 else f"$.tools[*].{key}"
        many = "" if len(at) == 1 else f" ({len(at)} tools)"
        message = f"'{key}'{many} has no place in a contract; not imported"
        out.warnings.append(Problem(where, None, which, message, "warning"))
    if renamed:
        out.notes.append(
            "renamed for the wire (the server's name kept in x-mcp-name): " + ", ".join(renamed)
        )
    if skip:
        out.notes.append(f"skipped: {', '.join(sorted(skip))}")
    return out
