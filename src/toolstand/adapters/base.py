"""The adapter contract: one implementation per wire API, data in and data out.

``build_request``, ``parse_decision``, ``append_tool_result``, ``classify_error``
and ``usage`` are pure: they touch no network and are tested on recorded bodies.
Only the transport (toolstand.transport) sends anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from toolstand.contract import ToolSpec
from toolstand.decision import ModelDecision

# "auto" | "none" | "required" | a tool name to force
ToolChoice = str
TOOL_CHOICE_KEYWORDS: tuple[str, ...] = ("auto", "none", "required")

TransportCode = Literal[
    "rate_limited",
    "overloaded",
    "timeout",
    "connect_error",
    "server_error",
    "auth_error",
    "bad_request",
    "malformed_response",
]
RETRYABLE_CODES: frozenset[str] = frozenset(
    {"rate_limited", "overloaded", "timeout", "server_error", "connect_error"}
)


@dataclass
class RequestSettings:
    """What a run asks of the model, independent of the wire API.

    ``tools`` None means the no-tools control: no ``tools`` key and no tool_choice.
    ``options`` holds API-specific settings from the config (e.g. anthropic_version).
    """

    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool | None = None
    temperature: float | None = 0.0
    max_output_tokens: int | None = 500
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class HttpRequest:
    """A request ready for the transport. The key is not in it: the transport adds it
    through ``Adapter.auth`` and never lets it reach a record."""

    method: str
    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    # query parameters without the key (Gemini's key= is added by the transport)
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class SchemaNote:
    """One change an adapter made to a tool schema to fit the API, or a loss it caused."""

    tool: str
    path: str  # JSON path inside the tool's parameters
    action: Literal["moved", "dropped", "rewritten", "lost"]
    keyword: str
    detail: str = ""


@dataclass
class BuiltRequest:
    http: HttpRequest
    # which keywords were moved, dropped or rewritten, and what the sent-schema check
    # found lost (required, enum, additionalProperties, description)
    schema_notes: list[SchemaNote] = field(default_factory=list)
    # API-specific facts worth recording (e.g. {"anthropic_version": "2023-06-01"})
    api_settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolResult:
    """What the fake executor returned for one call, to send back in the second turn."""

    call_id: str | None
    call_id_synthesized: bool
    name: str
    result: dict[str, Any]

    @property
    def is_error(self) -> bool:
        return self.result.get("ok") is False


@dataclass
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass
class ErrorClass:
    code: TransportCode
    message: str
    retry_after_s: float | None = None


class Adapter(Protocol):
    api: str  # "openai-chat" | "openai-responses" | "anthropic" | "gemini"
    version: str  # bumped whenever build/parse behaviour changes

    def build_request(
        self,
        *,
        base_url: str,
        model: str,
        system: str | None,
        messages: list[dict[str, str]],
        tools: list[ToolSpec] | None,
        settings: RequestSettings,
    ) -> BuiltRequest: ...

    def auth(self, key: str, settings: RequestSettings) -> tuple[dict[str, str], dict[str, str]]:
        """Headers and query parameters that carry the key (never recorded)."""
        ...

    def parse_decision(self, body: Any) -> ModelDecision:
        """Normalize a 2xx body. Never raises: an unusable body is kind ``invalid``."""
        ...

    def classify_error(self, status: int, headers: dict[str, str], body: Any) -> ErrorClass | None:
        """Classify a response as a transport failure, or None when it is a usable answer."""
        ...

    def append_tool_result(
        self,
        *,
        request_body: dict[str, Any],
        response_body: dict[str, Any],
        decision: ModelDecision,
        results: list[ToolResult],
    ) -> dict[str, Any]:
        """The second-turn body: the first request, the assistant's own message as the API
        returned it, and the tool results with the right ids; tool_choice back to auto."""
        ...

    def usage(self, body: Any) -> Usage: ...
