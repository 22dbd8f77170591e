"""The adapter contract: one implementation per wire API, data in and data out.

``build_request``, ``parse_decision``, ``append_tool_result``, ``classify_error``
and ``usage`` are pure: they touch no network and are tested on recorded bodies.
Only the transport (toolstand.transport) sends anything.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any, Literal, Protocol

import orjson

from toolstand.decision import DEPTH_ERROR, DUPLICATE_KEY_ERROR, ModelDecision, ToolCall
from toolstand.spec.contract import ToolSpec
from toolstand.spec.schema_limits import MAX_ARGUMENT_DEPTH
from toolstand.types import RequestToolChoice, ToolResultRecord
from toolstand.util.canonical import json_type_name
from toolstand.util.depth import nests_deeper
from toolstand.util.jsonpos import first_duplicate
from toolstand.util.lenient import loads_lenient

TransportCode = Literal[
    "rate_limited",
    "overloaded",
    "timeout",
    "connect_error",
    "server_error",
    "auth_error",
    "bad_request",
    "malformed_response",
    "stream_interrupted",
    "response_too_large",
    "redirect",
]
RETRYABLE_CODES: frozenset[str] = frozenset(
    {"rate_limited", "overloaded", "timeout", "server_error", "connect_error", "stream_interrupted"}
)


@dataclass
class RequestSettings:
    """What a run asks of the model, independent of the wire API.

    ``tools`` None means the no-tools control: no ``tools`` key and no tool_choice.
    ``options`` holds API-specific settings from the config: a run's ``options``
    (strict, store, max_tokens_param, gemini_schema) and its ``anthropic_version``.
    """

    tool_choice: RequestToolChoice = "auto"
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


def endpoint(base_url: str, path: str) -> str:
    """``path`` (starting with ``/``) appended to the base URL's path, the base URL's
    query kept after it (``https://h/openai?api-version=2024`` and ``/chat/completions``
    give ``https://h/openai/chat/completions?api-version=2024``); a fragment is dropped,
    as no client sends one."""
    rest = base_url.partition("#")[0]
    head, _, query = rest.partition("?")
    return head.rstrip("/") + path + (f"?{query}" if query else "")


@dataclass
class SchemaNote:
    """One change an adapter made to a tool schema to fit the API, or a loss it caused."""

    tool: str
    path: str  # JSON path inside the tool's parameters
    action: Literal["moved", "dropped", "rewritten", "lost", "unsupported"]
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
    # tool name -> schema paths of optional properties strict mode made nullable: a null
    # there is read as absent (adapters.strict.nulls_as_absent)
    nullable: dict[str, list[tuple[str | int, ...]]] = field(default_factory=dict)
    # the request asks for a streamed answer (adapters.streaming.streamed)
    stream: bool = False


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

    def to_record(self) -> ToolResultRecord:
        """The result as an attempt record holds it (``tool_results``)."""
        return {
            "call_id": self.call_id,
            "name": self.name,
            "result": self.result,
            "call_id_synthesized": self.call_id_synthesized,
        }


@dataclass
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass
class ErrorClass:
    code: TransportCode
    message: str
    retry_after_s: float | None = None
    # None: retry by ``code`` (RETRYABLE_CODES). False/True overrides it, e.g. a 429 that
    # is a billing state, a per-day quota, or the server's own ``x-should-retry`` header.
    retryable: bool | None = None

    @property
    def should_retry(self) -> bool:
        return self.code in RETRYABLE_CODES if self.retryable is None else self.retryable


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


# --- Pure helpers shared by the adapter implementations ------------------------------


def lower_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Header names lower-cased: HTTP names are case-insensitive, dict keys are not."""
    if not isinstance(headers, Mapping):
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}


def status_error_code(status: int) -> TransportCode | None:
    """The transport code an HTTP status implies on its own; None for 2xx."""
    if 200 <= status < 300:
        return None
    if status == 429:
        return "rate_limited"
    if status in (503, 529):
        return "overloaded"
    if status >= 500:
        return "server_error"
    if status in (401, 403):
        return "auth_error"
    return "bad_request"


