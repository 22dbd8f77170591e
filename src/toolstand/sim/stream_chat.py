"""Chat Completions ``stream: true`` (providers.md S2), built from the unstreamed body.

Shape (the 2026 recordings): every chunk is a ``chat.completion.chunk`` with the body's
``id``, ``created``, ``model``, ``service_tier`` and ``system_fingerprint``; the first
chunk's delta has ``role: "assistant"`` (with ``content: ""`` for text, ``null`` for calls and
refusals, ``refusal: ""`` for a refusal) and, for calls, the first call's opener; each call
opens with ``index``, ``id``, ``type`` and the whole ``function.name`` with ``arguments: ""``,
then continuations carry only ``index`` and an ``arguments`` fragment; calls follow one
another by index, never interleaved. Then a chunk with ``delta: {}`` and the
``finish_reason``; with ``stream_options.include_usage`` every chunk has ``usage: null`` and a
last chunk has ``choices: []`` and the usage; then ``data: [DONE]``.
"""

from __future__ import annotations

from typing import Any

from toolstand.sim.stream import Splitter, Sse
from toolstand.sim.stream_faults import text_fragments

INBAND_ERROR = {
    "error": {
        "message": "The server had an error while processing your request (toolstand simulator).",
        "type": "server_error",
        "param": None,
        "code": None,
    }
}


def chat_events(
    body: dict[str, Any], splitter: Splitter, faults: frozenset[str], include_usage: bool
) -> list[Sse]:
    choice = body["choices"][0]
    message = choice["message"]
    finish = choice["finish_reason"]
    base = {
        "id": body["id"],
        "object": "chat.completion.chunk",
        "created": body["created"],
        "model": body["model"],
        "service_tier": body.get("service_tier"),
        "system_fingerprint": body.get("system_fingerprint"),
    }
    calls = message.get("tool_calls") or []
    deltas = _call_deltas(calls, splitter, faults) if calls else _text_deltas(message, splitter)
    if "finish_missing" in faults and not calls:
        for delta in deltas:
            delta["tool_calls"] = []  # vLLM 19650: an empty list on every content delta
    if "finish_wrong" in faults:
        finish = "stop" if calls else "tool_calls"

    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        c: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None}
        if "finish_missing" not in faults:
            c["finish_reason"] = reason
        out = {**base, "choices": [c]}
        if include_usage:
            out["usage"] = None
        return out

    chunks = [chunk(d) for d in deltas]
    if "choices_null" in faults:
        chunks.insert(1, {**base, "choices": None})
    if "finish_with_delta" in faults:
        chunks[-1]["choices"][0]["finish_reason"] = finish
    elif "finish_missing" not in faults:
        chunks.append(chunk({}, finish))
        if "finish_repeated" in faults:  # SGLang PR8417: again, then a chunk with null
            chunks += [chunk({}, finish), chunk({}, None)]
    usage = body["usage"]
    if "usage_elsewhere" in faults:  # Groq: on the finish chunk, no usage chunk
        chunks[-1]["usage"] = usage
    elif include_usage:
        chunks.append({**base, "choices": [], "usage": usage})
    events = [Sse(c) for c in chunks]
    if "error_inband" in faults:
        return [*events[: max(1, len(deltas) // 2)], Sse(INBAND_ERROR)]  # then EOF (Groq)
    if "no_terminal" not in faults:
        events.append(Sse("[DONE]"))
    return events


def _text_deltas(message: dict[str, Any], splitter: Splitter) -> list[dict[str, Any]]:
    if message.get("refusal") is not None:
        first: dict[str, Any] = {"role": "assistant", "content": None, "refusal": ""}
        return [first, *({"refusal": f} for f in splitter.split(message["refusal"]))]
    first = {"role": "assistant", "content": "", "refusal": None}
    return [first, *({"content": f} for f in splitter.split(message.get("content") or ""))]


def _call_deltas(
    calls: list[dict[str, Any]], splitter: Splitter, faults: frozenset[str]
) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for i, call in enumerate(calls):
        fn = call["function"]
        whole = fn["arguments"]
        fragments, _ = text_fragments(splitter.split(whole, escapes=True), whole, faults)
        index = 0 if "index_reuse" in faults else i
        opener: dict[str, Any] = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": fn["name"], "arguments": ""},
        }
        if "id_missing" in faults:
            del opener["id"]
        if "opener_with_args" in faults and fragments:
            opener["function"]["arguments"], fragments = fragments[0], fragments[1:]
        entries.append(opener)
        for j, fragment in enumerate(fragments):
            entry: dict[str, Any] = {"index": index, "function": {"arguments": fragment}}
            if "name_repeated" in faults:
                entry = {**opener, "function": {"name": fn["name"], "arguments": fragment}}
            elif "id_per_delta" in faults:
                entry = {"index": index, "id": f"{call['id']}_{j + 1}", **entry}
            entries.append(entry)
        if "index_duplicate" in faults:  # LocalAI 9722: the whole call again at a new index
            entries.append({**opener, "index": len(calls) + i, "function": dict(fn)})
    deltas: list[dict[str, Any]] = [{"tool_calls": [e]} for e in entries]
    deltas[0] = {"role": "assistant", "content": None, **deltas[0], "refusal": None}
    return deltas
