"""Gemini generateContent (/v1beta/models/{model}:generateContent), per Google's API reference.

The simulator behaves like a current Gemini model: function calls carry no ``id``
(so a ``functionResponse.id`` can only be a synthesized one, which must not be sent
back), the first call of a turn carries a ``thoughtSignature`` that must come back
in the history, and ``parameters`` (the OpenAPI-style Schema) refuses keywords its
proto does not know, as the real endpoint does; ``parametersJsonSchema`` takes any.
"""

from __future__ import annotations

import base64
from typing import Any

from toolstand.sim.turn import (
    Answer,
    Choice,
    ErrorKind,
    ModelRequest,
    PriorCall,
    ToolOutput,
    WireError,
    parse_result,
)

_TYPES: dict[ErrorKind, tuple[int, str]] = {
    "auth": (403, "PERMISSION_DENIED"),
    "bad_request": (400, "INVALID_ARGUMENT"),
    "not_found": (404, "NOT_FOUND"),
    "model_not_found": (404, "NOT_FOUND"),
    "rate_limited": (429, "RESOURCE_EXHAUSTED"),
    "server_error": (500, "INTERNAL"),
    "overloaded": (503, "UNAVAILABLE"),
}

MISSING_KEY = (
    "Method doesn't allow unregistered callers (callers without established identity). "
    "Please use API Key or other form of API consumer identity to call this API."
)

