"""Anthropic Messages (/v1/messages) on the wire, per Anthropic's API reference.

Both auth styles are accepted: ``x-api-key`` (API version 2023-06-01) and
``Authorization: Bearer`` (2026-10-21, what the installed official SDK sends). The
style used is echoed in ``x-toolstand-sim-auth`` so adapter tests can check it.
"""

from __future__ import annotations

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
    text_of,
)
from toolstand.sim.wire_openai import bearer

_TYPES: dict[ErrorKind, tuple[int, str]] = {
    "auth": (401, "authentication_error"),
    "bad_request": (400, "invalid_request_error"),
    "not_found": (404, "not_found_error"),
    "model_not_found": (404, "not_found_error"),
    "rate_limited": (429, "rate_limit_error"),
    "server_error": (500, "api_error"),
    "overloaded": (529, "overloaded_error"),
}


_CHOICES: dict[str, Choice] = {"auto": "auto", "any": "required", "tool": "forced", "none": "none"}


class AnthropicWire:
    api = "anthropic"
    request_id_header = "request-id"

    def authorize(self, headers: dict[str, str], query: dict[str, str]) -> dict[str, str]:
        if headers.get("x-api-key"):
            style = "x-api-key"
        elif bearer(headers) is not None:
            style = "bearer"
        else:
            raise WireError("auth", "x-api-key header is required")
        if not headers.get("anthropic-version"):
            raise WireError("bad_request", "anthropic-version: header is required")
        return {"x-toolstand-sim-auth": style}

    def error(
        self,
        kind: ErrorKind,
        message: str,
        rid: str,
        retry_after_s: float = 0.0,
        param: str | None = None,
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, etype = _TYPES[kind]
        body = {
            "type": "error",
            "error": {"type": etype, "message": message},
            "request_id": f"req_sim{rid}",
        }
        headers = {"retry-after": f"{retry_after_s:g}"} if kind == "rate_limited" else {}
        return status, body, headers

    def parse(self, body: dict[str, Any], model: str) -> ModelRequest:
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise WireError("bad_request", "max_tokens: Field required (an integer >= 1)")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise WireError("bad_request", "messages: Field required (a non-empty list)")
        offered: dict[str, dict[str, Any]] = {}
        for tool in body.get("tools") or []:
            if (
                isinstance(tool, dict)
                and isinstance(tool.get("name"), str)
                and "input_schema" in tool
            ):
                offered[tool["name"]] = tool.get("input_schema") or {}
        choice: Choice = "auto" if offered else "none"
        forced = None
        parallel = True
        raw = body.get("tool_choice")
        if raw is not None:
            if not isinstance(raw, dict) or raw.get("type") not in ("auto", "any", "tool", "none"):
                raise WireError(
                    "bad_request",
                    "tool_choice: Input tag does not match any of the expected tags: 'auto', 'any', 'tool', 'none'",
                )
            kind = raw["type"]
            choice = _CHOICES[kind]
            if kind == "tool":
                forced = raw.get("name")
                if forced not in offered:
                    raise WireError(
                        "bad_request", f"tool_choice.name: tool {forced!r} not found in tools"
                    )
            parallel = raw.get("disable_parallel_tool_use") is not True
        turn = ModelRequest(self.api, model, (), offered, choice, forced, None, parallel)
        turn.max_tokens = max_tokens
        self._walk(messages, turn)
        return turn

    def _walk(self, messages: list[Any], turn: ModelRequest) -> None:
        conversation: list[tuple[str, str]] = []
        calls: list[PriorCall] = []
        waiting: dict[str, PriorCall] = {}  # tool_use blocks the next message must answer
        results: list[ToolOutput] = []
        tool_active = False
        for i, msg in enumerate(messages):
            if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
                raise WireError(
                    "bad_request", f"messages.{i}.role: Input should be 'user' or 'assistant'"
                )
            role, content = msg["role"], msg.get("content")
            blocks = (
                [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
            )
            answers = [(j, b) for j, b in enumerate(blocks) if b.get("type") == "tool_result"]
            for j, block in answers:
                if block.get("tool_use_id") not in waiting:
                    raise WireError(
                        "bad_request",
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
                    )
            missing = set(waiting) - {b.get("tool_use_id") for _, b in answers}
            if missing:
                raise WireError(
                    "bad_request",
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(sorted(missing))}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                )
            results = [self._result(b, waiting) for _, b in answers]
            waiting = {}
            if role == "assistant":
                for b in blocks:
                    if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                        use = PriorCall(
                            b["id"],
                            str(b.get("name")),
                            b["input"] if isinstance(b.get("input"), dict) else {},
                        )
                        waiting[b["id"]] = use
                        calls.append(use)
            tool_active = tool_active or bool(waiting) or bool(answers)
            if not tool_active:
                conversation.append((role, text_of(content).strip()))
        turn.conversation = tuple(conversation)
        turn.calls = calls
        turn.results = results

    @staticmethod
    def _result(block: dict[str, Any], waiting: dict[str, PriorCall]) -> ToolOutput:
        text = text_of(block.get("content"))
        result = parse_result(text)
        if block.get("is_error") and "ok" not in result:
            result = {"ok": False, "error": {"message": text}}
        use_id = str(block.get("tool_use_id"))
        return ToolOutput(use_id, waiting[use_id].name, result)

    def render(
        self, answer: Answer, turn: ModelRequest, rid: str, input_tokens: int
    ) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        stop_details = None
        if answer.kind in ("calls", "malformed"):
            for i, c in enumerate(answer.calls):
                # a call cut by max_tokens has no complete input; the API's exact non-streaming
                # form is unconfirmed, so the block carries an empty input
                content.append(
                    {
                        "type": "tool_use",
                        "id": f"toolu_sim{rid}{i}",
                        "name": c.name,
                        "input": {} if c.raw is not None else c.arguments,
                        "caller": {"type": "direct"},
                    }
                )
            stop = "tool_use"
        elif answer.kind == "refusal":
            content.append({"type": "text", "text": answer.text})
            stop = "refusal"
            stop_details = {"type": "refusal", "category": None, "explanation": None}
        else:
            content.append({"type": "text", "text": answer.text})
            stop = "end_turn"
        if answer.truncated:
            stop = "max_tokens"
        return {
            "id": f"msg_sim{rid}",
            "type": "message",
            "role": "assistant",
            "model": turn.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "stop_details": stop_details,
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                "output_tokens": answer.output_tokens,
                "service_tier": "standard",
            },
            "container": None,
        }
