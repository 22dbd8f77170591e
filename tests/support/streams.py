"""Streams written from providers.md section S: a non-streamed body of each API turned
into the event stream that API sends for it, with fragment boundaries chosen by the
test; and helpers to read a stream back as a decision."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from typing import Any

from toolstand.adapters import get_adapter
from toolstand.adapters.sse import SseDecoder
from toolstand.adapters.streaming import StreamReading, assembler, read_assembled, stream_decision
from toolstand.decision import ModelDecision


def pieces(text: str, sizes: Iterable[int]) -> list[str]:
    """``text`` cut into fragments of the given sizes (cycled; at least one fragment)."""
    sizes = [max(1, s) for s in sizes] or [len(text) or 1]
    out, i, k = [], 0, 0
    while i < len(text):
        n = sizes[k % len(sizes)]
        out.append(text[i : i + n])
        i, k = i + n, k + 1
    return out or [""]


def sse(data: Any, event: str | None = None, crlf: bool = False) -> str:
    end = "\r\n" if crlf else "\n"
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}{end}" if event else ""
    return f"{head}data: {text}{end}{end}"


# --- Chat Completions (S2) -----------------------------------------------------------


def chat_chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> str:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return sse({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                "model": "m", "choices": [choice], **extra})  # fmt: skip


def chat_stream(body: dict[str, Any], sizes: Iterable[int] = (3,), done: bool = True) -> str:
    sizes = list(sizes)
    choice = body["choices"][0]
    msg = choice["message"]
    out = [chat_chunk({"role": "assistant", "content": None if msg.get("tool_calls") else ""})]
    for key in ("content", "refusal"):
        if isinstance(msg.get(key), str):
            out += [chat_chunk({key: p}) for p in pieces(msg[key], sizes)]
    for i, call in enumerate(msg.get("tool_calls") or []):
        opener = {"index": i, "id": call["id"], "type": "function",
                  "function": {"name": call["function"]["name"], "arguments": ""}}  # fmt: skip
        out.append(chat_chunk({"tool_calls": [opener]}))
        for p in pieces(call["function"]["arguments"], sizes):
            out.append(chat_chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}))
    out.append(chat_chunk({}, choice["finish_reason"]))
    if "usage" in body:
        out.append(sse({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
                        "usage": body["usage"]}))  # fmt: skip
    if done:
        out.append(sse("[DONE]"))
    return "".join(out)


# --- Responses (S3) ------------------------------------------------------------------


def responses_stream(body: dict[str, Any], sizes: Iterable[int] = (3,)) -> str:
    sizes = list(sizes)
    seq = iter(range(10_000))
    out: list[str] = []

    def ev(kind: str, **fields: Any) -> None:
        out.append(sse({"type": kind, **fields, "sequence_number": next(seq)}, kind))

    started = {**body, "status": "in_progress", "output": [], "usage": None}
    ev("response.created", response=started)
    ev("response.in_progress", response=started)
    for oi, item in enumerate(body["output"]):
        if item["type"] == "function_call":
            ev("response.output_item.added", output_index=oi,
               item={**item, "arguments": "", "status": "in_progress"})  # fmt: skip
            for p in pieces(item["arguments"], sizes):
                ev("response.function_call_arguments.delta", item_id=item["id"],
                   output_index=oi, delta=p)  # fmt: skip
            ev("response.function_call_arguments.done", item_id=item["id"], output_index=oi,
               arguments=item["arguments"])  # fmt: skip
        elif item["type"] == "message":
            ev("response.output_item.added", output_index=oi,
               item={**item, "content": [], "status": "in_progress"})  # fmt: skip
            for ci, part in enumerate(item["content"]):
                kind = "output_text" if part["type"] == "output_text" else "refusal"
                field = "text" if kind == "output_text" else "refusal"
                for p in pieces(part[field], sizes):
                    ev(f"response.{kind}.delta", item_id=item["id"], output_index=oi,
                       content_index=ci, delta=p)  # fmt: skip
                ev(f"response.{kind}.done", item_id=item["id"], output_index=oi,
                   content_index=ci, **{field: part[field]})  # fmt: skip
        else:
            ev("response.output_item.added", output_index=oi, item=item)
        ev("response.output_item.done", output_index=oi, item=item)
    terminal = "response.incomplete" if body.get("status") == "incomplete" else "response.completed"
    ev(terminal, response=body)
    return "".join(out)


# --- Anthropic Messages (S4) ---------------------------------------------------------


def anthropic_stream(body: dict[str, Any], sizes: Iterable[int] = (3,), ping: bool = True) -> str:
    sizes = list(sizes)
    out: list[str] = []

    def ev(kind: str, **fields: Any) -> None:
        out.append(sse({"type": kind, **fields}, kind))

    start = {k: v for k, v in body.items() if k not in ("content", "stop_reason")}
    ev("message_start", message={**start, "content": [], "stop_reason": None})
    if ping:
        out.append(sse('{"type": "ping"}', "ping"))
    for i, block in enumerate(body["content"]):
        if block["type"] == "text":
            ev("content_block_start", index=i, content_block={"type": "text", "text": ""})
            for p in pieces(block["text"], sizes):
                ev("content_block_delta", index=i, delta={"type": "text_delta", "text": p})
        elif block["type"] == "tool_use":
            ev("content_block_start", index=i, content_block={**block, "input": {}})
            ev(
                "content_block_delta",
                index=i,
                delta={"type": "input_json_delta", "partial_json": ""},
            )
            text = json.dumps(block["input"], ensure_ascii=False) if block["input"] else ""
            for p in pieces(text, sizes) if text else []:
                ev("content_block_delta", index=i,
                   delta={"type": "input_json_delta", "partial_json": p})  # fmt: skip
        else:
            ev("content_block_start", index=i, content_block=block)
        ev("content_block_stop", index=i)
    ev("message_delta", delta={"stop_reason": body["stop_reason"], "stop_sequence": None},
       usage=body.get("usage", {}))  # fmt: skip
    ev("message_stop")
    return "".join(out)


# --- Gemini (S5) ---------------------------------------------------------------------


def gemini_stream(body: dict[str, Any], sizes: Iterable[int] = (3,)) -> str:
    sizes = list(sizes)
    cand = body["candidates"][0]
    meta = {k: v for k, v in body.items() if k != "candidates"}
    out = []
    for part in (cand.get("content") or {}).get("parts") or []:
        split: list[dict[str, Any]]
        if "text" in part and len(part) == 1:
            split = [{"text": p} for p in pieces(part["text"], sizes)]
        elif "text" in part and part.get("thought") is True and len(part) == 2:
            split = [{"text": p, "thought": True} for p in pieces(part["text"], sizes)]
        else:
            split = [part]
        for p in split:
            chunk = {
                "candidates": [{"content": {"parts": [p], "role": "model"}, "index": 0}],
                **meta,
            }
            out.append(sse(chunk, crlf=True))
    last = {"content": {"parts": [{"text": ""}], "role": "model"}, "index": 0,
            **{k: v for k, v in cand.items() if k not in ("content", "index")}}  # fmt: skip
    out.append(sse({"candidates": [last], **meta}, crlf=True))
    return "".join(out)


STREAMERS = {
    "openai-chat": chat_stream,
    "openai-responses": responses_stream,
    "anthropic": anthropic_stream,
    "gemini": gemini_stream,
}


def split_bytes(raw: bytes, cuts: Iterable[int]) -> Iterator[bytes]:
    last = 0
    for cut in sorted(set(c for c in cuts if 0 < c < len(raw))):
        yield raw[last:cut]
        last = cut
    yield raw[last:]


def read(api: str, chunks: Iterable[bytes], status: int = 200) -> StreamReading:
    """A stream fed in these chunks, read as the transport reads it."""
    decoder = SseDecoder()
    asm = assembler(api)
    for chunk in chunks:
        for event in decoder.feed(chunk):
            asm.feed(event)
    decoder.close()
    return read_assembled(api, get_adapter(api), status, {}, asm.finish(decoder))


def decide(
    api: str, raw: str | bytes, cuts: Iterable[int] = ()
) -> tuple[StreamReading, ModelDecision | None]:
    data = raw.encode() if isinstance(raw, str) else raw
    reading = read(api, split_bytes(data, cuts))
    if reading.error is not None:
        return reading, None
    return reading, stream_decision(get_adapter(api), reading)


Handler = Callable[[asyncio.StreamWriter, bytes], Awaitable[None]]


@asynccontextmanager
async def server(answer: Handler) -> AsyncIterator[str]:
    """A one-request-per-connection HTTP server on 127.0.0.1, port 0; ``answer`` writes
    the whole response for the request body it is given."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (int(line.split(b":")[1]) for line in head.split(b"\r\n")
                 if line.lower().startswith(b"content-length:")), 0)  # fmt: skip
            body = await reader.readexactly(length)
            await answer(writer, body)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        srv.close()
