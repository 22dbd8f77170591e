"""Responses ``stream: true`` (providers.md S3), built from the unstreamed ``Response``.

Every event has an ``event:`` line equal to its ``type`` and a ``sequence_number`` from 0
with no gaps. Order: ``response.created`` and ``response.in_progress`` (the response with
``status: "in_progress"``, ``output: []``, ``usage: null``); then per output item, closed
before the next opens: ``response.output_item.added`` (a function call with
``arguments: ""`` and ``status: "in_progress"``; a message with ``content: []``), for a call
``response.function_call_arguments.delta`` events (``item_id``, ``output_index``, ``delta``)
and ``response.function_call_arguments.done`` (``item_id``, ``output_index``, ``arguments``,
no ``name``, as recorded), for a message per part ``response.content_part.added``,
``response.output_text.delta`` / ``response.refusal.delta`` events, their ``.done`` with the
whole text and ``response.content_part.done``; then ``response.output_item.done`` with the
final item. Last, ``response.completed`` (``response.incomplete`` for a cut answer) carries
the whole unstreamed ``Response``. No ``data: [DONE]``.
"""

from __future__ import annotations

from typing import Any

from toolstand.sim.stream import Splitter, Sse
from toolstand.sim.stream_faults import text_fragments

INBAND_ERROR = {
    "type": "server_error",
    "code": "server_error",
    "message": "The server had an error while processing your request (toolstand simulator).",
    "param": None,
}


def responses_events(body: dict[str, Any], splitter: Splitter, faults: frozenset[str]) -> list[Sse]:
    shell = {**body, "status": "in_progress", "output": [], "usage": None}
    shell["incomplete_details"] = None
    raw: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": shell}),
        ("response.in_progress", {"response": shell}),
    ]
    for index, item in enumerate(body["output"]):
        if item["type"] == "function_call":
            raw += _call(index, item, splitter, faults)
        else:
            raw += _message(index, item, splitter)
    terminal = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    if "error_inband" in faults:
        failed = {**body, "status": "failed", "output": [], "usage": None}
        failed["error"] = {"code": INBAND_ERROR["code"], "message": INBAND_ERROR["message"]}
        raw = raw[: max(2, len(raw) // 2)]
        raw += [("error", {"error": INBAND_ERROR}), ("response.failed", {"response": failed})]
    elif "no_terminal" not in faults:
        raw.append((terminal, {"response": body}))
    events = [
        Sse({"type": name, **fields, "sequence_number": n}, name)
        for n, (name, fields) in enumerate(raw)
    ]
    if "done_extra" in faults:  # OpenRouter's Responses endpoint
        events.append(Sse("[DONE]"))
    return events


def _call(
    index: int, item: dict[str, Any], splitter: Splitter, faults: frozenset[str]
) -> list[tuple[str, dict[str, Any]]]:
    whole = item["arguments"]
    fragments, done = text_fragments(splitter.split(whole, escapes=True), whole, faults)
    added = {**item, "status": "in_progress", "arguments": ""}
    where = {"item_id": item["id"], "output_index": index}
    out: list[tuple[str, dict[str, Any]]] = [
        ("response.output_item.added", {"item": added, "output_index": index})
    ]
    out += [("response.function_call_arguments.delta", {"delta": f, **where}) for f in fragments]
    out.append(("response.function_call_arguments.done", {"arguments": done, **where}))
    out.append(("response.output_item.done", {"item": item, "output_index": index}))
    return out


def _message(
    index: int, item: dict[str, Any], splitter: Splitter
) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [
        (
            "response.output_item.added",
            {"item": {**item, "status": "in_progress", "content": []}, "output_index": index},
        )
    ]
    for ci, part in enumerate(item["content"]):
        where = {"item_id": item["id"], "output_index": index, "content_index": ci}
        extra: dict[str, Any] = {}
        if part["type"] == "refusal":
            kind, key = "response.refusal", "refusal"
        else:
            kind, key, extra = "response.output_text", "text", {"logprobs": []}
        text = part[key]
        out.append(("response.content_part.added", {**where, "part": {**part, key: ""}}))
        out += [(f"{kind}.delta", {**where, "delta": f, **extra}) for f in splitter.split(text)]
        out.append((f"{kind}.done", {**where, key: text, **extra}))
        out.append(("response.content_part.done", {**where, "part": part}))
    out.append(("response.output_item.done", {"item": item, "output_index": index}))
    return out
