"""Anthropic Messages streaming (``stream: true``): events assembled into the ``message``
they amount to (providers.md S4, S7.4).

From ``message_start``'s message; blocks by ``index``, each from its
``content_block_start``: text deltas appended, thinking appended, a signature replaced,
citations appended; a ``tool_use`` block's ``partial_json`` fragments are joined and
parsed once, at its ``content_block_stop``: an empty buffer is ``{}`` (S4.3), a buffer
that parses to an object is the input, anything else is kept as the raw text, which the
adapter judges ``invalid_json``. A tool block never closed keeps its raw text too and is
flagged ``block_unclosed`` (with ``stop_reason: max_tokens`` it is the truncated case).
``message_delta`` sets the stop fields and replaces the usage fields it carries.
Complete means ``message_stop``; ``ping`` is a keep-alive; unknown events are skipped;
an ``error`` event ends the attempt as the error its ``error.type`` names.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from toolstand.adapters.sse import SseDecoder, SseEvent
from toolstand.adapters.stream_base import Assembled, AssemblerBase, event_json, inband_error

_TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


class AnthropicAssembler(AssemblerBase):
    def __init__(self) -> None:
        super().__init__()
        self.message: dict[str, Any] | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.buffers: dict[int, list[str]] = {}
        self.closed: set[int] = set()
        self.stopped = False

    def feed(self, event: SseEvent) -> None:
        self.n += 1
        if self.stopped or self.error is not None:
            return
        data = event_json(event.data)
        if not isinstance(data, dict):
            self.flag("malformed_chunk")
            return
        kind = data.get("type") if isinstance(data.get("type"), str) else event.event
        if kind == "error" or isinstance(data.get("error"), dict):
            self.error = inband_error(data.get("error"), "error event after the 200")
            return
        index = data.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else -1
        if kind == "message_start" and isinstance(data.get("message"), dict):
            self.message = copy.deepcopy(data["message"])
        elif kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            block = copy.deepcopy(data["content_block"])
            self.blocks[index] = block
            if block.get("type") in _TOOL_BLOCKS:
                self.buffers[index] = []
                if block.get("type") == "tool_use":
                    self.call()
        elif kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            self._delta(index, data["delta"])
        elif kind == "content_block_stop":
            self.closed.add(index)
        elif kind == "message_delta":
            self._message_delta(data)
        elif kind == "message_stop":
            self.stopped = True

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self.blocks.get(index)
        if block is None:
            self.flag("delta_without_block")
            return
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            block["text"] = _str(block.get("text")) + delta["text"]
            self.token()
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            self.buffers.setdefault(index, []).append(delta["partial_json"])
            if delta["partial_json"]:
                self.token()
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            block["thinking"] = _str(block.get("thinking")) + delta["thinking"]
            self.token()
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            block["signature"] = delta["signature"]
        elif kind == "citations_delta" and "citation" in delta:
            block.setdefault("citations", []).append(delta["citation"])

    def _message_delta(self, data: dict[str, Any]) -> None:
        if self.message is None:
            self.message = {"type": "message", "role": "assistant", "content": []}
        delta = data.get("delta")
        if isinstance(delta, dict):
            for key in ("stop_reason", "stop_sequence", "stop_details", "container"):
                if key in delta:
                    self.message[key] = delta[key]
        usage = data.get("usage")
        if isinstance(usage, dict):
            was = self.message.get("usage")
            self.message["usage"] = {**(was if isinstance(was, dict) else {}), **usage}

    def finish(self, decoder: SseDecoder) -> Assembled:
        message = self.message if self.message is not None else {}
        content = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if index in self.buffers:
                block["input"] = self._input(index)
            content.append(block)
        body = {**message, "content": content} if self.message is not None or content else None
        return self.outcome(body, self.stopped)

    def _input(self, index: int) -> Any:
        text = "".join(self.buffers[index])
        if index not in self.closed:
            self.flag("block_unclosed")
            return text
        if text == "":
            return {}
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
        return value if isinstance(value, dict) else text


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
