"""What the importer tests share: the real MCP server's command and the CLI's output."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "importers"
SERVER = [sys.executable, str(HERE / "shop_server.py")]


@dataclass
class Ran:
    code: int
    out: str
    err: str


Cli = Callable[..., Ran]
