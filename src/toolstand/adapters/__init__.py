"""The adapter registry: one adapter per wire API, looked up by the config's ``api``."""

from __future__ import annotations

from toolstand.adapters.anthropic import AnthropicAdapter
from toolstand.adapters.base import Adapter
from toolstand.adapters.gemini import GeminiAdapter
from toolstand.adapters.openai_chat import OpenAIChatAdapter
from toolstand.adapters.openai_responses import OpenAIResponsesAdapter
from toolstand.types import APIS

_ADAPTERS: dict[str, type[Adapter]] = {
    "openai-chat": OpenAIChatAdapter,
    "openai-responses": OpenAIResponsesAdapter,
    "anthropic": AnthropicAdapter,
    "gemini": GeminiAdapter,
}
assert tuple(_ADAPTERS) == APIS, "one adapter per API, in the order of types.Api"


class UnknownApiError(ValueError):
    """A config names a wire API toolstand does not speak."""


def get_adapter(api: str) -> Adapter:
    """A fresh adapter for a wire API name such as ``"openai-chat"``."""
    try:
        return _ADAPTERS[api]()
    except (KeyError, TypeError):
        raise UnknownApiError(f"unknown api {api!r}; allowed: {', '.join(APIS)}") from None


__all__ = ["APIS", "Adapter", "UnknownApiError", "get_adapter"]
