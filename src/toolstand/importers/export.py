"""A contract's tools exactly as an adapter sends them: the adapters' own
``tools_payload`` builds them (private ``x-`` keywords stripped, Gemini's schema form,
strict rewrites when asked for), so what is printed is what the model receives."""

from __future__ import annotations

from typing import Any

from toolstand.adapters import tools_built
from toolstand.adapters.base import SchemaNote
from toolstand.spec.contract import ToolSpec
from toolstand.types import APIS, Api

# the short names of the command line, and the wire API each stands for
EXPORT_APIS: dict[str, Api] = {"openai": "openai-chat", **{api: api for api in APIS}}


def export_tools(
    tools: list[ToolSpec], to: str, options: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], list[SchemaNote]]:
    """The ``tools`` value of the adapter's request body for a run with ``options``, and
    the schema notes the run records with it (what the adapter changed, what it lost)."""
    return tools_built(EXPORT_APIS[to], tools, options)


def note_line(note: SchemaNote) -> str:
    """One schema note as a line: tool, path, action and keyword, detail."""
    where = f"{note.tool}: {note.path or '$'}"
    return f"{where}: {note.action} {note.keyword}" + (f": {note.detail}" if note.detail else "")
