"""Chat Completions streaming (``stream: true``, ``stream_options.include_usage``):
``chat.completion.chunk`` events assembled into the ``chat.completion`` body they amount
to (providers.md S2, S6, S7.2).

Per call slot: an entry with a name opens a call, unless it repeats the slot's own id and
name (``name_repeated``); at an index already holding a call with another id, a named
entry opens a new call (``index_reuse``); a new id alone never opens one
(``id_per_delta``); an opener whose id is already another index's call is that call
re-emitted (``index_duplicate``, ignored). ``id``, ``type`` and ``name`` are set once;
arguments are appended exactly as sent, the opener's included (``opener_with_args``),
and judged as received: nothing is de-duplicated. The last non-null ``finish_reason``
and the last usage object win. Complete means ``data: [DONE]``; a finish reason never
seen is flagged ``finish_missing`` and the decision follows the content.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from toolstand.adapters.base import reserialize
from toolstand.adapters.sse import SseDecoder, SseEvent
from toolstand.adapters.stream_base import Assembled, AssemblerBase, inband_error


@dataclass(slots=True)
class _Slot:
    id: str | None
    name: str | None
    type: str | None
    arguments: list[str]


class ChatAssembler(AssemblerBase):
    def __init__(self) -> None:
        super().__init__()
        self.done = False
        self.meta: dict[str, Any] = {}
        self.role = "assistant"
        self.content: list[str] | None = None
        self.refusal: list[str] | None = None
        self.reasoning: list[str] = []
        self.slots: list[_Slot] = []
        self.by_index: dict[int, int] = {}  # wire index -> slot position (-1: ignored)
        self.finish_reason: str | None = None
        self.finishes = 0
        self.usage: Any = None

    def feed(self, event: SseEvent) -> None:
        self.n += 1
        if self.done or self.error is not None:
            return
        data = event.data
        if data.startswith("[DONE]"):
            self.done = True
            return
        try:  # event_json, inline: this runs for each of ~100 events an answer
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            chunk = None
        if type(chunk) is not dict:
            self.flag("malformed_chunk")
            return
        if chunk.get("error"):
            self.error = inband_error(chunk["error"], "error event after the 200")
            return
        if not self.meta:
            self.meta = {k: chunk[k] for k in ("id", "created", "model") if k in chunk}
        obj = chunk.get("object")
        if obj is not None and obj != "chat.completion.chunk":
            return  # Azure's content-filter chunks (object "")
        if chunk.get("usage") is not None:
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if choices is None:
            if "choices" in chunk:
                self.flag("choices_null")
            return
        if not isinstance(choices, list):
            self.flag("malformed_chunk")
            return
        for choice in choices:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._choice(choice)

    def _choice(self, choice: dict[str, Any]) -> None:
        if choice.get("error"):
            self.error = inband_error(choice["error"], "error event after the 200")
            return
        delta = choice.get("delta")
        if delta is None:
            self.flag("choices_null")
        elif type(delta) is dict:
            if len(delta) == 1 and type(delta.get("content")) is str:
                # a text token, nearly every event: _delta's content branch, inline
                value = delta["content"]
                if self.content is None:
                    self.content = []
                self.content.append(value)
                if value and self.first_token is None:
                    self.first_token = self.n
            else:
                self._delta(delta)
        elif isinstance(delta, dict):
            self._delta(delta)
        finish = choice.get("finish_reason")
        if isinstance(finish, str):
            self.finishes += 1
            if self.finishes > 1:
                self.flag("finish_repeated")
            self.finish_reason = finish

    def _delta(self, delta: dict[str, Any]) -> None:
        # by the keys present (one or two in nearly every delta), not by every key known
        for key, value in delta.items():
            if key == "content":
                if isinstance(value, str):
                    if self.content is None:
                        self.content = []
                    self.content.append(value)
                    if value and self.first_token is None:
                        self.first_token = self.n
            elif key == "tool_calls":
                if isinstance(value, list):
                    for entry in value:
                        if isinstance(entry, dict):
                            self._call(entry)
            elif key == "refusal":
                if isinstance(value, str):
                    if self.refusal is None:
                        self.refusal = []
                    self.refusal.append(value)
                    if value:
                        self.token()
            elif key == "role":
                if isinstance(value, str):
                    self.role = value
            elif key in ("reasoning", "reasoning_content") and isinstance(value, str) and value:
                self.reasoning.append(value)
                self.token()

    def _call(self, entry: dict[str, Any]) -> None:
        index = entry.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = len(self.by_index)
            self.flag("index_missing")
        wire_fn = entry.get("function")
        fn: dict[str, Any] = wire_fn if isinstance(wire_fn, dict) else {}
        name = fn.get("name") if isinstance(fn.get("name"), str) and fn.get("name") else None
        ident = entry.get("id") if isinstance(entry.get("id"), str) and entry.get("id") else None
        args = fn.get("arguments")
        pos = self.by_index.get(index)
        if name is not None:
            pos = self._open(index, pos, ident, name, entry, args)
        elif pos is None:
            # fragments before any opener: a call whose name never came
            self.flag("name_missing")
            self.slots.append(_Slot(ident, None, None, []))
            pos = self.by_index[index] = len(self.slots) - 1
        elif ident is not None and pos >= 0 and self.slots[pos].id not in (None, ident):
            self.flag("id_per_delta")
        if pos < 0:
            return  # a re-emitted call (index_duplicate)
        slot = self.slots[pos]
        if slot.id is None and ident is not None:
            slot.id = ident
        if isinstance(args, str):
            slot.arguments.append(args)
            if args:
                self.token()
        elif args is not None:
            self.flag("arguments_object")
            slot.arguments.append(reserialize(args))

    def _open(
        self,
        index: int,
        pos: int | None,
        ident: str | None,
        name: str,
        entry: dict[str, Any],
        args: Any,
    ) -> int:
        """The slot a named entry belongs to, opening a new one when it starts a call."""
        if pos is not None and pos >= 0:
            slot = self.slots[pos]
            same_id = ident is None or slot.id is None or ident == slot.id
            if same_id and (slot.name is None or slot.name == name):
                if slot.name is None:
                    slot.name = name
                else:
                    self.flag("name_repeated")
                return pos
            self.flag("index_reuse")
        elif ident is not None and any(s.id == ident for s in self.slots):
            self.flag("index_duplicate")
            self.by_index[index] = -1
            return -1
        if ident is None:
            self.flag("id_missing")
        if isinstance(args, str) and args:
            self.flag("opener_with_args")
        kind = entry.get("type") if isinstance(entry.get("type"), str) else "function"
        self.slots.append(_Slot(ident, name, kind, []))
        self.by_index[index] = len(self.slots) - 1
        self.call()
        return len(self.slots) - 1

    def finish(self, decoder: SseDecoder) -> Assembled:
        if self.finish_reason is None and self.done:
            self.flag("finish_missing")
        message: dict[str, Any] = {
            "role": self.role,
            "content": "".join(self.content) if self.content is not None else None,
        }
        if self.refusal is not None:
            message["refusal"] = "".join(self.refusal)
        if self.reasoning:
            message["reasoning"] = "".join(self.reasoning)
        if self.slots:
            message["tool_calls"] = [_wire(s) for s in self.slots]
        body: dict[str, Any] = {
            **self.meta,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        }
        if self.usage is not None:
            body["usage"] = self.usage
        return self.outcome(body, self.done)


def _wire(slot: _Slot) -> dict[str, Any]:
    call: dict[str, Any] = {}
    if slot.id is not None:
        call["id"] = slot.id
    call["type"] = slot.type or "function"
    fn: dict[str, Any] = {"arguments": "".join(slot.arguments)}
    if slot.name is not None:
        fn = {"name": slot.name, **fn}
    call["function"] = fn
    return call
