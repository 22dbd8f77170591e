"""OpenAI Responses (/v1/responses) on the wire, per OpenAI's API reference.

Both ways to continue after a call work: stateless (the whole conversation resent in
``input``) and stateful (``previous_response_id``; the last few thousand stored).
"""

from __future__ import annotations

import time
from collections import OrderedDict
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


class ResponsesWire(OpenAIBase):
    api = "openai-responses"
    STORE_LIMIT = 4096

    def __init__(self) -> None:
        # stored responses for previous_response_id, bounded so a long benchmark stays small
        self._stored: OrderedDict[str, list[Any]] = OrderedDict()

    def parse(self, body: dict[str, Any], model: str) -> ModelRequest:
        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        if not isinstance(items, list):
            raise WireError("bad_request", "Missing required parameter: 'input'.", "input")
        previous = body.get("previous_response_id")
        if previous is not None:
            if previous not in self._stored:
                raise WireError(
                    "bad_request",
                    f"Previous response with id '{previous}' not found.",
                    "previous_response_id",
                )
            items = self._stored[previous] + items
        offered: dict[str, dict[str, Any]] = {}
        for tool in body.get("tools") or []:
            if (
                isinstance(tool, dict)
                and tool.get("type") == "function"
                and isinstance(tool.get("name"), str)
            ):
                offered[tool["name"]] = tool.get("parameters") or {}
        choice, forced, allowed = tool_choice(body.get("tool_choice"), list(offered), nested=False)
        turn = ModelRequest(self.api, model, (), offered, choice, forced, allowed)
        turn.parallel = body.get("parallel_tool_calls") is not False
        turn.max_tokens = token_limit(body, "max_output_tokens")
        self._walk(items, turn)
        turn.echo = {
            "items": items,
            "instructions": body.get("instructions"),
            "previous_response_id": previous,
            "store": body.get("store") is not False,
            "temperature": body.get("temperature", 1.0),
            "top_p": body.get("top_p", 1.0),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
        }
        return turn

    def _walk(self, items: list[Any], turn: ModelRequest) -> None:
        conversation: list[tuple[str, str]] = []
        calls: dict[str, PriorCall] = {}
        answered: set[str] = set()
        results: list[ToolOutput] = []
        tool_active = False
        for item in items:
            if not isinstance(item, dict):
                raise WireError(
                    "bad_request", "Invalid 'input': each item must be an object.", "input"
                )
            kind = item.get("type", "message")
            if kind == "function_call":
                cid = item.get("call_id")
                if not isinstance(cid, str):
                    raise WireError(
                        "bad_request", "Missing required parameter: 'input[].call_id'.", "input"
                    )
                calls[cid] = PriorCall(
                    cid, str(item.get("name")), loads_object(item.get("arguments"))
                )
                tool_active = True
                results = []
            elif kind == "function_call_output":
                cid = item.get("call_id")
                if cid not in calls:
                    raise WireError(
                        "bad_request",
                        f"No tool call found for function call output with call_id {cid}.",
                        "input",
                    )
                answered.add(cid)
                results.append(
                    ToolOutput(cid, calls[cid].name, parse_result(text_of(item.get("output"))))
                )
            elif kind == "message":
                role = item.get("role")
                if role in ("user", "assistant"):
                    results = []
                    if not tool_active:
                        conversation.append((role, text_of(item.get("content")).strip()))
        missing = [cid for cid in calls if cid not in answered]
        if missing:
            raise WireError(
                "bad_request", f"No tool output found for function call {missing[0]}.", "input"
            )
        turn.conversation = tuple(conversation)
        turn.calls = list(calls.values())
        turn.results = results

    def render(
        self, answer: Answer, turn: ModelRequest, rid: str, input_tokens: int
    ) -> dict[str, Any]:
        status = "incomplete" if answer.truncated else "completed"
        output: list[dict[str, Any]] = []
        if answer.kind in ("calls", "malformed"):
            for i, c in enumerate(answer.calls):
                output.append(
                    {
                        "id": f"fc_sim{rid}{i}",
                        "type": "function_call",
                        "status": status,
                        "arguments": c.raw_text(),
                        "call_id": f"call_sim{rid}{i}",
                        "name": c.name,
                    }
                )
        else:
            part: dict[str, Any] = (
                {"type": "refusal", "refusal": answer.text}
                if answer.kind == "refusal"
                else {"type": "output_text", "annotations": [], "logprobs": [], "text": answer.text}
            )
            output.append(
                {
                    "id": f"msg_sim{rid}",
                    "type": "message",
                    "status": status,
                    "content": [part],
                    "role": "assistant",
                }
            )
        out = answer.output_tokens
        echo = turn.echo
        if echo.get("store"):
            self._stored[f"resp_sim{rid}"] = [*echo["items"], *output]
            while len(self._stored) > self.STORE_LIMIT:
                self._stored.popitem(last=False)
        return {
            "id": f"resp_sim{rid}",
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if answer.truncated else None,
            "instructions": echo.get("instructions"),
            "max_output_tokens": turn.max_tokens,
            "max_tool_calls": None,
            "model": turn.model,
            "output": output,
            "parallel_tool_calls": turn.parallel,
            "previous_response_id": echo.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "service_tier": "default",
            "store": echo.get("store", True),
            "temperature": echo.get("temperature", 1.0),
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": echo.get("tool_choice", "auto"),
            "tools": echo.get("tools", []),
            "top_logprobs": 0,
            "top_p": echo.get("top_p", 1.0),
            "truncation": "disabled",
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": out,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input_tokens + out,
            },
            "user": None,
            "metadata": {},
        }
