"""The normalized form of what a model answered: ToolCall and ModelDecision.

Adapters produce these from raw provider bodies; the judge rules on them. The raw
response itself is kept beside the decision in the attempt record, never inside it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

DecisionKind = Literal["tool_call", "text", "refusal", "invalid"]
DECISION_KINDS: tuple[str, ...] = ("tool_call", "text", "refusal", "invalid")
# how ``parse_error`` begins when the arguments write one key twice in an object; the
# judge reads it back as ``invalid_json`` sub-code ``duplicate_key`` (records keep only
# the message, so a rejudged history gives the same sub-code)
DUPLICATE_KEY_ERROR = "duplicate key"
# how ``parse_error`` begins when the arguments nest deeper than MAX_ARGUMENT_DEPTH: the
# judge reads it back as ``invalid_arguments`` sub-code ``depth``
DEPTH_ERROR = "arguments nested deeper than"


@dataclass
class ToolCall:
    """One function call as the model wrote it.

    ``arguments`` is the parsed JSON object, or None when ``raw_arguments`` did not
    parse to an object (then ``parse_error`` says why). ``raw_arguments`` is exactly
    what came over the wire: a string for APIs that send strings, else the object
    re-serialized by us (``raw_reserialized`` true). A ``call_id`` we made up because
    the provider sent none has ``call_id_synthesized`` true and is never sent back.
    """

    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str | None
    call_id: str | None = None
    call_id_synthesized: bool = False
    raw_reserialized: bool = False
    parse_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(
            name=data["name"],
            arguments=data.get("arguments"),
            raw_arguments=data.get("raw_arguments"),
            call_id=data.get("call_id"),
            call_id_synthesized=bool(data.get("call_id_synthesized", False)),
            raw_reserialized=bool(data.get("raw_reserialized", False)),
            parse_error=data.get("parse_error"),
        )


@dataclass
class ModelDecision:
    """The normalized decision of one turn.

    kind:
      tool_call: at least one complete call (arguments may still fail to parse: then
        the call has ``arguments`` None and the judge gives ``invalid_json``);
      text: a plain answer (``truncated`` may be set when it was cut);
      refusal: an explicit refusal or a content filter;
      invalid: no usable answer: a half-written call cut by the token limit
        (``truncated``), a provider's malformed-call finish reason, a body in which
        nothing readable remains.
    ``partial_calls`` keeps half-written calls for display; they are not calls.
    ``flags`` are facts worth a filter: ``reasoning`` (thinking parts seen),
    ``content_filter``, ``malformed_function_call``, ``empty_tool_calls`` ...
    ``notes`` name what the adapter saw but did not read: an output item, block or
    part of a type it does not know (a hosted tool's call is not one of the
    contract's calls), a finish reason or status outside its table. The raw body
    keeps them; the decision is made from what was read (such a shape is never
    ``invalid_json``, judge._no_answer).
    ``stream_mismatch`` (streamed answers only): where the whole answer the API also sent
    differs from what its deltas assembled, each ``{"what", "deltas", "whole"}`` and the
    ``call_index`` when it concerns a call; written only when there is one.
    """

    kind: DecisionKind
    text: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    refusal: str | None = None
    finish_reason: str | None = None
    truncated: bool = False
    partial_calls: list[ToolCall] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stream_mismatch: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "text": self.text,
            "calls": [c.to_dict() for c in self.calls],
            "refusal": self.refusal,
            "finish_reason": self.finish_reason,
            "truncated": self.truncated,
            "partial_calls": [c.to_dict() for c in self.partial_calls],
            "flags": list(self.flags),
            "notes": list(self.notes),
        }
        if self.stream_mismatch:
            out["stream_mismatch"] = list(self.stream_mismatch)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelDecision:
        return cls(
            kind=data["kind"],
            text=data.get("text"),
            calls=[ToolCall.from_dict(c) for c in data.get("calls") or []],
            refusal=data.get("refusal"),
            finish_reason=data.get("finish_reason"),
            truncated=bool(data.get("truncated", False)),
            partial_calls=[ToolCall.from_dict(c) for c in data.get("partial_calls") or []],
            flags=list(data.get("flags") or []),
            notes=list(data.get("notes") or []),
            stream_mismatch=list(data.get("stream_mismatch") or []),
        )
