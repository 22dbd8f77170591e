"""A contract's tools exactly as an adapter sends them: the adapters' own
``tools_payload`` builds them (private ``x-`` keywords stripped, Gemini's schema form,
strict rewrites when asked for), so what is printed is what the model receives."""

from __future__ import annotations

from typing import Any

from toolstand.adapters import tools_payload
from toolstand.spec.contract import ToolSpec
from toolstand.types import APIS, Api

# the short names of the command line, and the wire API each stands for
EXPORT_APIS: dict[str, Api] = {"openai": "openai-chat", **{api: api for api in APIS}}


def export_tools(
    tools: list[ToolSpec], to: str, options: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The ``tools`` value of the adapter's request body for a run with ``options``."""
    return tools_payload(EXPORT_APIS[to], tools, options)
