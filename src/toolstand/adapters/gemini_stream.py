"""Gemini streaming (``:streamGenerateContent?alt=sse``): each event is a whole
``GenerateContentResponse`` slice; assembled into the one response they amount to
(providers.md S5, S7.5).

The parts of ``candidates[0].content`` are concatenated over all chunks in arrival order
(the original parts, signatures kept, for the next turn; an empty text part is dropped
unless it carries a signature); ``finishReason``, ``finishMessage`` and
``safetyRatings`` come from the last chunk that has them, ``usageMetadata`` from the last
chunk. There is no sentinel: complete means a ``finishReason`` (or a blocked prompt) was
seen and the body ended cleanly. An ``error`` object, as a ``data:`` chunk or as a bare
JSON tail after the last event, ends the attempt as that error.
"""

from __future__ import annotations

from typing import Any

import orjson

from toolstand.adapters.sse import SseDecoder, SseEvent
from toolstand.adapters.stream_base import Assembled, AssemblerBase, event_json, inband_error

_LAST_WINS = ("finishReason", "finishMessage", "safetyRatings", "citationMetadata")


class GeminiAssembler(AssemblerBase):
    def __init__(self) -> None:
        super().__init__()
        self.meta: dict[str, Any] = {}
        self.candidate: dict[str, Any] = {}
        self.role: Any = "model"
        self.parts: list[dict[str, Any]] = []
        self.seen = False

    def feed(self, event: SseEvent) -> None:
        self.n += 1
        if self.error is not None:
            return
        chunk = event_json(event.data)
        if not isinstance(chunk, dict):
            self.flag("malformed_chunk")
            return
        if chunk.get("error"):
            self.error = inband_error(chunk["error"], "error chunk after the 200")
            return
        self.seen = True
        for key, value in chunk.items():
            if key != "candidates":
                self.meta[key] = value
        candidates = chunk.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            return
        first = candidates[0]
        if not isinstance(first, dict):
            return
        for key in _LAST_WINS:
            if key in first:
                self.candidate[key] = first[key]
        if "index" in first:
            self.candidate["index"] = first["index"]
        content = first.get("content")
        if not isinstance(content, dict):
            return
        self.role = content.get("role", self.role)
        parts = content.get("parts")
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("text") == "" and len(part) == 1:
                continue  # the stream's closing empty text part
            if "functionCall" in part:
                self.call()
            elif isinstance(part.get("text"), str) and part["text"]:
                self.token()
            self.parts.append(part)

    def finish(self, decoder: SseDecoder) -> Assembled:
        tail = _tail_error(decoder.stray)
        if tail is not None and self.error is None:
            self.error = inband_error(tail, "error after the last event")
        if not self.seen:
            return self.outcome(None, False)
        body = dict(self.meta)
        blocked = isinstance(body.get("promptFeedback"), dict) and bool(
            body["promptFeedback"].get("blockReason")
        )
        if self.parts or self.candidate:
            candidate = {"content": {"parts": self.parts, "role": self.role}, **self.candidate}
            body = {"candidates": [candidate], **body}
        complete = "finishReason" in self.candidate or blocked
        return self.outcome(body, complete)


def _tail_error(stray: list[str]) -> Any:
    """The ``error`` object of a bare JSON tail (lines that were no SSE field), if any."""
    if not stray:
        return None
    try:
        value = orjson.loads("\n".join(stray))
    except orjson.JSONDecodeError:
        return None
    return value.get("error") if isinstance(value, dict) and value.get("error") else None
