"""Raw requests and response readers for the simulator tests.

A deliberately small reading of the providers' API references written apart from the adapters, so these
tests check the simulator's wire shapes without depending on toolstand's own adapters.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from toolstand.spec.cases import Case, load_cases
from toolstand.spec.contract import Contract, ToolSpec

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test"
SYSTEM = "Ты маршрутизатор инструментов службы доставки."
# the shipped cases with a second turn, read from the case file so a new one is covered
FOLLOWUP_CASES = [
    c.id for c in load_cases(ROOT / "cases" / "delivery.jsonl").cases if c.followup is not None
]
HEADERS: dict[str, dict[str, str]] = {
    "openai-chat": {"Authorization": f"Bearer {KEY}"},
    "openai-responses": {"Authorization": f"Bearer {KEY}"},
    "anthropic": {"x-api-key": KEY, "anthropic-version": "2023-06-01"},
    "gemini": {"x-goog-api-key": KEY},
}


def path(api: str, model: str) -> str:
    return {
        "openai-chat": "/v1/chat/completions",
        "openai-responses": "/v1/responses",
        "anthropic": "/v1/messages",
        "gemini": f"/v1beta/models/{model}:generateContent",
    }[api]


def tools_payload(api: str, specs: list[ToolSpec]) -> list[dict[str, Any]]:
    if api == "openai-chat":
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in specs
        ]
    if api == "openai-responses":
        return [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
            for t in specs
        ]
    if api == "anthropic":
        return [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in specs
        ]
    decls = [
        {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
        for t in specs
    ]
    return [{"functionDeclarations": decls}]


def choice_payload(api: str, choice: str) -> Any:
    keyword = choice in ("auto", "none", "required")
    if api == "openai-chat":
        return choice if keyword else {"type": "function", "function": {"name": choice}}
    if api == "openai-responses":
        return choice if keyword else {"type": "function", "name": choice}
    if api == "anthropic":
        return {
            "type": {"auto": "auto", "none": "none", "required": "any"}.get(choice, "tool"),
            **({} if keyword else {"name": choice}),
        }
    mode = {"auto": "AUTO", "none": "NONE", "required": "ANY"}.get(choice, "ANY")
    return {
        "functionCallingConfig": {
            "mode": mode,
            **({} if keyword else {"allowedFunctionNames": [choice]}),
        }
    }


def build(
    api: str,
    model: str,
    conversation: list[dict[str, str]],
    specs: list[ToolSpec] | None = None,
    choice: str | None = "auto",
    *,
    max_tokens: int | None = None,
    parallel: bool | None = None,
) -> dict[str, Any]:
    """A first-turn body. ``specs`` None sends no tools key (the no-tools control)."""
    body: dict[str, Any]
    if api == "openai-chat":
        body = {"model": model, "messages": [{"role": "system", "content": SYSTEM}, *conversation]}
        if max_tokens:
            body["max_completion_tokens"] = max_tokens
    elif api == "openai-responses":
        body = {"model": model, "instructions": SYSTEM, "input": [dict(m) for m in conversation]}
        if max_tokens:
            body["max_output_tokens"] = max_tokens
    elif api == "anthropic":
        body = {
            "model": model,
            "max_tokens": max_tokens or 1024,
            "system": SYSTEM,
            "messages": [dict(m) for m in conversation],
        }
    else:
        contents = [
            {
                "role": "model" if m["role"] == "assistant" else "user",
                "parts": [{"text": m["content"]}],
            }
            for m in conversation
        ]
        body = {"systemInstruction": {"parts": [{"text": SYSTEM}]}, "contents": contents}
        if max_tokens:
            body["generationConfig"] = {"maxOutputTokens": max_tokens}
    if specs is not None:
        body["tools"] = tools_payload(api, specs)
        if choice is not None:
            key = "toolConfig" if api == "gemini" else "tool_choice"
            body[key] = choice_payload(api, choice)
        if parallel is not None:
            if api in ("openai-chat", "openai-responses"):
                body["parallel_tool_calls"] = parallel
            elif api == "anthropic":
                body.setdefault("tool_choice", {"type": "auto"})[
                    "disable_parallel_tool_use"
                ] = not parallel
    return body


def for_case(
    api: str,
    model: str,
    case: Case,
    contract: Contract,
    choice: str | None = "auto",
    *,
    reverse: bool = False,
    **kw: Any,
) -> dict[str, Any]:
    specs: list[ToolSpec] | None = contract.subset(case.active_tools)
    if reverse and specs is not None:
        specs = specs[::-1]
    if choice is None:
        specs = None
    return build(api, model, case.conversation, specs, choice, **kw)


@dataclass
class Call:
    name: str
    arguments: dict[str, Any] | None
    raw: Any
    call_id: str | None = None


@dataclass
class Read:
    kind: str  # tool_call | text | refusal | invalid
    calls: list[Call] = field(default_factory=list)
    text: str = ""
    finish: Any = None


def _parse(raw: str) -> dict[str, Any] | None:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def read(api: str, body: dict[str, Any]) -> Read:
    """The decision in a 200 body, read the way the adapters' decision tables say."""
    if api == "openai-chat":
        choice = body["choices"][0]
        msg = choice["message"]
        if msg.get("tool_calls"):
            calls = [
                Call(
                    c["function"]["name"],
                    _parse(c["function"]["arguments"]),
                    c["function"]["arguments"],
                    c["id"],
                )
                for c in msg["tool_calls"]
            ]
            return Read("tool_call", calls, finish=choice["finish_reason"])
        if msg.get("refusal"):
            return Read("refusal", text=msg["refusal"], finish=choice["finish_reason"])
        return Read("text", text=msg["content"], finish=choice["finish_reason"])
    if api == "openai-responses":
        items = body["output"]
        calls = [
            Call(i["name"], _parse(i["arguments"]), i["arguments"], i["call_id"])
            for i in items
            if i["type"] == "function_call"
        ]
        if calls:
            return Read("tool_call", calls, finish=body["status"])
        parts = [p for i in items if i["type"] == "message" for p in i["content"]]
        if any(p["type"] == "refusal" for p in parts):
            return Read("refusal", text=parts[0]["refusal"], finish=body["status"])
        return Read("text", text="".join(p["text"] for p in parts), finish=body["status"])
    if api == "anthropic":
        blocks = body["content"]
        calls = [
            Call(b["name"], b["input"], b["input"], b["id"])
            for b in blocks
            if b["type"] == "tool_use"
        ]
        text = "".join(b["text"] for b in blocks if b["type"] == "text")
        if body["stop_reason"] == "refusal":
            return Read("refusal", text=text, finish="refusal")
        if calls:
            return Read("tool_call", calls, finish=body["stop_reason"])
        return Read("text", text=text, finish=body["stop_reason"])
    cand = body["candidates"][0]
    finish = cand.get("finishReason")
    if finish == "SAFETY":
        return Read("refusal", finish=finish)
    if finish == "MALFORMED_FUNCTION_CALL":
        return Read("invalid", finish=finish)
    parts = cand.get("content", {}).get("parts", [])
    calls = [
        Call(p["functionCall"]["name"], p["functionCall"]["args"], p["functionCall"]["args"])
        for p in parts
        if "functionCall" in p
    ]
    if calls:
        return Read("tool_call", calls, finish=finish)
    return Read("text", text="".join(p.get("text", "") for p in parts), finish=finish)


