"""The Gemini ``generateContent`` wire API, REST v1beta (Developer API).

Schema form: tools are sent as ``parametersJsonSchema`` (plain JSON Schema) by default,
because the OpenAPI-subset ``parameters`` field refuses ``additionalProperties``,
``exclusiveMinimum`` and every other keyword outside its proto with a 400 for the whole
request, which would force the adapter to lose the very constraints
the judge checks. ``options.gemini_schema: "parameters"`` selects the subset instead;
then every keyword removed or rewritten is a SchemaNote and the sent-schema check
reports what was lost.

There is no parallel-call switch: a requested ``parallel_tool_calls`` is not sent and
``api_settings.unsent_settings`` says so. Call ids are often absent; we synthesize
``gemini-call-<index>`` and never send one back in ``functionResponse.id``.
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import quote

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
    retry_after_from_headers,
    settle,
    status_error_code,
    tool_call_from_wire,
    unknown_finish,
    unread_item,
)
from toolstand.adapters.gemini_parameters import to_gemini_parameters
from toolstand.adapters.schema import json_copy
from toolstand.adapters.tools import SentTools, sent_tools
from toolstand.decision import ModelDecision, ToolCall
from toolstand.spec.contract import ToolSpec
from toolstand.types import RequestToolChoice

SCHEMA_FORMS = ("parametersJsonSchema", "parameters")
# finishReason values and what each means for the decision.
# A provider's safety layer stopped the answer: a refusal, flagged content_filter
# (MODEL_ARMOR and JAILBREAK are Vertex's policy screens).
REFUSAL_FINISH = frozenset(
    {
        "SAFETY",
        "PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "MODEL_ARMOR",
        "JAILBREAK",
    }
)
# stopped for another reason of the provider's own (possible recitation, a language it
# does not serve): the model was not let answer, so a refusal too, flagged by reason
DECLINED_FINISH: dict[str, str] = {
    "RECITATION": "recitation",
    "IMAGE_RECITATION": "recitation",
    "LANGUAGE": "unsupported_language",
}
# the model tried calls the API could not return: no usable call
NO_USABLE_CALL_FINISH = frozenset({"MALFORMED_FUNCTION_CALL", "TOO_MANY_TOOL_CALLS"})
# decided from the content like STOP: UNEXPECTED_TOOL_CALL comes with a normal
# functionCall part naming an undeclared tool (the judge rules on the name); the rest
# say nothing about a text or tool answer
CONTENT_FINISH = frozenset(
    {
        "STOP",
        "UNEXPECTED_TOOL_CALL",
        "OTHER",
        "FINISH_REASON_UNSPECIFIED",
        "IMAGE_OTHER",
        "NO_IMAGE",
    }
)
# part keys that qualify a part rather than carry its content
_PART_QUALIFIERS = frozenset({"thought", "thoughtSignature", "partMetadata", "videoMetadata"})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


class GeminiAdapter:
    api = "gemini"
    version = "gemini/2"

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
        form = settings.options.get("gemini_schema", "parametersJsonSchema")
        if form not in SCHEMA_FORMS:
            raise ValueError(
                f"options.gemini_schema is {form!r}; allowed: {', '.join(SCHEMA_FORMS)}"
            )
        body: dict[str, Any] = {}
        if system is not None:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        body["contents"] = [
            {
                "role": "model" if m["role"] == "assistant" else "user",
                "parts": [{"text": m["content"]}],
            }
            for m in messages
        ]
        notes = []
        api_settings: dict[str, Any] = {}
        schemas = sent_tools(
            tools or [], fit=to_gemini_parameters if form == "parameters" else None
        )
        if tools:
            body["tools"] = wire_tools(schemas, form)
            notes += schemas.notes
            body["toolConfig"] = {
                "functionCallingConfig": function_calling_config(settings.tool_choice)
            }
            api_settings["schema_field"] = form
            if settings.parallel_tool_calls is not None:
                api_settings["unsent_settings"] = ["parallel_tool_calls"]
        generation: dict[str, Any] = {}
        if settings.temperature is not None:
            generation["temperature"] = settings.temperature
        if settings.max_output_tokens is not None:
            generation["maxOutputTokens"] = settings.max_output_tokens
        if generation:
            body["generationConfig"] = generation
        if tools:
            sent = {
                d["name"]: (d.get("description"), d.get(form))
                for d in body["tools"][0]["functionDeclarations"]
            }
            notes += schemas.check(sent)
        # escaped whole: a model id is one path segment, never "../" or a "#" or "?"
        model_id = quote(model.removeprefix("models/"), safe="")
        url = endpoint(base_url, f"/v1beta/models/{model_id}:generateContent")
        http = HttpRequest("POST", url, {"content-type": "application/json"}, body)
        return BuiltRequest(http, notes, api_settings)

    def auth(self, key: str, settings: RequestSettings) -> tuple[dict[str, str], dict[str, str]]:
        return {"x-goog-api-key": key}, {}

    def parse_decision(self, body: Any) -> ModelDecision:
        return parse_guarded(_parse, body)

    def classify_error(self, status: int, headers: dict[str, str], body: Any) -> ErrorClass | None:
        code = status_error_code(status)
        if code is None:
            if isinstance(body, dict) and (
                isinstance(body.get("candidates"), list)
                or isinstance(body.get("promptFeedback"), dict)
            ):
                return None
            return not_the_api(status, body, "a GenerateContentResponse")
        err = body.get("error") if isinstance(body, dict) else None
        err = err if isinstance(err, dict) else {}
        raw_details = err.get("details")
        details = (
            [d for d in raw_details if isinstance(d, dict)] if isinstance(raw_details, list) else []
        )
        # a bad key is a 400 here, not a 401
        if any(d.get("reason") == "API_KEY_INVALID" for d in details):
            code = "auth_error"
        hints = [retry_after_from_headers(lower_headers(headers)), _retry_delay(details)]
        known = [h for h in hints if h is not None]
        retryable = False if _per_day_quota(details) else None
        message = http_message(status, body, err.get("message"))
        return ErrorClass(code, message, max(known) if known else None, retryable)

    def append_tool_result(
        self,
        *,
        request_body: dict[str, Any],
        response_body: dict[str, Any],
        decision: ModelDecision,
        results: list[ToolResult],
    ) -> dict[str, Any]:
        body = json_copy(request_body)
        content = _candidate(response_body).get("content")
        if isinstance(content, dict):
            # unchanged: thought signatures and part order matter to the next turn (D4)
            model_turn = json_copy(content)
            model_turn.setdefault("role", "model")
        else:
            model_turn = {"role": "model", "parts": [_wire_call(c) for c in decision.calls]}
        parts = []
        for result in results:
            response: dict[str, Any] = {"name": result.name}
            if result.call_id and not result.call_id_synthesized:
                response["id"] = result.call_id
            response["response"] = {"error" if result.is_error else "output": result.result}
            parts.append({"functionResponse": response})
        body["contents"] = [
            *(body.get("contents") or []),
            model_turn,
            {"role": "user", "parts": parts},
        ]
        if "tools" in body:
            body["toolConfig"] = {"functionCallingConfig": {"mode": "AUTO"}}
        return body

    def usage(self, body: Any) -> Usage:
        u = body.get("usageMetadata") if isinstance(body, dict) else None
        if not isinstance(u, dict):
            return Usage()
        # thinking is billed as output but is not inside candidatesTokenCount (D3)
        return Usage(
            _sum(u, "promptTokenCount", "toolUsePromptTokenCount"),
            _sum(u, "candidatesTokenCount", "thoughtsTokenCount"),
        )


def wire_tools(schemas: SentTools, form: str) -> list[dict[str, Any]]:
    """The ``tools`` list of a generateContent body: one entry of function declarations."""
    decls = [
        {"name": spec.name, "description": spec.description, form: params}
        for spec, params in schemas
    ]
    return [{"functionDeclarations": decls}]


def function_calling_config(choice: RequestToolChoice) -> dict[str, Any]:
    modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
    if choice in modes:
        return {"mode": modes[choice]}
    return {"mode": "ANY", "allowedFunctionNames": [choice]}


def _sum(usage: dict[str, Any], *keys: str) -> int | None:
    counts = [n for n in (as_int(usage.get(k)) for k in keys) if n is not None]
    return sum(counts) if counts else None


def _retry_delay(details: list[dict[str, Any]]) -> float | None:
    for detail in details:
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            seconds = float(match.group(1)) if match else math.inf
            if math.isfinite(seconds):  # 400 digits parse to inf: no usable hint
                return seconds
    return None


def _per_day_quota(details: list[dict[str, Any]]) -> bool:
    """A per-day quota will not clear within any retry budget (D5)."""
    for detail in details:
        violations = detail.get("violations")
        for violation in violations if isinstance(violations, list) else []:
            if isinstance(violation, dict) and "PerDay" in str(violation.get("quotaId", "")):
                return True
    return False


def _wire_call(call: ToolCall) -> dict[str, Any]:
    fc: dict[str, Any] = {"name": call.name, "args": call.arguments or {}}
    if call.call_id and not call.call_id_synthesized:
        fc["id"] = call.call_id
    return {"functionCall": fc}


def _candidate(body: Any) -> dict[str, Any]:
    candidates = body.get("candidates") if isinstance(body, dict) else None
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        return candidates[0]
    return {}


def _parse(body: Any) -> ModelDecision:
    if not isinstance(body, dict):
        return ModelDecision("invalid", flags=["malformed_body"])
    candidate = _candidate(body)
    if not candidate:
        feedback = body.get("promptFeedback")
        block = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if isinstance(block, str):  # the prompt itself was blocked
            message = feedback.get("blockReasonMessage") if isinstance(feedback, dict) else None
            return ModelDecision(
                "refusal",
                refusal=message if isinstance(message, str) and message else None,
                finish_reason=block,
                flags=["prompt_blocked", "content_filter"],
            )
        return ModelDecision(
            "invalid", flags=["error_body" if body.get("error") else "no_candidates"]
        )
    finish = (
        candidate.get("finishReason") if isinstance(candidate.get("finishReason"), str) else None
    )
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    flags: list[str] = []
    notes: list[str] = []
    texts: list[str] = []
    calls: list[ToolCall] = []
    malformed = False
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        fc = part.get("functionCall")
        if isinstance(part.get("text"), str):
            if part.get("thought") is True:
                if "reasoning" not in flags:
                    flags.append("reasoning")
            else:
                texts.append(part["text"])
        elif isinstance(fc, dict):
            name = fc.get("name")
            if not isinstance(name, str) or not name:
                malformed = True
                continue
            # proto JSON leaves out an empty Struct: no args means no arguments
            synthesized = f"gemini-call-{len(calls)}"
            calls.append(tool_call_from_wire(name, fc.get("args", {}), fc.get("id"), synthesized))
        else:  # executableCode, inlineData, functionResponse ...: not the contract's
            kinds = [k for k in part if k not in _PART_QUALIFIERS]
            if kinds:
                note_once(notes, unread_item("part", kinds[0]))
    text = "".join(texts) or None
    if finish in REFUSAL_FINISH or finish in DECLINED_FINISH:
        flags.append("content_filter" if finish in REFUSAL_FINISH else DECLINED_FINISH[finish])
        message = candidate.get("finishMessage")
        refusal = message if isinstance(message, str) and message else None
        return ModelDecision(
            "refusal", text=text, refusal=refusal, finish_reason=finish, flags=flags, notes=notes
        )
    if finish in NO_USABLE_CALL_FINISH:
        flags.append(
            "malformed_function_call"
            if finish == "MALFORMED_FUNCTION_CALL"
            else "too_many_tool_calls"
        )
        return ModelDecision(
            "invalid",
            text=text,
            finish_reason=finish,
            partial_calls=calls,
            flags=flags,
            notes=notes,
        )
    if finish == "UNEXPECTED_TOOL_CALL":
        flags.append("unexpected_tool_call")
    elif finish is not None and finish not in CONTENT_FINISH | {"MAX_TOKENS"}:
        note_once(notes, unknown_finish("finishReason", finish))
    truncated = finish == "MAX_TOKENS"
    # a call cut by the token limit is half-written: not a call
    done, half = ([], calls) if truncated else (calls, [])
    return settle(
        text, done, half, finish, flags, truncated=truncated, malformed=malformed, notes=notes
    )