# fields of the Schema proto; anything else in ``parameters`` is a 400 on the real API
SCHEMA_FIELDS = frozenset(
    {
        *("type", "format", "title", "description", "nullable", "enum", "properties", "required"),
        *("items", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength"),
        *("pattern", "minProperties", "maxProperties", "propertyOrdering", "anyOf", "default"),
        *("example", "min_items", "max_items", "min_length", "max_length", "min_properties"),
        *("max_properties", "property_ordering", "any_of"),
    }
)

_MODES: dict[str, Choice] = {"AUTO": "auto", "VALIDATED": "auto", "ANY": "required", "NONE": "none"}


def _get(obj: dict[str, Any], camel: str, snake: str) -> Any:
    return obj.get(camel, obj.get(snake))


def _schema_problem(schema: Any, path: str) -> str | None:
    if not isinstance(schema, dict):
        return None
    for key, value in schema.items():
        if key not in SCHEMA_FIELDS:
            return f"Invalid JSON payload received. Unknown name \"{key}\" at '{path}': Cannot find field."
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                found = _schema_problem(sub, f"{path}.properties[{name}].value")
                if found:
                    return found
        elif key == "items":
            found = _schema_problem(value, f"{path}.items")
            if found:
                return found
        elif key in ("anyOf", "any_of") and isinstance(value, list):
            for i, sub in enumerate(value):
                found = _schema_problem(sub, f"{path}.any_of[{i}]")
                if found:
                    return found
    return None


class GeminiWire:
    api = "gemini"
    request_id_header = "x-goog-request-id"

    def authorize(self, headers: dict[str, str], query: dict[str, str]) -> dict[str, str]:
        if not (headers.get("x-goog-api-key") or query.get("key")):
            raise WireError("auth", MISSING_KEY)
        return {}

    def error(
        self,
        kind: ErrorKind,
        message: str,
        rid: str,
        retry_after_s: float = 0.0,
        param: str | None = None,
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, code = _TYPES[kind]
        error: dict[str, Any] = {"code": status, "message": message, "status": code}
        if kind == "rate_limited":
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel",
                        }
                    ],
                },
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": f"{retry_after_s:g}s",
                },
            ]
        return status, {"error": error}, {}

    def parse(self, body: dict[str, Any], model: str) -> ModelRequest:
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            raise WireError(
                "bad_request", "* GenerateContentRequest.contents: contents is not specified"
            )
        offered: dict[str, dict[str, Any]] = {}
        for t, tool in enumerate(body.get("tools") or []):
            decls = (
                _get(tool, "functionDeclarations", "function_declarations")
                if isinstance(tool, dict)
                else None
            )
            for d, decl in enumerate(decls or []):
                if not isinstance(decl, dict) or not isinstance(decl.get("name"), str):
                    raise WireError(
                        "bad_request",
                        f"* GenerateContentRequest.tools[{t}].function_declarations[{d}].name: Name cannot be empty.",
                    )
                legacy = decl.get("parameters")
                plain = _get(decl, "parametersJsonSchema", "parameters_json_schema")
                if legacy is not None and plain is not None:
                    raise WireError(
                        "bad_request",
                        f"* GenerateContentRequest.tools[{t}].function_declarations[{d}]: parameters and parameters_json_schema are mutually exclusive.",
                    )
                problem = _schema_problem(
                    legacy, f"tools[{t}].function_declarations[{d}].parameters"
                )
                if problem:
                    raise WireError("bad_request", problem)
                offered[decl["name"]] = plain if plain is not None else (legacy or {})
        config = (
            _get(
                body.get("toolConfig") or body.get("tool_config") or {},
                "functionCallingConfig",
                "function_calling_config",
            )
            or {}
        )
        mode = str(config.get("mode", "AUTO")).upper()
        if mode not in _MODES:
            raise WireError(
                "bad_request",
                f"Invalid value at 'tool_config.function_calling_config.mode' ({mode})",
            )
        choice: Choice = _MODES[mode] if offered else "none"
        names = _get(config, "allowedFunctionNames", "allowed_function_names")
        forced, allowed = None, None
        if names:
            unknown = [n for n in names if n not in offered]
            if unknown:
                raise WireError(
                    "bad_request",
                    f"* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: function {unknown[0]!r} is not declared.",
                )
            if choice == "required" and len(names) == 1:
                choice, forced = "forced", names[0]
            else:
                allowed = list(names)
        turn = ModelRequest(self.api, model, (), offered, choice, forced, allowed)
        generation = body.get("generationConfig") or body.get("generation_config") or {}
        turn.max_tokens = _get(generation, "maxOutputTokens", "max_output_tokens")
        self._walk(contents, turn)
        return turn

    def _walk(self, contents: list[Any], turn: ModelRequest) -> None:
        conversation: list[tuple[str, str]] = []
        calls: list[PriorCall] = []
        previous: list[PriorCall] = []
        results: list[ToolOutput] = []
        tool_active = False
        for i, content in enumerate(contents):
            role = content.get("role", "user") if isinstance(content, dict) else None
            if role not in ("user", "model"):
                raise WireError("bad_request", "Please use a valid role: user, model.")
            parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
            made = [p for p in parts if _get(p, "functionCall", "function_call")]
            answers = [_get(p, "functionResponse", "function_response") for p in parts]
            answers = [a for a in answers if isinstance(a, dict)]
            if made and not (made[0].get("thoughtSignature") or made[0].get("thought_signature")):
                name = _get(made[0], "functionCall", "function_call").get("name")
                raise WireError(
                    "bad_request",
                    f"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{name}` , position {i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                )
            results = []
            for j, answer in enumerate(answers):
                name = answer.get("name")
                if answer.get("id") is not None or not any(c.name == name for c in previous):
                    raise WireError(
                        "bad_request",
                        f"* GenerateContentRequest.contents[{i}].parts[{j}].function_response: no function call named {name!r} with id {answer.get('id')!r} in the previous model turn.",
                    )
                results.append(ToolOutput(None, str(name), _response(answer.get("response"))))
            previous = []
            for part in made:
                call = _get(part, "functionCall", "function_call")
                args = call.get("args")
                use = PriorCall(
                    call.get("id"), str(call.get("name")), args if isinstance(args, dict) else {}
                )
                previous.append(use)
                calls.append(use)
            tool_active = tool_active or bool(made) or bool(answers)
            if not tool_active:
                text = "".join(
                    p["text"]
                    for p in parts
                    if isinstance(p.get("text"), str) and not p.get("thought")
                )
                conversation.append(("assistant" if role == "model" else "user", text.strip()))
        turn.conversation = tuple(conversation)
        turn.calls = calls
        turn.results = results

    def render(
        self, answer: Answer, turn: ModelRequest, rid: str, input_tokens: int
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"index": 0}
        if answer.kind == "malformed":
            shown = ", ".join(f"{c.name}({c.raw_text()})" for c in answer.calls)
            candidate.update(
                finishReason="MALFORMED_FUNCTION_CALL",
                finishMessage=f"Malformed function call: {shown}",
            )
        elif answer.kind == "refusal":
            candidate.update(
                finishReason="SAFETY",
                safetyRatings=[
                    {
                        "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                        "probability": "HIGH",
                        "blocked": True,
                    }
                ],
            )
        elif answer.kind == "calls" and answer.truncated:
            candidate.update(finishReason="MAX_TOKENS")
        elif answer.kind == "calls":
            parts: list[dict[str, Any]] = [
                {"functionCall": {"name": c.name, "args": c.arguments}} for c in answer.calls
            ]
            if parts:
                parts[0]["thoughtSignature"] = base64.b64encode(
                    f"toolstand-sim:{rid}".encode()
                ).decode()
            candidate.update(content={"role": "model", "parts": parts}, finishReason="STOP")
        else:
            candidate.update(
                content={"role": "model", "parts": [{"text": answer.text}]},
                finishReason="MAX_TOKENS" if answer.truncated else "STOP",
            )
        out = answer.output_tokens
        return {
            "candidates": [candidate],
            "usageMetadata": {
                "promptTokenCount": input_tokens,
                "candidatesTokenCount": out,
                "totalTokenCount": input_tokens + out,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": input_tokens}],
            },
            "modelVersion": turn.model,
            "responseId": f"sim{rid}",
        }


def _response(response: Any) -> dict[str, Any]:
    """The executor's result from a functionResponse.response ({output} / {error} / itself)."""
    if not isinstance(response, dict):
        return parse_result(response)
    if "ok" in response:
        return response
    if "output" in response:
        return parse_result(response["output"])
    if "error" in response:
        error = response["error"]
        inner = parse_result(error) if isinstance(error, str) else error
        if isinstance(inner, dict) and inner.get("ok") is False:
            return inner
        return {"ok": False, "error": inner}
    return response