def retry_after_from_headers(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, else ``Retry-After`` (seconds or HTTP date)."""
    h = lower_headers(headers)
    ms = _finite_nonneg(h.get("retry-after-ms"))
    if ms is not None:
        return ms / 1000.0
    value = h.get("retry-after")
    if value is None:
        return None
    seconds = _finite_nonneg(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" dates parse naive; HTTP dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_hint(headers: Mapping[str, str]) -> bool | None:
    """The server's own ``x-should-retry`` verdict (OpenAI and Anthropic send it)."""
    value = lower_headers(headers).get("x-should-retry", "").strip().lower()
    return {"true": True, "false": False}.get(value)


def _finite_nonneg(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse argument text strictly (no repair): (object, None) or (None, why not)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        try:  # valid JSON orjson cannot hold (1e400, a lone surrogate) is judged
            value = loads_lenient(text)
        except ValueError:
            return None, f"not valid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"arguments are a JSON {json_type_name(value)}, not an object"
    if nests_deeper(value, MAX_ARGUMENT_DEPTH, text):
        return None, f"{DEPTH_ERROR} {MAX_ARGUMENT_DEPTH} levels (JSON objects and arrays)"
    duplicate = _duplicate_key(text, value)
    if duplicate is not None:
        return None, duplicate
    return value, None


def _duplicate_key(text: str, value: dict[str, Any]) -> str | None:
    """Why ``text`` (which parsed to ``value``) is refused for writing one key twice in
    an object: a first-wins parser reads another call than a last-wins one. Counting the
    keys JSON kept against the colons in the text is cheap (every written key has a
    colon, so as many colons as kept keys means no key was written twice); the text is
    scanned only when there are more colons."""
    if text.count(":") == _kept_keys(value):
        return None
    found = first_duplicate(text)
    if found is None:  # a '":' inside a string value, not a second key
        return None
    path, _line = found
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return (
        f"{DUPLICATE_KEY_ERROR} {str(path[-1])!r} at {where}: JSON keeps only the last,"
        " a first-wins parser reads the first"
    )


def _kept_keys(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_kept_keys(v) for v in value.values())
    if isinstance(value, list):
        return sum(_kept_keys(v) for v in value)
    return 0


def reserialize(value: Any) -> str:
    """Compact JSON of an object the wire sent as JSON (key order kept)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # integers beyond 64 bits
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tool_call_from_wire(name: str, raw: Any, call_id: Any, synthesized_id: str) -> ToolCall:
    """A ToolCall from wire arguments: a string is kept verbatim and parsed; any other
    JSON value was sent as an object and is re-serialized (``raw_reserialized``)."""
    has_id = isinstance(call_id, str) and call_id != ""
    ident = call_id if has_id else synthesized_id
    if isinstance(raw, str):
        arguments, error = parse_json_object(raw)
        return ToolCall(name, arguments, raw, ident, not has_id, False, error)
    if raw is None:
        return ToolCall(name, None, None, ident, not has_id, False, "arguments missing")
    text = reserialize(raw)
    if isinstance(raw, dict) and nests_deeper(raw, MAX_ARGUMENT_DEPTH, text):
        why = f"{DEPTH_ERROR} {MAX_ARGUMENT_DEPTH} levels (JSON objects and arrays)"
        return ToolCall(name, None, text, ident, not has_id, True, why)
    if isinstance(raw, dict):
        return ToolCall(name, raw, text, ident, not has_id, True, None)
    error = f"arguments are a JSON {json_type_name(raw)}, not an object"
    return ToolCall(name, None, text, ident, not has_id, True, error)


def as_int(value: Any) -> int | None:
    """A token count as sent, or None (bools and floats are not counts)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def http_message(status: int, body: Any, message: Any) -> str:
    """The provider's error message, else the status and the start of a non-JSON body."""
    if isinstance(message, str) and message.strip():
        return message.strip()
    if isinstance(body, str) and body.strip():
        return f"HTTP {status}: {' '.join(body.split())[:200]}"
    return f"HTTP {status}"


def not_the_api(status: int, body: Any, what: str) -> ErrorClass:
    """``malformed_response``: a 2xx whose body is not the API's JSON."""
    kind = (
        f"JSON but not {what}" if isinstance(body, dict | list) else f"not JSON ({what} expected)"
    )
    return ErrorClass("malformed_response", http_message(status, body, f"2xx body is {kind}"))


def result_text(result: ToolResult) -> str:
    """The executor's result as JSON text, the form every API's tool result can carry."""
    return reserialize(result.result)


def settle(
    text: str | None,
    calls: list[ToolCall],
    partial: list[ToolCall],
    finish: str | None,
    flags: list[str],
    *,
    truncated: bool,
    malformed: bool = False,
    notes: list[str] | None = None,
) -> ModelDecision:
    """The decision every parser ends with, once refusals are ruled out: decided from the
    content. ``partial`` holds half-written calls (cut by the token limit), which are not
    calls; a malformed call makes the turn invalid too. ``notes`` name what was seen and
    not read; they never change the kind, except that when nothing readable remains the
    turn is invalid (flagged ``empty_response``)."""
    notes = notes if notes is not None else []
    if malformed:
        flags.append("malformed_tool_call")
    if partial or malformed:
        return ModelDecision(
            "invalid",
            text=text,
            finish_reason=finish,
            truncated=truncated,
            partial_calls=calls + partial,
            flags=flags,
            notes=notes,
        )
    if calls:
        return ModelDecision(
            "tool_call",
            text=text,
            calls=calls,
            finish_reason=finish,
            truncated=truncated,
            flags=flags,
            notes=notes,
        )
    if text is None:
        flags.append("empty_response")
        return ModelDecision(
            "invalid", finish_reason=finish, truncated=truncated, flags=flags, notes=notes
        )
    return ModelDecision(
        "text", text=text, finish_reason=finish, truncated=truncated, flags=flags, notes=notes
    )


def note_once(notes: list[str], note: str) -> None:
    """Add a note unless it is there already: ten unknown items of one type are one note."""
    if note not in notes:
        notes.append(note)


def unread_item(what: str, kind: Any) -> str:
    """The note for an output item, block or part of a type the adapter does not read."""
    return f"{what} {_short(kind)} not read (kept in the raw body)"


def unknown_finish(field: str, value: Any) -> str:
    """The note for a stop signal outside the adapter's table: decided from the content."""
    return f"{field} {_short(value)} not in the adapter's table; decided from the content"


def _short(value: Any) -> str:
    """A wire value as a short quoted label (repr spells control characters out)."""
    label = repr(value)
    return label if len(label) <= 80 else label[:77] + "..."


def parse_guarded(parse: Callable[[Any], ModelDecision], body: Any) -> ModelDecision:
    """Run an adapter's parser under the contract that parse_decision never raises: a
    body shape nobody foresaw becomes kind ``invalid`` flagged ``adapter_error``."""
    try:
        return parse(body)
    except Exception:
        return ModelDecision("invalid", flags=["adapter_error"])
