"""The Chat Completions wire API (``POST {base_url}/chat/completions``), also spoken by
OpenAI-compatible servers.

Known deviations of compatible servers and what this adapter
does about them:

- vLLM: ``"auto"`` needs ``--enable-auto-tool-choice`` and ``--tool-call-parser`` or it is
  a 400 (classified ``bad_request``, message kept); ``finish_reason: "tool_calls"`` has been
  seen with an empty ``tool_calls`` list (flag ``empty_tool_calls``; the decision follows
  the content); call ids look like ``chatcmpl-tool-…``; ``message.reasoning`` /
  ``reasoning_content`` carry thinking (flag ``reasoning``); errors come as
  ``{"error": {..., "code": 400}}`` (integer code), older releases as top-level
  ``{"object": "error", "message": ...}``, and the auth middleware as
  ``{"error": "Unauthorized"}``: all three are read.
- Ollama ``/v1``: ignores ``tool_choice``, ``parallel_tool_calls``, ``strict`` and
  ``max_completion_tokens`` silently (set ``options.max_tokens_param: "max_tokens"`` to
  cap output there); ``content`` is ``""`` next to tool calls (read as no text); calls
  carry an extra ``index`` (ignored, sent back unchanged); schemas are cut down to a few
  keywords server-side, which the sent-schema check cannot see.
- Ollama native ``/api/chat`` is a different API (arguments as objects, NDJSON by
  default) and is not supported here; if a server sends ``arguments`` as an object we
  re-serialize it (``raw_reserialized``, flag ``arguments_object``) instead of failing.
- LM Studio and OpenRouter: treated as plain OpenAI-compatible servers (their tool-calling
  behaviour is not documented: UNCONFIRMED). OpenRouter is known to put an upstream
  failure inside a 200 as ``choices[0].error`` or a top-level ``error`` with the HTTP
  status as ``code``; those are classified as transport failures by that code.
- With the run's ``options.strict`` each function is sent with ``"strict": true`` and its
  schema rewritten as strict mode requires (adapters.strict); a null for a property the
  rewrite made nullable is read as absent.
- Missing call ids are synthesized (``openai-chat-call-<i>``) and never sent back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolstand.adapters.base import (
    BuiltRequest,
    ErrorClass,
    HttpRequest,
    RequestSettings,
    ToolResult,
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

MAX_TOKENS_PARAMS = ("max_completion_tokens", "max_tokens")
# 429s that are billing states: retrying cannot help
NO_RETRY_429 = frozenset({"insufficient_quota", "credit_balance_exhausted"})
# every finish_reason the SDK knows (chat_completion.py); another one is noted
KNOWN_FINISH = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})


class OpenAIChatAdapter:
    api = "openai-chat"
    version = "openai-chat/2"

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
        wire_messages: list[dict[str, Any]] = []
        if system is not None:
            wire_messages.append({"role": "system", "content": system})
        wire_messages += [{"role": m["role"], "content": m["content"]} for m in messages]
        body: dict[str, Any] = {"model": model, "messages": wire_messages}
        notes = []
        api_settings: dict[str, Any] = {}
        strict = bool(settings.options.get("strict"))
        schemas = sent_tools(tools or [], strict="openai" if strict else None)
        if tools:
            body["tools"] = wire_tools(schemas, strict)
            notes += schemas.notes
            body["tool_choice"] = tool_choice(settings.tool_choice)
            if settings.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = settings.parallel_tool_calls
            if strict:
                api_settings["strict"] = True
        if settings.temperature is not None:
            body["temperature"] = settings.temperature
        if settings.max_output_tokens is not None:
            param = settings.options.get("max_tokens_param", "max_completion_tokens")
            if param not in MAX_TOKENS_PARAMS:
                raise ValueError(
                    f"options.max_tokens_param is {param!r}; allowed: {', '.join(MAX_TOKENS_PARAMS)}"
                )
            if param != "max_completion_tokens":
                api_settings["max_tokens_param"] = param
            body[param] = settings.max_output_tokens
        if tools:
            sent = {t["function"]["name"]: _sent_schema(t["function"]) for t in body["tools"]}
            notes += schemas.check(sent)
        url = endpoint(base_url, "/chat/completions")
        http = HttpRequest("POST", url, {"content-type": "application/json"}, body)
        return BuiltRequest(http, notes, api_settings, schemas.nullable)

    def auth(self, key: str, settings: RequestSettings) -> tuple[dict[str, str], dict[str, str]]:
        return {"authorization": f"Bearer {key}"}, {}

    def parse_decision(self, body: Any) -> ModelDecision:
        return parse_guarded(_parse, body)

    def classify_error(self, status: int, headers: dict[str, str], body: Any) -> ErrorClass | None:
        return classify_openai_error(status, headers, body, _check_completion)

    def append_tool_result(
        self,
        *,
        request_body: dict[str, Any],
        response_body: dict[str, Any],
        decision: ModelDecision,
        results: list[ToolResult],
    ) -> dict[str, Any]:
        body = json_copy(request_body)
        message = _message(response_body)
        assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if isinstance(message.get("tool_calls"), list):
            assistant["tool_calls"] = json_copy(message["tool_calls"])
        else:  # no message on the wire: rebuild it from the decision
            assistant["tool_calls"] = [_wire_call(c) for c in decision.calls]
        if message.get("refusal"):
            assistant["refusal"] = message["refusal"]
        turn: list[dict[str, Any]] = [assistant]
        for result in results:
            tool_msg: dict[str, Any] = {"role": "tool"}
            if result.call_id and not result.call_id_synthesized:
                tool_msg["tool_call_id"] = result.call_id
            tool_msg["content"] = result_text(result)
            turn.append(tool_msg)
        body["messages"] = list(body.get("messages") or []) + turn
        if "tools" in body:
            body["tool_choice"] = "auto"
        return body

    def usage(self, body: Any) -> Usage:
        u = body.get("usage") if isinstance(body, dict) else None
        if not isinstance(u, dict):
            return Usage()
        return Usage(as_int(u.get("prompt_tokens")), as_int(u.get("completion_tokens")))


def wire_tools(schemas: SentTools, strict: bool) -> list[dict[str, Any]]:
    """The ``tools`` list of a Chat Completions body."""
    out = []
    for spec, params in schemas:
        fn: dict[str, Any] = {
            "name": spec.name,
            "description": spec.description,
            "parameters": params,
        }
        if strict:
            fn["strict"] = True
        out.append({"type": "function", "function": fn})
    return out


def tool_choice(choice: RequestToolChoice) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _sent_schema(fn: dict[str, Any]) -> tuple[Any, Any]:
    return fn.get("description"), fn.get("parameters")


def _wire_call(call: ToolCall) -> dict[str, Any]:
    wire: dict[str, Any] = {}
    if call.call_id and not call.call_id_synthesized:
        wire["id"] = call.call_id
    wire["type"] = "function"
    wire["function"] = {"name": call.name, "arguments": call.raw_arguments or "{}"}
    return wire


def _message(body: Any) -> dict[str, Any]:
    if isinstance(body, dict):
        choices = body.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict):
                return message
    return {}


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content or None
    if isinstance(content, list):  # some compatible servers send content parts
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        text = "".join(p for p in parts if isinstance(p, str))
        return text or None
    return None


def _parse(body: Any) -> ModelDecision:
    if not isinstance(body, dict):
        return ModelDecision("invalid", flags=["malformed_body"])
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ModelDecision("invalid", flags=["error_body" if "error" in body else "no_choices"])
    choice = choices[0]
    finish = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
    message = _message(body)
    flags: list[str] = []
    notes: list[str] = []
    if finish is not None and finish not in KNOWN_FINISH:
        note_once(notes, unknown_finish("finish_reason", finish))
    if message.get("reasoning") or message.get("reasoning_content"):
        flags.append("reasoning")
    if isinstance(message.get("function_call"), dict):  # the deprecated functions API
        note_once(notes, unread_item("message field", "function_call"))
    text = _content_text(message.get("content"))
    refusal = message.get("refusal") if isinstance(message.get("refusal"), str) else None
    calls: list[ToolCall] = []
    malformed = False
    raw_calls = message.get("tool_calls")
    if isinstance(raw_calls, list):
        for i, entry in enumerate(raw_calls):
            fn = entry.get("function") if isinstance(entry, dict) else None
            name = fn.get("name") if isinstance(fn, dict) else None
            if (
                fn is None
                and isinstance(entry, dict)
                and entry.get("type") not in (None, "function")
            ):
                # a custom (free-form) tool's call: not one of the contract's functions
                note_once(notes, unread_item("tool call", entry.get("type")))
                continue
            if not isinstance(fn, dict) or not isinstance(name, str) or not name:
                malformed = True
                continue
            args = fn.get("arguments")
            if args is not None and not isinstance(args, str) and "arguments_object" not in flags:
                flags.append("arguments_object")
            calls.append(tool_call_from_wire(name, args, entry.get("id"), f"openai-chat-call-{i}"))
    elif raw_calls is not None:
        malformed = True
    return _decide(text, calls, refusal, finish, flags, malformed, notes)


def _decide(
    text: str | None,
    calls: list[ToolCall],
    refusal: str | None,
    finish: str | None,
    flags: list[str],
    malformed: bool,
    notes: list[str],
) -> ModelDecision:
    """The decision table for Chat Completions: content first."""
    if refusal or finish == "content_filter":
        if finish == "content_filter":
            flags.append("content_filter")
        return ModelDecision(
            "refusal", text=text, refusal=refusal, finish_reason=finish, flags=flags, notes=notes
        )
    truncated = finish == "length"
    if not calls and not malformed and finish == "tool_calls":
        flags.append("empty_tool_calls")  # vLLM has said tool_calls with none
    # a call cut by the token limit is half-written: not a call
    done, half = ([], calls) if truncated else (calls, [])
    return settle(
        text, done, half, finish, flags, truncated=truncated, malformed=malformed, notes=notes
    )


def _error_fields(body: Any) -> tuple[Any, Any]:
    """(message, code) from the OpenAI envelope and the compatible servers' variants."""
    if not isinstance(body, dict):
        return None, None
    err = body.get("error")
    if isinstance(err, dict):
        return err.get("message"), err.get("code")
    if isinstance(err, str):  # vLLM auth middleware
        return err, None
    return body.get("message"), body.get("code")  # older vLLM: fields at top level


