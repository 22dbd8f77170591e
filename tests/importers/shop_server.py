"""A real MCP server for the importer's tests, written with the official SDK.

Run as ``python shop_server.py [--page-size N] [--http]``. Its tools cover what the
importer must tell apart: read-only, additive, destructive and unannotated tools, over a
tools/list split into pages of ``--page-size``. Two environment variables change it the
way a server's own release would, and prove the user's environment reaches the server
(the SDK alone passes only a few variables): ``SHOP_SERVER_NAME`` renames the server,
``SHOP_SERVER_VARIANT`` changes it — ``pattern`` (get_order's id grows a digit),
``unsafe`` (get_order loses its read-only hint), ``added`` (a new tool, refund_order).
With ``--http`` it serves streamable HTTP on 127.0.0.1 and prints its port on stdout
once it listens.
"""

from __future__ import annotations

import argparse
import os
import socket
from typing import Annotated, Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.types import ListToolsResult, ToolAnnotations
from pydantic import Field

VARIANT = os.environ.get("SHOP_SERVER_VARIANT", "")
ORDER_ID = r"^ORD-\d{7}$" if VARIANT == "pattern" else r"^ORD-\d{6}$"
OrderId = Annotated[str, Field(pattern=ORDER_ID, description="the order id, e.g. ORD-123456")]

shop = MCPServer(os.environ.get("SHOP_SERVER_NAME", "test-shop"), version="2.0.1")


@shop.tool(annotations=ToolAnnotations(read_only_hint=VARIANT != "unsafe", title="Order"))
def get_order(order_id: OrderId) -> dict[str, Any]:
    """Look up an order and its delivery status."""
    return {"order_id": order_id, "status": "in_transit"}


@shop.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def list_orders(limit: Annotated[int, Field(ge=1, le=50)] = 10) -> dict[str, Any]:
    """List the customer's latest orders."""
    return {"orders": [], "limit": limit}


@shop.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def add_note(order_id: OrderId, note: Annotated[str, Field(max_length=500)]) -> dict[str, Any]:
    """Add a note to an order (additive: nothing is overwritten)."""
    return {"ok": True}


@shop.tool(annotations=ToolAnnotations(destructive_hint=True))
def cancel_order(order_id: OrderId, reason: str | None = None) -> dict[str, Any]:
    """Cancel an order. Irreversible."""
    return {"ok": True}


@shop.tool()
def track_parcel(tracking_number: str) -> dict[str, Any]:
    """Track a parcel with the carrier (no annotations at all)."""
    return {"tracking_number": tracking_number}


if VARIANT == "added":

    @shop.tool(annotations=ToolAnnotations(destructive_hint=True))
    def refund_order(order_id: OrderId) -> dict[str, Any]:
        """Refund an order."""
        return {"ok": True}


def paged_server(page_size: int) -> Server[Any]:
    """The same tools behind a tools/list that hands them out ``page_size`` at a time."""

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        tools = await shop.list_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + page_size
        return ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        return await shop.call_tool(params.name, params.arguments or {})

    info = shop._lowlevel_server  # the name and version given above
    return Server(info.name, version=info.version, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(server: Server[Any]) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    print(sock.getsockname()[1], flush=True)  # the test connects once it reads this
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--page-size", type=int, default=2)
    p.add_argument("--http", action="store_true")
    args = p.parse_args()
    server = paged_server(args.page_size)
    if args.http:
        serve_http(server)
    else:
        anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
