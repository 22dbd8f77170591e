"""A reading of the four APIs' streams written from providers.md section S, apart from the
adapters: an SSE parser (S1's rules) and per-API assemblers that rebuild the unstreamed
body's shape, so simwire.read can judge a streamed answer like an unstreamed one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from tests.support.simwire import HEADERS, path


@dataclass
class Event:
    name: str | None
    data: str

    @property
    def json(self) -> Any:
        return orjson.loads(self.data)


def parse_sse(blob: bytes) -> tuple[list[Event], list[str]]:
    """Events and comment lines of an SSE body (CRLF, LF or CR line ends; a partial last
    event is dropped)."""
    text = blob.decode("utf-8")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    events: list[Event] = []
    comments: list[str] = []
    name: str | None = None
    data: list[str] = []
    for line in lines[:-1]:  # the last piece has no line end: not a complete line
        if line == "":
            if data:
                events.append(Event(name, "\n".join(data)))
            name, data = None, []
            continue
        if line.startswith(":"):
            comments.append(line[1:].strip())
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
    return events, comments


def stream_body(api: str, body: dict[str, Any], *, usage: bool = True) -> dict[str, Any]:
    """The streamed twin of an unstreamed request body."""
    if api == "gemini":
        return body
    out = {**body, "stream": True}
    if api == "openai-chat" and usage:
        out["stream_options"] = {"include_usage": True}
    return out


def stream_path(api: str, model: str) -> str:
    if api == "gemini":
        return f"/v1beta/models/{model}:streamGenerateContent?alt=sse"
    return path(api, model)


async def send_stream(
    client: httpx.AsyncClient, api: str, model: str, body: dict[str, Any], **kw: Any
) -> tuple[httpx.Response, list[bytes]]:
    """POST the streamed twin; the response and its body as the socket's chunks arrived."""
    request = client.build_request(
        "POST", stream_path(api, model), json=stream_body(api, body, **kw), headers=HEADERS[api]
    )
    resp = await client.send(request, stream=True)
    pieces = [piece async for piece in resp.aiter_raw()]
    await resp.aclose()
    return resp, pieces


async def streamed(
    client: httpx.AsyncClient, api: str, model: str, body: dict[str, Any], **kw: Any
) -> tuple[httpx.Response, list[bytes], list[Event]]:
    """send_stream that requires a 200 SSE stream labelled as the simulator's; also its events."""
    resp, pieces = await send_stream(client, api, model, body, **kw)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/event-stream")
    assert resp.headers["x-toolstand-simulator"] == "1"
    events, _ = parse_sse(b"".join(pieces))
    return resp, pieces, events


def assemble(api: str, events: list[Event]) -> dict[str, Any]:
    """The unstreamed body the events add up to (the reassembly rules of S2.8-S5.8)."""
    return {
        "openai-chat": _chat,
        "openai-responses": _responses_from_deltas,
        "anthropic": _anthropic,
        "gemini": _gemini,
    }[api](events)


def _chat(events: list[Event]) -> dict[str, Any]:
    content: str | None = None
    refusal: str | None = None
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    usage = None
    for event in events:
        if event.data == "[DONE]":
            continue
        chunk = event.json
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content") is not None:
                content = (content or "") + delta["content"]
            if delta.get("refusal") is not None:
                refusal = (refusal or "") + delta["refusal"]
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    tc["index"],
                    {"id": None, "type": "function", "function": {"name": None, "arguments": ""}},
                )
                slot["id"] = slot["id"] or tc.get("id")
                fn = tc.get("function") or {}
                slot["function"]["name"] = slot["function"]["name"] or fn.get("name")
                slot["function"]["arguments"] += fn.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    message: dict[str, Any] = {"role": "assistant", "content": content or None, "refusal": refusal}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}


def _responses_from_deltas(events: list[Event]) -> dict[str, Any]:
    items: dict[int, dict[str, Any]] = {}
    status = None
    for event in events:
        e = event.json
        kind = e["type"]
        if kind == "response.output_item.added":
            item = dict(e["item"])
            if item["type"] == "message":
                item["content"] = []
            items[e["output_index"]] = item
        elif kind == "response.function_call_arguments.delta":
            items[e["output_index"]]["arguments"] += e["delta"]
        elif kind == "response.content_part.added":
            items[e["output_index"]]["content"].append(dict(e["part"]))
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            part = items[e["output_index"]]["content"][e["content_index"]]
            key = "text" if kind == "response.output_text.delta" else "refusal"
            part[key] += e["delta"]
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            status = e["response"]["status"]
    return {"output": [items[i] for i in sorted(items)], "status": status}


def terminal_response(events: list[Event]) -> dict[str, Any]:
    """The whole Response that the Responses stream's terminal event carries."""
    last = events[-1].json
    assert last["type"] in ("response.completed", "response.incomplete"), last["type"]
    response: dict[str, Any] = last["response"]
    return response


def _anthropic(events: list[Event]) -> dict[str, Any]:
    message: dict[str, Any] = {}
    buffers: dict[int, str] = {}
    for event in events:
        e = event.json
        kind = e["type"]
        if kind == "message_start":
            message = {**e["message"], "content": []}
        elif kind == "content_block_start":
            message["content"].append(dict(e["content_block"]))
            buffers[e["index"]] = ""
        elif kind == "content_block_delta":
            block, delta = message["content"][e["index"]], e["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "input_json_delta":
                buffers[e["index"]] += delta["partial_json"]
        elif kind == "content_block_stop":
            block = message["content"][e["index"]]
            if block["type"] == "tool_use":
                raw = buffers[e["index"]]
                block["input"] = orjson.loads(raw) if raw else {}
        elif kind == "message_delta":
            message.update(e["delta"])
            message["usage"] = {**message["usage"], **e["usage"]}
    return message


def _gemini(events: list[Event]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    last: dict[str, Any] = {}
    candidate: dict[str, Any] = {}
    for event in events:
        chunk = event.json
        last = chunk
        cand = chunk["candidates"][0]
        for part in (cand.get("content") or {}).get("parts") or []:
            if "text" in part and parts and "text" in parts[-1]:
                parts[-1] = {**parts[-1], "text": parts[-1]["text"] + part["text"]}
            else:
                parts.append(dict(part))
        candidate.update({k: v for k, v in cand.items() if k != "content"})
    parts = [p for p in parts if p.get("text") != ""]
    if parts:
        candidate["content"] = {"role": "model", "parts": parts}
    return {**last, "candidates": [candidate]}