def classify_openai_error(
    status: int,
    headers: dict[str, str],
    body: Any,
    check_2xx: Callable[[int, Any], ErrorClass | None],
) -> ErrorClass | None:
    """Shared by both OpenAI APIs: the same client code and error envelope (A5, B5)."""
    h = lower_headers(headers)
    code = status_error_code(status)
    if code is None:
        return check_2xx(status, body)
    message, err_code = _error_fields(body)
    retryable = retry_hint(h)
    if status == 429 and isinstance(err_code, str) and err_code in NO_RETRY_429:
        retryable = False
    message = http_message(status, body, message)
    return ErrorClass(code, message, retry_after_from_headers(h), retryable)


def _check_completion(status: int, body: Any) -> ErrorClass | None:
    if not isinstance(body, dict):
        return not_the_api(status, body, "a chat.completion")
    # OpenRouter reports an upstream failure inside a 200, with the HTTP status as code
    choices = body.get("choices")
    if isinstance(choices, list):
        err = choices[0].get("error") if choices and isinstance(choices[0], dict) else None
    else:
        err = body.get("error")
    if isinstance(err, dict):
        number = as_int(err.get("code"))
        code = status_error_code(number) if number is not None else None
        message = http_message(status, None, err.get("message"))
        return ErrorClass(code or "server_error", message)
    if not isinstance(choices, list):
        return not_the_api(status, body, "a chat.completion")
    return None
