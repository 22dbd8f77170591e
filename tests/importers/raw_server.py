"""A bare stdio MCP server (no SDK) that lists the tools a file holds, verbatim.

usage: python raw_server.py TOOLS [--page-size N] [--log FILE] [--v1]

``TOOLS`` is a JSON file, or Python source (``*.py``) that sets ``TOOLS``: values JSON
cannot spell (integers beyond 64 bits, NaN) go out as Python's ``json`` writes them.
``--log FILE`` appends each request's method to FILE, one a line. ``--v1`` answers a
method it does not know the way servers made with the MCP SDK 1.x do: a JSON-RPC error,
and a pydantic validation error of many lines on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

KNOWN = ("initialize", "tools/list", "ping")
# what an SDK 1.x server prints for a request it cannot validate (cut short)
V1_NOISE = "\n".join(
    ["Failed to validate request: 1 validation errors for ClientRequest"]
    + [f"  ClientRequest.method: input should be '{m}' [type=literal_error]" for m in KNOWN]
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tools")
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--log")
    parser.add_argument("--v1", action="store_true")
    args = parser.parse_args()
    tools = _tools(args.tools)
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "id" not in msg:
            continue  # a notification
        method = msg.get("method")
        if args.log:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(f"{method}\n")
        _answer(msg, method, tools, args)


def _tools(path: str) -> list[Any]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not path.endswith(".py"):
        return list(json.loads(text))
    scope: dict[str, Any] = {}
    exec(text, scope)
    return list(scope["TOOLS"])


def _answer(msg: dict[str, Any], method: Any, tools: list[Any], args: argparse.Namespace) -> None:
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion", "2025-06-18")
        _send(msg, {"protocolVersion": version, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "0.0.1"}})  # fmt: skip
    elif method == "tools/list":
        cursor = (msg.get("params") or {}).get("cursor")
        start = int(cursor) if cursor else 0
        size = args.page_size or len(tools) or 1
        result: dict[str, Any] = {"tools": tools[start : start + size]}
        if start + size < len(tools):
            result["nextCursor"] = str(start + size)
        _send(msg, result)
    elif method == "ping":
        _send(msg, {})
    else:
        if args.v1:
            print(V1_NOISE, file=sys.stderr, flush=True)
        error = {"code": -32601 if not args.v1 else -32602, "message": f"unknown: {method}"}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": error}) + "\n")
        sys.stdout.flush()


def _send(msg: dict[str, Any], result: Any) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
