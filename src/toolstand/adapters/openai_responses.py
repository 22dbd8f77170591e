"""The OpenAI Responses wire API (``POST {base_url}/responses``), used statelessly.

The second turn resends the whole conversation in ``input`` (the first turn's items,
the response's output items as returned, then ``function_call_output`` items), so no
``previous_response_id`` and no server-side state is involved. ``store`` is sent only
when the run's ``options.store`` sets it. ``strict`` is always sent (false unless
``options.strict``); strict schemas are rewritten as for Chat Completions
(adapters.strict).

The outcome has no finish reason on the wire; ``finish_reason`` records ``status``, or
``incomplete_details.reason`` when the status is ``incomplete``.
"""

from __future__ import annotations

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
    not_the_api,
    note_once,
    parse_guarded,
    result_text,
    settle,
    tool_call_from_wire,
    unknown_finish,
    unread_item,
)
from toolstand.adapters.openai_chat import classify_openai_error
from toolstand.adapters.schema import json_copy
from toolstand.adapters.tools import SentTools, sent_tools
from toolstand.decision import ModelDecision, ToolCall
from toolstand.spec.contract import ToolSpec
from toolstand.types import RequestToolChoice

# a 200 with status "failed" that is really a transport failure (response_error.py codes)
FAILED_AS_TRANSPORT: dict[str, TransportCode] = {
    "server_error": "server_error",
    "rate_limit_exceeded": "rate_limited",
}
# output item types the next turn must see again (stateless multi-turn, B4)
REPLAYED_ITEMS = ("message", "function_call", "reasoning")
# statuses of a response that is not an answer yet: toolstand never asks for background
# mode, so one of these in a 2xx is a provider condition (malformed_response), not a turn
NOT_FINAL_STATUSES = ("queued", "in_progress")
# every status the SDK knows (response_status.py); another one is noted
KNOWN_STATUSES = ("completed", "failed", "in_progress", "cancelled", "queued", "incomplete")


class OpenAIResponsesAdapter:
    api = "openai-responses"
    version = "openai-responses/2"

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
        body: dict[str, Any] = {"model": model}
        if system is not None:
            body["instructions"] = system
        body["input"] = [{"role": m["role"], "content": m["content"]} for m in messages]
        notes = []
        api_settings: dict[str, Any] = {}
        # Responses may treat an omitted strict as true (UNCONFIRMED, B2): always send it.
        strict = bool(settings.options.get("strict", False))
        schemas = sent_tools(tools or [], strict="openai" if strict else None)
        if tools:
            body["tools"] = wire_tools(schemas, strict)
            notes += schemas.notes
            body["tool_choice"] = tool_choice(settings.tool_choice)
            if settings.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = settings.parallel_tool_calls
            api_settings["strict"] = strict
        if settings.temperature is not None:
            body["temperature"] = settings.temperature
        if settings.max_output_tokens is not None:
            body["max_output_tokens"] = settings.max_output_tokens
        if isinstance(settings.options.get("store"), bool):
            body["store"] = settings.options["store"]
        if tools:
            sent = {t["name"]: (t.get("description"), t.get("parameters")) for t in body["tools"]}
            notes += schemas.check(sent)
        url = endpoint(base_url, "/responses")
        http = HttpRequest("POST", url, {"content-type": "application/json"}, body)
        return BuiltRequest(http, notes, api_settings, schemas.nullable)

    def auth(self, key: str, settings: RequestSettings) -> tuple[dict[str, str], dict[str, str]]:
        return {"authorization": f"Bearer {key}"}, {}

    def parse_decision(self, body: Any) -> ModelDecision:
        return parse_guarded(_parse, body)

    def classify_error(self, status: int, headers: dict[str, str], body: Any) -> ErrorClass | None:
        return classify_openai_error(status, headers, body, _check_response)

    def append_tool_result(
        self,
        *,
        request_body: dict[str, Any],
        response_body: dict[str, Any],
        decision: ModelDecision,
        results: list[ToolResult],
    ) -> dict[str, Any]:
        body = json_copy(request_body)
        previous = body.get("input")
        items: list[Any] = (
            [{"role": "user", "content": previous}]
            if isinstance(previous, str)
            else list(previous or [])
        )
        output = response_body.get("output") if isinstance(response_body, dict) else None
        if isinstance(output, list):
            items += [
                json_copy(item)
                for item in output
                if isinstance(item, dict) and item.get("type") in REPLAYED_ITEMS
            ]
        else:  # no output on the wire: rebuild the calls from the decision
            items += [_wire_call(c) for c in decision.calls]
        for result in results:
            out: dict[str, Any] = {"type": "function_call_output"}
            if result.call_id and not result.call_id_synthesized:
                out["call_id"] = result.call_id
            out["output"] = result_text(result)
            items.append(out)
        body["input"] = items
        if "tools" in body:
            body["tool_choice"] = "auto"
        return body

    def usage(self, body: Any) -> Usage:
        u = body.get("usage") if isinstance(body, dict) else None
        if not isinstance(u, dict):
            return Usage()
        return Usage(as_int(u.get("input_tokens")), as_int(u.get("output_tokens")))


