"""The adapter registry: one adapter per wire API, looked up by the config's ``api``."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from toolstand.adapters.base import Adapter, RequestSettings, SchemaNote
from toolstand.spec.contract import ToolSpec
from toolstand.types import APIS, Api

# module and class of each API's adapter, imported when first asked for: a run speaks
# one or two of the four (and `check`, the TUI's Cases screen, none)
_ADAPTERS: dict[str, tuple[str, str]] = {
    "openai-chat": ("toolstand.adapters.openai_chat", "OpenAIChatAdapter"),
    "openai-responses": ("toolstand.adapters.openai_responses", "OpenAIResponsesAdapter"),
    "anthropic": ("toolstand.adapters.anthropic", "AnthropicAdapter"),
    "gemini": ("toolstand.adapters.gemini", "GeminiAdapter"),
}
assert tuple(_ADAPTERS) == APIS, "one adapter per API, in the order of types.Api"


class UnknownApiError(ValueError):
    """A config names a wire API toolstand does not speak."""


def get_adapter(api: str) -> Adapter:
    """A fresh adapter for a wire API name such as ``"openai-chat"``."""
    try:
        module, name = _ADAPTERS[api]
    except (KeyError, TypeError):
        raise UnknownApiError(f"unknown api {api!r}; allowed: {', '.join(APIS)}") from None
    adapter: type[Adapter] = getattr(importlib.import_module(module), name)
    return adapter()


def tools_payload(
    api: Api, tools: list[ToolSpec], options: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The ``tools`` value an ``api`` request carries for these tools with these run
    options (``strict``, ``gemini_schema``): built by the adapter itself, so it is exactly
    what a run would send."""
    return tools_built(api, tools, options)[0]


def tools_built(
    api: Api, tools: list[ToolSpec], options: Mapping[str, Any] | None = None
) -> tuple[list[dict[str, Any]], list[SchemaNote]]:
    """``tools_payload`` and the schema notes a run records with it."""
    if not tools:
        return [], []
    settings = RequestSettings(options=dict(options or {}))
    built = get_adapter(api).build_request(
        base_url="http://localhost",
        model="model",
        system=None,
        messages=[],
        tools=tools,
        settings=settings,
    )
    payload: list[dict[str, Any]] = built.http.body["tools"]
    return payload, built.schema_notes


__all__ = ["APIS", "Adapter", "UnknownApiError", "get_adapter", "tools_built", "tools_payload"]
