"""Responses API streaming (``stream: true``): typed events assembled into the
``response`` object (providers.md S3, S7.3).

The body is the terminal event's ``response`` (``response.completed``, ``.incomplete``
or ``.failed``), exactly what a non-streamed call returns; it is then checked against
what the deltas assembled: per function call, the concatenated argument deltas against
``function_call_arguments.done``, ``output_item.done`` and the terminal ``output``, its
name and call id, the number of calls, and per text part the deltas against
``output_text.done`` and the terminal text. Each difference is a mismatch with both
readings (judged ``stream_mismatch``). Reasoning items are not compared (their
``encrypted_content`` differs in every copy, S3.7). Items are keyed by
``output_index``, never by "the current item". Without a terminal ``output`` list the
body is rebuilt from the items the events gave. ``[DONE]`` is ignored
(``done_extra``); an ``error`` event, flat or nested, ends the attempt.
"""

from __future__ import annotations

from typing import Any

from toolstand.adapters.sse import SseDecoder, SseEvent
from toolstand.adapters.stream_base import Assembled, AssemblerBase, event_json, inband_error

TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_TOKEN_DELTAS = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
        "response.function_call_arguments.delta",
    }
)


class ResponsesAssembler(AssemblerBase):
    def __init__(self) -> None:
        super().__init__()
        self.started: dict[str, Any] | None = None  # response.created's response
        self.terminal: dict[str, Any] | None = None
        self.added: dict[int, dict[str, Any]] = {}
        self.done_items: dict[int, dict[str, Any]] = {}
        self.args: dict[int, list[str]] = {}
        self.args_done: dict[int, str] = {}
        self.texts: dict[tuple[int, int], list[str]] = {}
        self.texts_done: dict[tuple[int, int], str] = {}
        self.seq: int | None = None

    def feed(self, event: SseEvent) -> None:
        self.n += 1
        if event.data.startswith("[DONE]"):
            self.flag("done_extra")
            return
        if self.terminal is not None or self.error is not None:
            return
        data = event_json(event.data)
        if not isinstance(data, dict):
            self.flag("malformed_chunk")
            return
        kind = data.get("type") if isinstance(data.get("type"), str) else event.event
        self._sequence(data.get("sequence_number"))
        if kind == "error" or (kind not in TERMINAL and isinstance(data.get("error"), dict)):
            err = data.get("error") if isinstance(data.get("error"), dict) else data
            self.error = inband_error(err, "error event after the 200")
            return
        if kind in _TOKEN_DELTAS:
            self.token()
        oi = data.get("output_index")
        oi = oi if isinstance(oi, int) and not isinstance(oi, bool) else -1
        if kind in TERMINAL or kind == "response.created":
            response = data.get("response")
            if isinstance(response, dict):
                if kind == "response.created":
                    self.started = response
                else:
                    self.terminal = response
            elif kind in TERMINAL:
                self.terminal = {}
        elif kind == "response.output_item.added" and isinstance(data.get("item"), dict):
            self.added[oi] = data["item"]
            if data["item"].get("type") == "function_call":
                self.call()
        elif kind == "response.output_item.done" and isinstance(data.get("item"), dict):
            self.done_items[oi] = data["item"]
        elif kind == "response.function_call_arguments.delta":
            self.args.setdefault(oi, []).append(_str(data.get("delta")))
        elif kind == "response.function_call_arguments.done":
            self.args_done[oi] = _str(data.get("arguments"))
        elif kind == "response.output_text.delta":
            self.texts.setdefault((oi, _ci(data)), []).append(_str(data.get("delta")))
        elif kind == "response.output_text.done":
            self.texts_done[(oi, _ci(data))] = _str(data.get("text"))

    def _sequence(self, number: Any) -> None:
        if not isinstance(number, int) or isinstance(number, bool):
            return
        if self.seq is not None and number != self.seq + 1:
            self.flag("sequence_gap")
        self.seq = number

    def finish(self, decoder: SseDecoder) -> Assembled:
        items = self._items()
        terminal = self.terminal
        if isinstance(terminal, dict) and isinstance(terminal.get("output"), list):
            body: dict[str, Any] = terminal
        else:
            base = terminal if terminal else (self.started or {})
            status = base.get("status") if terminal else "in_progress"
            body = {**base, "status": status, "output": items}
            if terminal is not None:
                self.flag("terminal_without_output")
        return self.outcome(body, terminal is not None, self._mismatches(body))

    def _items(self) -> list[dict[str, Any]]:
        """The output items as the events built them, in output order."""
        out = []
        for oi in sorted(set(self.added) | set(self.done_items)):
            item = dict(self.done_items.get(oi) or self.added[oi])
            if item.get("type") == "function_call" and oi not in self.done_items:
                item["arguments"] = "".join(self.args.get(oi, []))
            out.append(item)
        return out

    def _mismatches(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        final = [i for i in body.get("output") or [] if isinstance(i, dict)]
        final_calls = [i for i in final if i.get("type") == "function_call"]
        streamed = sorted(oi for oi, i in self.added.items() if i.get("type") == "function_call")
        if self.terminal is not None and len(streamed) != len(final_calls):
            out.append(_diff("number of function calls", None, len(streamed), len(final_calls)))
        for position, oi in enumerate(streamed):
            added = self.added[oi]
            whole = _matching(final_calls, added, position)
            where = f"function call {added.get('call_id') or added.get('id')!s} (output {oi})"
            if oi in self.args:
                deltas = "".join(self.args[oi])
                readings = [
                    ("function_call_arguments.done", self.args_done.get(oi)),
                    ("output_item.done", (self.done_items.get(oi) or {}).get("arguments")),
                    ("the terminal response", (whole or {}).get("arguments")),
                ]
                for label, value in readings:
                    if isinstance(value, str) and value != deltas:
                        out.append(_diff(f"arguments of {where}: {label}", position, deltas, value))
            for key in ("name", "call_id"):
                for label, item in (
                    ("output_item.done", self.done_items.get(oi)),
                    ("the terminal response", whole),
                ):
                    value = (item or {}).get(key)
                    if value is not None and added.get(key) not in (None, value):
                        out.append(
                            _diff(f"{key} of {where}: {label}", position, added.get(key), value)
                        )
        for (oi, ci), pieces in self.texts.items():
            deltas = "".join(pieces)
            done = self.texts_done.get((oi, ci))
            if done is not None and done != deltas:
                out.append(
                    _diff(f"text (output {oi}, part {ci}): output_text.done", None, deltas, done)
                )
            whole_text = _final_text(final, self.added.get(oi), oi, ci)
            if whole_text is not None and whole_text != deltas:
                out.append(
                    _diff(
                        f"text (output {oi}, part {ci}): the terminal response",
                        None,
                        deltas,
                        whole_text,
                    )
                )
        return out


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _ci(data: dict[str, Any]) -> int:
    ci = data.get("content_index")
    return ci if isinstance(ci, int) and not isinstance(ci, bool) else 0


def _diff(what: str, call_index: int | None, deltas: Any, whole: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"what": what, "deltas": deltas, "whole": whole}
    if call_index is not None:
        out["call_index"] = call_index
    return out


def _matching(
    final_calls: list[dict[str, Any]], added: dict[str, Any], position: int
) -> dict[str, Any] | None:
    """The terminal copy of a streamed call: by item id, else by position."""
    for item in final_calls:
        if added.get("id") is not None and item.get("id") == added.get("id"):
            return item
    return final_calls[position] if position < len(final_calls) else None


def _final_text(
    final: list[dict[str, Any]], added: dict[str, Any] | None, oi: int, ci: int
) -> str | None:
    """The text of content part ``ci`` of the terminal copy of message item ``oi``."""
    ident = (added or {}).get("id")
    item = next((i for i in final if ident is not None and i.get("id") == ident), None)
    if item is None and 0 <= oi < len(final):
        item = final[oi]
    content = (item or {}).get("content")
    if not isinstance(content, list) or ci >= len(content) or not isinstance(content[ci], dict):
        return None
    text = content[ci].get("text")
    return text if isinstance(text, str) else None
