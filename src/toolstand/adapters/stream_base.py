"""What every stream assembler shares: its outcome, the in-band error kinds, and the
parse of one event's JSON.

An assembler is pure: it is fed the SSE events of one response (``feed``) and then
``finish``\\ ed; the outcome holds the non-streamed body the events amount to, so the
adapter's own ``parse_decision``, ``usage`` and ``append_tool_result`` read a streamed
answer exactly as a non-streamed one (providers.md S7).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from toolstand.adapters.base import ErrorClass, TransportCode, status_error_code
from toolstand.adapters.sse import SseDecoder, SseEvent


@dataclass
class Assembled:
    """What one stream amounts to.

    ``body``: the equivalent non-streamed body (None when nothing usable arrived);
    ``complete``: the API's terminal event (or condition) was seen; ``error``: an error
    sent after the 200 (it ends the attempt as that transport error); ``mismatches``:
    where the whole answer the API also sent differs from what the deltas assembled,
    each ``{"what", "deltas", "whole"}`` (judged ``stream_mismatch``); ``flags``: server
    bug classes seen (providers.md S6.2 names); ``first_token`` / ``first_call``: the
    index of the first event carrying model output / opening a tool call."""

    body: Any
    complete: bool
    error: ErrorClass | None = None
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    first_token: int | None = None
    first_call: int | None = None
    events: int = 0


class StreamAssembler(Protocol):
    def feed(self, event: SseEvent) -> None: ...

    def finish(self, decoder: SseDecoder) -> Assembled: ...


class AssemblerBase:
    """Event counting, first-token bookkeeping and flags, for the four assemblers."""

    def __init__(self) -> None:
        self.n = -1  # index of the event being fed
        self.first_token: int | None = None
        self.first_call: int | None = None
        self.flags: list[str] = []
        self.error: ErrorClass | None = None

    def token(self) -> None:
        if self.first_token is None:
            self.first_token = self.n

    def call(self) -> None:
        self.token()
        if self.first_call is None:
            self.first_call = self.n

    def flag(self, name: str) -> None:
        if name not in self.flags:
            self.flags.append(name)

    def outcome(
        self, body: Any, complete: bool, mismatches: list[dict[str, Any]] | None = None
    ) -> Assembled:
        return Assembled(
            body,
            complete,
            self.error,
            mismatches or [],
            self.flags,
            self.first_token,
            self.first_call,
            self.n + 1,
        )


def event_json(data: str) -> Any:
    """An event's data as JSON, or None when it is not JSON (``[DONE]`` included)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


# error.type / error.code / status words sent after a 200, and the transport code each is
_KIND_CODES: dict[str, TransportCode] = {
    "overloaded_error": "overloaded",
    "overloaded": "overloaded",
    "unavailable": "overloaded",
    "rate_limit_error": "rate_limited",
    "rate_limit_exceeded": "rate_limited",
    "resource_exhausted": "rate_limited",
    "insufficient_quota": "rate_limited",
    "api_error": "server_error",
    "server_error": "server_error",
    "internal": "server_error",
    "internal_error": "server_error",
    "authentication_error": "auth_error",
    "permission_error": "auth_error",
    "unauthenticated": "auth_error",
    "permission_denied": "auth_error",
    "invalid_request_error": "bad_request",
    "invalid_argument": "bad_request",
    "not_found_error": "bad_request",
    "request_too_large": "bad_request",
    "timeout_error": "timeout",
    "deadline_exceeded": "timeout",
}
# billing states: retrying cannot help (as for a 429 with these codes)
_NO_RETRY = frozenset({"insufficient_quota", "credit_balance_exhausted"})


def inband_error(err: Any, where: str) -> ErrorClass:
    """The transport error an error object sent inside a 200 stream stands for: by its
    kind words (``type``, ``code``, ``status``), else by a numeric HTTP-like ``code``,
    else ``server_error``."""
    words: list[str] = []
    number: int | None = None
    message: Any = None
    if isinstance(err, dict):
        for key in ("type", "code", "status"):
            value = err.get(key)
            if isinstance(value, str):
                words.append(value.lower())
            elif isinstance(value, int) and not isinstance(value, bool):
                number = value
        number = number if number is not None else _int(err.get("status_code"))
        message = err.get("message")
    elif isinstance(err, str):
        message = err
    code: TransportCode | None = next((_KIND_CODES[w] for w in words if w in _KIND_CODES), None)
    if code is None and number is not None:
        code = status_error_code(number)
    text = message.strip() if isinstance(message, str) and message.strip() else "error event"
    kind = next(iter(words), None)
    label = f"{where}: {text}" + (f" ({kind})" if kind and kind not in text else "")
    retryable = False if any(w in _NO_RETRY for w in words) else None
    return ErrorClass(code or "server_error", label, retryable=retryable)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
