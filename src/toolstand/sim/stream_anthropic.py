"""Anthropic Messages ``stream: true`` (providers.md S4), built from the unstreamed message.

Every event has an ``event:`` line equal to its ``type``. Order: ``message_start`` (the
message with ``content: []``, ``stop_reason: null`` and a provisional ``output_tokens: 1``);
per content block, in order and never overlapping, ``content_block_start`` (a ``text``
block with ``text: ""``; a ``tool_use`` block with its ``id``, ``name``, ``caller`` and the
placeholder ``input: {}``), a ``ping`` after the first block's start, then
``content_block_delta`` events (``text_delta`` fragments; for a tool, a first
``input_json_delta`` with ``partial_json: ""`` and then the fragments of the input's
JSON text) and ``content_block_stop``; then ``message_delta`` (``stop_reason``,
``stop_sequence``, ``stop_details`` and the cumulative usage) and ``message_stop``.

A call cut by ``max_tokens`` streams its cut JSON text and has no ``content_block_stop``,
as in the recorded fixture (S4.6).
"""

from __future__ import annotations

from typing import Any

import orjson

from toolstand.sim.stream import Splitter, Sse
from toolstand.sim.stream_faults import text_fragments
from toolstand.sim.turn import Answer

OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def anthropic_events(
    body: dict[str, Any], answer: Answer, splitter: Splitter, faults: frozenset[str]
) -> list[Sse]:
    usage = body["usage"]
    start = {**body, "content": [], "stop_reason": None, "stop_sequence": None}
    start["stop_details"] = None
    start["usage"] = {**usage, "output_tokens": 1}
    events = [Sse({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(body["content"]):
        events += _block(index, block, answer, splitter, faults)
    if "error_inband" in faults:
        return [*events[: max(1, len(events) // 2)], Sse(OVERLOADED, "error")]
    delta = {k: body[k] for k in ("stop_reason", "stop_sequence", "stop_details")}
    final = {k: v for k, v in usage.items() if k not in ("service_tier", "cache_creation")}
    events.append(Sse({"type": "message_delta", "delta": delta, "usage": final}, "message_delta"))
    if "no_terminal" not in faults:
        events.append(Sse({"type": "message_stop"}, "message_stop"))
    return events


def _block(
    index: int, block: dict[str, Any], answer: Answer, splitter: Splitter, faults: frozenset[str]
) -> list[Sse]:
    def delta(d: dict[str, Any]) -> Sse:
        return Sse(
            {"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta"
        )

    opened = {**block, "text": ""} if block["type"] == "text" else {**block, "input": {}}
    out = [
        Sse(
            {"type": "content_block_start", "index": index, "content_block": opened},
            "content_block_start",
        )
    ]
    if index == 0:
        out.append(Sse({"type": "ping"}, "ping"))
    closed = True
    if block["type"] == "text":
        out += [delta({"type": "text_delta", "text": f}) for f in splitter.split(block["text"])]
    else:
        call = answer.calls[index] if index < len(answer.calls) else None
        cut = answer.truncated and call is not None and call.raw is not None and call.raw != ""
        whole = call.raw if cut and call is not None and call.raw else _json(block["input"])
        closed = not cut
        if not (whole == "" and "args_empty_zero_param" in faults):
            fragments = [] if whole == "" else splitter.split(whole, escapes=True)
            fragments, _ = text_fragments(fragments, whole, faults) if fragments else ([], whole)
            out += [
                delta({"type": "input_json_delta", "partial_json": f}) for f in ["", *fragments]
            ]
    if closed:
        out.append(Sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return out


def _json(value: Any) -> str:
    return "" if value == {} else orjson.dumps(value).decode()
