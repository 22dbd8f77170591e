"""The Anthropic Messages wire API (``POST {base_url}/v1/messages``).

Two API versions are supported, chosen per run by the config's ``anthropic_version``:
``2023-06-01`` (the default) sends the key as ``x-api-key`` and sends ``temperature``;
``2026-10-21`` and later (what the current official SDK sends) send the key as
``Authorization: Bearer`` and no sampling parameters, because that version's request
has none. ``api_settings`` records the version, the auth header used and any setting
that was not sent, since the record keeps no auth headers.

With the run's ``options.strict`` the tools are sent with ``"strict": true`` and every
object closed (``additionalProperties: false``); what strict tools reject is noted
(adapters.strict).

Arguments arrive as an object (``tool_use.input``); ``raw_arguments`` is our orjson
serialization of it (key order kept) with ``raw_reserialized`` set.
"""

from __future__ import annotations

import re
from typing import Any

from toolstand.adapters.base import (
    BuiltRequest,
    ErrorClass,
    HttpRequest,
    RequestSettings,
    ToolResult,
    TransportCode,
    Usage,
    as_int,
    endpoint,
    http_message,
    lower_headers,
    not_the_api,
    note_once,
    parse_guarded,
    result_text,
    retry_after_from_headers,
    retry_hint,
    settle,
    status_error_code,
    tool_call_from_wire,
    unknown_finish,
    unread_item,
)
from toolstand.adapters.schema import json_copy
from toolstand.adapters.tools import SentTools, sent_tools
from toolstand.decision import ModelDecision, ToolCall
from toolstand.spec.contract import ToolSpec
from toolstand.types import RequestToolChoice

DEFAULT_VERSION = "2023-06-01"
# from this version on: Bearer auth and no sampling parameters
BEARER_FROM = "2026-10-21"
DEFAULT_MAX_TOKENS = 1024  # max_tokens is required by this API
TRUNCATION_STOPS = frozenset({"max_tokens", "model_context_window_exceeded"})
# every stop_reason the SDK knows (stop_reason.py); another one is noted
KNOWN_STOPS = frozenset(
    {"end_turn", "stop_sequence", "tool_use", "pause_turn", "refusal", *TRUNCATION_STOPS}
)
# an error event inside a 200 (only seen mid-stream, C5): its type says what happened
ERROR_TYPES: dict[str, TransportCode] = {
    "rate_limit_error": "rate_limited",
    "overloaded_error": "overloaded",
    "api_error": "server_error",
    "timeout_error": "server_error",
}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def api_version(settings: RequestSettings) -> str:
    version = settings.options.get("anthropic_version", DEFAULT_VERSION)
    if not isinstance(version, str) or not _DATE.match(version):
        raise ValueError(
            f"options.anthropic_version is {version!r}; expected a date such as "
            f"{DEFAULT_VERSION!r} or {BEARER_FROM!r}"
        )
    return version


class AnthropicAdapter:
    api = "anthropic"
    version = "anthropic/2"

    def build_request(
        self,
        *,
        base_url: str,
        model: str,
        system: str | None,
        messages: list[dict[str, str]],
        tools: list[ToolSpec] | None,
        settings: RequestSettings,
    ) -> BuiltRequest:
        version = api_version(settings)
        bearer = version >= BEARER_FROM
        max_tokens = settings.max_output_tokens
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
        }
        if system is not None:
            body["system"] = system
        body["messages"] = [{"role": m["role"], "content": m["content"]} for m in messages]
        notes = []
        api_settings: dict[str, Any] = {
            "anthropic_version": version,
            "auth_header": "authorization" if bearer else "x-api-key",
        }
        strict = bool(settings.options.get("strict"))
        schemas = sent_tools(tools or [], strict="anthropic" if strict else None)
        if tools:
            body["tools"] = wire_tools(schemas, strict)
            notes += schemas.notes
            body["tool_choice"] = tool_choice(settings.tool_choice, settings.parallel_tool_calls)
            if strict:
                api_settings["strict"] = True
        if settings.temperature is not None:
            if bearer:
                api_settings["unsent_settings"] = ["temperature"]
            else:
                body["temperature"] = settings.temperature
        if tools:
            sent = {t["name"]: (t.get("description"), t.get("input_schema")) for t in body["tools"]}
            notes += schemas.check(sent)
        url = endpoint(base_url, "/v1/messages")
        headers = {"content-type": "application/json", "anthropic-version": version}
        http = HttpRequest("POST", url, headers, body)
        return BuiltRequest(http, notes, api_settings, schemas.nullable)

    def auth(self, key: str, settings: RequestSettings) -> tuple[dict[str, str], dict[str, str]]:
        if api_version(settings) >= BEARER_FROM:
            return {"authorization": f"Bearer {key}"}, {}
        return {"x-api-key": key}, {}

    def parse_decision(self, body: Any) -> ModelDecision:
        return parse_guarded(_parse, body)

    def classify_error(self, status: int, headers: dict[str, str], body: Any) -> ErrorClass | None:
        h = lower_headers(headers)
        code = status_error_code(status)
        err = body.get("error") if isinstance(body, dict) else None
        message = err.get("message") if isinstance(err, dict) else None
        if code is None:
            if isinstance(body, dict) and isinstance(body.get("content"), list):
                return None
            error_type = err.get("type") if isinstance(err, dict) else None
            if isinstance(error_type, str) and error_type in ERROR_TYPES:
                return ErrorClass(ERROR_TYPES[error_type], http_message(status, None, message))
            return not_the_api(status, body, "a message")
        return ErrorClass(
            code, http_message(status, body, message), retry_after_from_headers(h), retry_hint(h)
        )

    def append_tool_result(
        self,
        *,
        request_body: dict[str, Any],
        response_body: dict[str, Any],
        decision: ModelDecision,
        results: list[ToolResult],
    ) -> dict[str, Any]:
        body = json_copy(request_body)
        content = response_body.get("content") if isinstance(response_body, dict) else None
        # the whole content goes back unchanged: thinking blocks must be passed back (C4)
        assistant_content = (
            json_copy(content)
            if isinstance(content, list)
            else [_wire_call(c) for c in decision.calls]
        )
        blocks: list[dict[str, Any]] = []
        for result in results:
            block: dict[str, Any] = {"type": "tool_result"}
            if result.call_id and not result.call_id_synthesized:
                block["tool_use_id"] = result.call_id
            block["content"] = result_text(result)
            if result.is_error:
                block["is_error"] = True
            blocks.append(block)
        body["messages"] = [
            *(body.get("messages") or []),
            {"role": "assistant", "content": assistant_content},
            {"role": "user", "content": blocks},
        ]
        if "tools" in body:
            previous = body.get("tool_choice")
            choice: dict[str, Any] = {"type": "auto"}
            if isinstance(previous, dict) and "disable_parallel_tool_use" in previous:
                choice["disable_parallel_tool_use"] = previous["disable_parallel_tool_use"]
            body["tool_choice"] = choice
        return body

    def usage(self, body: Any) -> Usage:
        u = body.get("usage") if isinstance(body, dict) else None
        if not isinstance(u, dict):
            return Usage()
        base = as_int(u.get("input_tokens"))
        cached = [
            as_int(u.get(k)) for k in ("cache_creation_input_tokens", "cache_read_input_tokens")
        ]
        # total input is the sum of all three (C3)
        total = None if base is None else base + sum(n for n in cached if n is not None)
        return Usage(total, as_int(u.get("output_tokens")))


