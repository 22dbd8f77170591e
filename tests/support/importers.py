"""What the importer tests share: the real MCP server's command and the CLI's output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolstand.spec.contract import Contract, parse_contract

HERE = Path(__file__).resolve().parents[1] / "importers"
SERVER = [sys.executable, str(HERE / "shop_server.py")]


@dataclass
class Ran:
    code: int
    out: str
    err: str


Cli = Callable[..., Ran]


def raw_server(tmp_path: Path, tools: list[dict[str, Any]] | str, *flags: str) -> list[str]:
    """The command of ``raw_server.py`` listing ``tools`` (a list, or Python source that
    sets ``TOOLS``), written under ``tmp_path``."""
    if isinstance(tools, str):
        path = tmp_path / f"tools{len(list(tmp_path.glob('tools*')))}.py"
        path.write_text(tools, encoding="utf-8")
    else:
        path = tmp_path / f"tools{len(list(tmp_path.glob('tools*')))}.json"
        path.write_text(json.dumps(tools), encoding="utf-8")
    return [sys.executable, str(HERE / "raw_server.py"), str(path), *flags]


def tool(name: str, read_only: bool | None = None, **props: Any) -> dict[str, Any]:
    """An MCP tool as tools/list gives it: ``props`` its parameters' schemas."""
    out: dict[str, Any] = {
        "name": name,
        "description": f"The {name} tool.",
        "inputSchema": {"type": "object", "properties": props},
    }
    if read_only is not None:
        out["annotations"] = {"readOnlyHint": read_only}
    return out


def contract_of(tools: list[dict[str, Any]], version: str = "1", **source: Any) -> Contract:
    data: dict[str, Any] = {"name": "c", "version": version, "tools": tools}
    if source:
        data["x-source"] = source
    return parse_contract(json.dumps(data))
