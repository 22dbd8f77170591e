"""Issue 31, L7: an MCP import says where a server stopped answering (initialize, the
first page, or a loop of pages), and leaves none of the server's processes behind."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from toolstand.importers import mcp
from toolstand.util.problems import LoadError

SERVER = r"""
import json, os, signal, subprocess, sys, time
mode, pidfile = sys.argv[1], sys.argv[2]
if mode == "orphan":
    child = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"])
    open(pidfile, "w").write(str(child.pid))
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
tool = {"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {}}}
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        if mode == "hang":
            time.sleep(60); continue
        info = {"name": "s", "version": "1"}
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": info}
        send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
    elif msg["method"] == "tools/list":
        if mode == "silent":
            continue
        result = {"tools": [tool]}
        if mode == "loop":
            result["nextCursor"] = "same"
        send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
"""


def _server(tmp_path: Path, mode: str) -> list[str]:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    return [sys.executable, str(script), mode, str(tmp_path / "child.pid")]


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("hang", "MCP server did not answer initialize within 1.5 s"),
        ("silent", "MCP server did not answer tools/list within 1.5 s"),
    ],
)
def test_a_timeout_says_where_the_server_stood(
    tmp_path: Path, mode: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp, "TIMEOUT", 1.5)
    with pytest.raises(LoadError) as info:
        mcp.fetch(_server(tmp_path, mode), None)
    assert said in str(info.value.problems[0])


def test_a_server_that_pages_in_a_loop_is_refused_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(LoadError) as info:
        mcp.fetch(_server(tmp_path, "loop"), None)
    assert 'gave the cursor "same" a second time, after 2 pages' in str(info.value.problems[0])
    assert time.monotonic() - started < 30


def test_no_process_of_the_server_outlives_the_import(tmp_path: Path) -> None:
    listing = mcp.fetch(_server(tmp_path, "orphan"), None)
    assert [t["name"] for t in listing.tools] == ["t"]
    child = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)  # another process's death: no event to wait on here
    alive = _alive(child)
    if alive:
        os.kill(child, signal.SIGKILL)
    assert not alive, "the server's child ignored SIGTERM and was left running"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False