def wire_tools(schemas: SentTools, strict: bool) -> list[dict[str, Any]]:
    """The ``tools`` list of a Responses body: flat function tools, ``strict`` always set."""
    return [
        {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": params,
            "strict": strict,
        }
        for spec, params in schemas
    ]


def tool_choice(choice: RequestToolChoice) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "name": choice}


def _wire_call(call: ToolCall) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "function_call"}
    if call.call_id and not call.call_id_synthesized:
        item["call_id"] = call.call_id
    item.update({"name": call.name, "arguments": call.raw_arguments or "{}"})
    return item


def _check_response(status: int, body: Any) -> ErrorClass | None:
    if not isinstance(body, dict) or not isinstance(body.get("output"), list):
        return not_the_api(status, body, "a response object")
    state = body.get("status")
    if state in NOT_FINAL_STATUSES:
        message = f"2xx response has status {state!r}: not a final answer (background mode?)"
        return ErrorClass("malformed_response", message)
    err = body.get("error")
    if body.get("status") == "failed" and isinstance(err, dict):
        code = FAILED_AS_TRANSPORT.get(str(err.get("code")))
        if code is not None:
            return ErrorClass(code, http_message(status, None, err.get("message")))
    return None


def _parse(body: Any) -> ModelDecision:
    if not isinstance(body, dict):
        return ModelDecision("invalid", flags=["malformed_body"])
    output = body.get("output")
    if not isinstance(output, list):
        return ModelDecision("invalid", flags=["error_body" if body.get("error") else "no_output"])
    status = body.get("status") if isinstance(body.get("status"), str) else None
    details = body.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    reason = reason if isinstance(reason, str) else None
    finish = reason if status == "incomplete" and reason else status
    flags: list[str] = []
    notes: list[str] = []
    if status is not None and status not in KNOWN_STATUSES:
        note_once(notes, unknown_finish("status", status))
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    partial: list[ToolCall] = []
    malformed = False
    for i, item in enumerate(output):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "reasoning":
            if "reasoning" not in flags:
                flags.append("reasoning")
        elif kind == "message":
            content = item.get("content")
            for part in content if isinstance(content, list) else []:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "output_text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                    refusals.append(part["refusal"])
                else:
                    note_once(notes, unread_item("message part", part.get("type")))
        elif kind == "function_call":
            name = item.get("name")
            if not isinstance(name, str) or not name:
                malformed = True
                continue
            call = tool_call_from_wire(
                name, item.get("arguments"), item.get("call_id"), f"openai-responses-call-{i}"
            )
            # an item the token limit cut is half-written, whatever its arguments look like
            cut = item.get("status") == "incomplete" or (
                status == "incomplete" and item.get("status") != "completed"
            )
            (partial if cut else calls).append(call)
        else:  # hosted tools (web_search_call, mcp_call ...), images: not the contract's calls
            note_once(notes, unread_item("output item", kind))
    text = "".join(texts) or None
    if status == "failed":
        flags.append("response_failed")
        return ModelDecision("invalid", text=text, finish_reason=finish, flags=flags, notes=notes)
    if refusals or reason == "content_filter":
        if reason == "content_filter":
            flags.append("content_filter")
        refusal = "".join(refusals) or None
        return ModelDecision(
            "refusal", text=text, refusal=refusal, finish_reason=finish, flags=flags, notes=notes
        )
    if status in NOT_FINAL_STATUSES:  # classify_error reports it; here: nothing to judge
        flags.append("not_final")
    # an item marked incomplete was cut even when the response says completed
    truncated = status == "incomplete" or bool(partial)
    return settle(
        text, calls, partial, finish, flags, truncated=truncated, malformed=malformed, notes=notes
    )