def second(
    api: str, request: dict[str, Any], response: dict[str, Any], results: list[dict[str, Any]]
) -> dict[str, Any]:
    """The second-turn body: the assistant's own message as returned, then one result per call."""
    body = copy.deepcopy(request)
    decision = read(api, response)
    pairs = list(zip(decision.calls, results, strict=True))
    if api == "openai-chat":
        body["messages"].append(response["choices"][0]["message"])
        body["messages"] += [
            {"role": "tool", "tool_call_id": c.call_id, "content": orjson.dumps(r).decode()}
            for c, r in pairs
        ]
        body.pop("tool_choice", None)
    elif api == "openai-responses":
        body["input"] += [i for i in response["output"] if i["type"] == "function_call"]
        body["input"] += [
            {
                "type": "function_call_output",
                "call_id": c.call_id,
                "output": orjson.dumps(r).decode(),
            }
            for c, r in pairs
        ]
        body.pop("tool_choice", None)
    elif api == "anthropic":
        body["messages"].append({"role": "assistant", "content": response["content"]})
        body["messages"].append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": c.call_id,
                        "content": orjson.dumps(r).decode(),
                        **({"is_error": True} if r.get("ok") is False else {}),
                    }
                    for c, r in pairs
                ],
            }
        )
        body.pop("tool_choice", None)
    else:
        body["contents"].append(response["candidates"][0]["content"])
        body["contents"].append(
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": c.name, "response": {"output": r}}}
                    for c, r in pairs
                ],
            }
        )
        body.pop("toolConfig", None)
    return body


def fake_execute(case: Case, call: Call) -> dict[str, Any]:
    """The seed's fake executor, with the case's followup overrides."""
    if case.followup is not None and call.name in case.followup.tool_results:
        return case.followup.tool_results[call.name]
    args = call.arguments or {}
    if call.name == "get_order":
        if args.get("order_id") == "ORD-123456":
            return {"ok": True, "status": "in_transit", "city": "Самара"}
        return {
            "ok": False,
            "error": {
                "code": "ORDER_NOT_FOUND",
                "message": "Заказ с таким идентификатором не найден",
            },
        }
    if call.name == "quote_delivery":
        return {
            "ok": False,
            "error": {"code": "ROUTE_UNAVAILABLE", "message": "Маршрут временно недоступен"},
        }
    if call.name == "cancel_order":
        return {
            "ok": False,
            "error": {
                "code": "ALREADY_SHIPPED",
                "message": "Отмена после передачи перевозчику запрещена",
            },
        }
    return {"ok": False, "error": {"code": "UNKNOWN_TOOL"}}


async def send(
    client: httpx.AsyncClient,
    api: str,
    model: str,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return await client.post(
        path(api, model), json=body, headers=HEADERS[api] if headers is None else headers
    )


async def ask(
    client: httpx.AsyncClient, api: str, model: str, body: dict[str, Any]
) -> tuple[dict[str, Any], Read]:
    """Send, require a 200 labelled as the simulator, and read the decision."""
    resp = await send(client, api, model, body)
    assert resp.status_code == 200, resp.text
    assert resp.headers["x-toolstand-simulator"] == "1"
    data = resp.json()
    return data, read(api, data)


def call_key(name: str, arguments: Any) -> tuple[str, str]:
    return name, orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode()
