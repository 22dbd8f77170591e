"""OpenAI Chat Completions (/v1/chat/completions) on the wire, per OpenAI's API reference.

Like api.openai.com, a named forced call ends with ``finish_reason`` "stop", not
"tool_calls", so adapters must decide from the content.
"""

from __future__ import annotations

import time
from typing import Any

from toolstand.sim.turn import (
    Answer,
    ModelRequest,
    PriorCall,
    ToolOutput,
    WireError,
    loads_object,
    parse_result,
    text_of,
)
from toolstand.sim.wire_openai import OpenAIBase, token_limit, tool_choice


class ChatWire(OpenAIBase):
    api = "openai-chat"

    def parse(self, body: dict[str, Any], model: str) -> ModelRequest:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise WireError(
                "bad_request", "Invalid 'messages': expected a non-empty array.", "messages"
            )
        tools = body.get("tools")
        offered: dict[str, dict[str, Any]] = {}
        if tools is not None:
            if not isinstance(tools, list) or not tools:
                raise WireError(
                    "bad_request",
                    "Invalid 'tools': empty array. Expected an array with minimum length 1.",
                    "tools",
                )
            for tool in tools:
                fn = tool.get("function") if isinstance(tool, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    offered[fn["name"]] = fn.get("parameters") or {}
        if "tool_choice" in body and tools is None:
            raise WireError(
                "bad_request",
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                "tool_choice",
            )
        choice, forced, allowed = tool_choice(body.get("tool_choice"), list(offered), nested=True)
        turn = ModelRequest(self.api, model, (), offered, choice, forced, allowed)
        turn.parallel = body.get("parallel_tool_calls") is not False
        turn.max_tokens = token_limit(body, "max_completion_tokens") or token_limit(
            body, "max_tokens"
        )
        self._walk(messages, turn)
        return turn

    def _walk(self, messages: list[Any], turn: ModelRequest) -> None:
        conversation: list[tuple[str, str]] = []
        calls: dict[str, PriorCall] = {}
        pending: list[str] = []
        tool_active = False
        results: list[ToolOutput] = []
        for msg in messages:
            if not isinstance(msg, dict):
                raise WireError(
                    "bad_request", "Invalid 'messages': each item must be an object.", "messages"
                )
            role = msg.get("role")
            if role == "tool":
                cid = msg.get("tool_call_id")
                if cid not in calls:
                    raise WireError(
                        "bad_request",
                        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                        "messages",
                    )
                if cid in pending:
                    pending.remove(cid)
                results.append(
                    ToolOutput(cid, calls[cid].name, parse_result(text_of(msg.get("content"))))
                )
                continue
            if pending:
                raise WireError(
                    "bad_request",
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                    + ", ".join(pending),
                    "messages",
                )
            results = []
            if role == "assistant" and msg.get("tool_calls"):
                tool_active = True
                for tc in msg["tool_calls"]:
                    fn = tc.get("function", {}) if isinstance(tc, dict) else {}
                    cid = tc.get("id") if isinstance(tc, dict) else None
                    if not isinstance(cid, str):
                        raise WireError(
                            "bad_request",
                            "Missing required parameter: 'messages[].tool_calls[].id'.",
                            "messages",
                        )
                    calls[cid] = PriorCall(
                        cid, str(fn.get("name")), loads_object(fn.get("arguments"))
                    )
                    pending.append(cid)
            elif role in ("user", "assistant") and not tool_active:
                conversation.append((role, text_of(msg.get("content")).strip()))
            elif role not in ("system", "developer", "user", "assistant"):
                raise WireError(
                    "bad_request",
                    f"Invalid value: {role!r}. Supported values are: 'system', 'developer', 'user', 'assistant' and 'tool'.",
                    "messages",
                )
        if pending:
            raise WireError(
                "bad_request",
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                + ", ".join(pending),
                "messages",
            )
        turn.conversation = tuple(conversation)
        turn.calls = list(calls.values())
        turn.results = results

    def render(
        self, answer: Answer, turn: ModelRequest, rid: str, input_tokens: int
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "refusal": None,
            "annotations": [],
        }
        finish = "stop"
        if answer.kind == "refusal":
            message["refusal"] = answer.text
        elif answer.kind in ("calls", "malformed"):
            message["tool_calls"] = [
                {
                    "id": f"call_sim{rid}{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.raw_text()},
                }
                for i, c in enumerate(answer.calls)
            ]
            finish = "stop" if turn.forced is not None else "tool_calls"
        else:
            message["content"] = answer.text
        if answer.truncated:
            finish = "length"
        out = answer.output_tokens
        return {
            "id": f"chatcmpl-sim-{rid}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": turn.model,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": input_tokens,
                "completion_tokens": out,
                "total_tokens": input_tokens + out,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": 0,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
            "service_tier": "default",
            "system_fingerprint": "fp_toolstand_sim",
        }