def wire_tools(schemas: SentTools, strict: bool) -> list[dict[str, Any]]:
    """The ``tools`` list of a Messages body (``input_schema``, ``strict`` only when set)."""
    out = []
    for spec, params in schemas:
        tool: dict[str, Any] = {
            "name": spec.name,
            "description": spec.description,
            "input_schema": params,
        }
        if strict:
            tool["strict"] = True
        out.append(tool)
    return out


def tool_choice(choice: RequestToolChoice, parallel: bool | None) -> dict[str, Any]:
    if choice == "none":  # ToolChoiceNone has no parallel switch
        return {"type": "none"}
    if choice == "auto":
        out: dict[str, Any] = {"type": "auto"}
    elif choice == "required":
        out = {"type": "any"}
    else:
        out = {"type": "tool", "name": choice}
    if parallel is not None:
        out["disable_parallel_tool_use"] = not parallel
    return out


def _wire_call(call: ToolCall) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call.call_id,
        "name": call.name,
        "input": call.arguments or {},
    }


def _server_tool_block(kind: Any) -> bool:
    """Blocks of Anthropic-hosted tools (web search ...): not calls for us to answer."""
    return isinstance(kind, str) and (kind == "server_tool_use" or kind.endswith("_tool_result"))


def _parse(body: Any) -> ModelDecision:
    if not isinstance(body, dict):
        return ModelDecision("invalid", flags=["malformed_body"])
    content = body.get("content")
    if not isinstance(content, list):
        return ModelDecision("invalid", flags=["error_body" if body.get("error") else "no_content"])
    stop = body.get("stop_reason") if isinstance(body.get("stop_reason"), str) else None
    flags: list[str] = []
    notes: list[str] = []
    if stop is not None and stop not in KNOWN_STOPS:
        note_once(notes, unknown_finish("stop_reason", stop))
    texts: list[str] = []
    calls: list[ToolCall] = []
    malformed = False
    for i, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_use":
            name = block.get("name")
            if not isinstance(name, str) or not name:
                malformed = True
                continue
            calls.append(
                tool_call_from_wire(
                    name, block.get("input"), block.get("id"), f"anthropic-call-{i}"
                )
            )
        elif kind in ("thinking", "redacted_thinking"):
            if "reasoning" not in flags:
                flags.append("reasoning")
        elif _server_tool_block(kind):
            # a hosted tool's call is not one of the contract's calls
            if "server_tool" not in flags:
                flags.append("server_tool")
            note_once(notes, unread_item("content block", kind))
        elif isinstance(block, dict):
            note_once(notes, unread_item("content block", kind))
    text = "".join(texts) or None
    if stop == "refusal":
        details = body.get("stop_details")
        explanation = details.get("explanation") if isinstance(details, dict) else None
        refusal = explanation if isinstance(explanation, str) and explanation else None
        return ModelDecision(
            "refusal", text=text, refusal=refusal, finish_reason=stop, flags=flags, notes=notes
        )
    if stop == "pause_turn":
        flags.append("pause_turn")
    truncated = stop in TRUNCATION_STOPS
    # a call cut by the token limit is half-written: not a call
    done, half = ([], calls) if truncated else (calls, [])
    return settle(
        text, done, half, stop, flags, truncated=truncated, malformed=malformed, notes=notes
    )
