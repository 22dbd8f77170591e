"""Tools from a live MCP server: tools/list, every page, over stdio or streamable HTTP.

The official ``mcp`` SDK is an optional extra (``toolstand[mcp]``), imported only here
and only when a command needs it. A stdio server is started and stopped by toolstand
with the user's whole environment: the SDK passes only HOME, PATH and a few more unless
told otherwise, and servers need their own keys.

What the SDK returns is turned into plain data (``listing_tools``) by code that touches
no SDK type, so the conversion is tested on recorded listings as well as live ones.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from toolstand.importers.providers import SourceTools, name_problem
from toolstand.util.problems import LoadError, Problem

INSTALL_HINT = "the MCP importer needs the official SDK: pip install 'toolstand[mcp]'"
# a server that keeps handing out cursors is refused rather than followed forever
MAX_PAGES = 1000
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
    return stdio_client(params, errlog=_errlog())


def _errlog() -> Any:
    """Our stderr when it is a real file (the server's process writes to it), else the
    process's own (stderr replaced by a capture, as under pytest)."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__
    return sys.stderr


async def fetch_listing(target: Any, where: str) -> Listing:
    """Connect (a URL string or stdio parameters), list every page of tools, disconnect;
    refused when the server has not finished within ``TIMEOUT`` seconds."""
    import asyncio

    try:
        async with asyncio.timeout(TIMEOUT):
            return await _list_every_page(target, where)
    except TimeoutError:
        message = f"MCP server did not answer tools/list within {TIMEOUT:g} s"
        raise LoadError([Problem(where, None, "$", message)]) from None


async def _list_every_page(target: Any, where: str) -> Listing:
    mcp = _sdk()
    try:
        async with mcp.Client(target, cache=None) as client:
            info = client.server_info
            listing = Listing(
                {"name": info.name, "version": info.version} if info is not None else {}
            )
            cursor: str | None = None
            while listing.pages < MAX_PAGES:
                page = await client.list_tools(cursor=cursor)
                listing.pages += 1
                listing.tools += [
                    t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools
                ]
                cursor = page.next_cursor
                if not cursor:
                    return listing
    except Exception as exc:  # the SDK's task groups raise groups of anything
        cause = _leaf(exc)
        message = f"MCP server failed: {type(cause).__name__}: {cause}"
        raise LoadError([Problem(where, None, "$", message)]) from None
    raise LoadError([Problem(where, None, "$", f"tools/list still paging after {MAX_PAGES}")])


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def fetch(command: list[str] | None, url: str | None) -> Listing:
    """The listing of a stdio server (``command``) or a streamable HTTP one (``url``)."""
    import asyncio

    if url is not None:
        return asyncio.run(fetch_listing(url, url))
    target = stdio_target(command or [])
    return asyncio.run(fetch_listing(target, " ".join(command or [])))


def effect_of(annotations: dict[str, Any] | None) -> str:
    """``readOnlyHint: true`` → read; anything else → execute (an additive update
    still changes data, and the hints cannot tell a draft from a change)."""
    return "read" if (annotations or {}).get("readOnlyHint") is True else "execute"


def listing_tools(listing: Listing, where: str) -> SourceTools:
    """The listing as toolstand tools: input schemas as given, annotations in x-mcp."""
    out = SourceTools(source={"kind": "mcp", "server": listing.server})
    for i, tool in enumerate(listing.tools):
        name = tool.get("name")
        path = f"$.tools[{i}]"
        wrong = name_problem(name, out.tools)
        if wrong is not None:
            out.errors.append(Problem(where, None, f"{path}.name", wrong))
            continue
        params = tool.get("inputSchema")
        if not isinstance(params, dict):
            out.errors.append(Problem(where, None, f"{path}.inputSchema", "not an object"))
            continue
        description = tool.get("description")
        if description is None:
            out.warnings.append(
                Problem(where, None, path, f"tool {name!r} has no description", "warning")
            )
        out.tools.append(
            {
                "name": name,
                "description": description or "",
                "parameters": params,
                "x-mcp": dict(tool.get("annotations") or {}),
            }
        )
    return out
