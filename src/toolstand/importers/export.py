"""A contract's tools exactly as an adapter sends them: the adapter's own request
builder runs on a placeholder conversation and its ``tools`` value is taken whole, so
what is printed is what the model receives (private ``x-`` keywords stripped, Gemini's
schema form, strict rewrites when asked for)."""

from __future__ import annotations

from typing import Any

from toolstand.adapters import get_adapter
from toolstand.adapters.base import RequestSettings, SchemaNote
from toolstand.contract import ToolSpec
from toolstand.types import Api

# the short names of the command line, and the wire API each stands for
EXPORT_APIS: dict[str, Api] = {
    "openai": "openai-chat",
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}
# only the URL of the request depends on it, and the URL is not printed
_PLACEHOLDER_URL = "http://127.0.0.1"


def export_tools(
    tools: list[ToolSpec], to: str, options: dict[str, Any] | None = None
) -> tuple[Any, list[SchemaNote]]:
    """The ``tools`` value of the adapter's request body, and the notes of what the
    adapter changed on the way (moved, dropped, rewritten keywords)."""
    adapter = get_adapter(EXPORT_APIS[to])
    built = adapter.build_request(
        base_url=_PLACEHOLDER_URL,
        model="export",
        system=None,
        messages=[{"role": "user", "content": "export"}],
        tools=tools,
        settings=RequestSettings(options=dict(options or {})),
    )
    return built.http.body.get("tools", []), built.schema_notes
