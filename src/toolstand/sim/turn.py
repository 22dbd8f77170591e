"""What the simulated model sees and says, independent of the wire API.

Each wire module turns a request body into a ``ModelRequest`` and renders an ``Answer``;
the personas work only on these, so one persona logic serves all four APIs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from toolstand.sim.invent import NO_HINTS, Hints
from toolstand.spec.cases import Case

Choice = Literal["auto", "none", "required", "forced"]
AnswerKind = Literal["text", "calls", "refusal", "malformed"]
ErrorKind = Literal[
    "auth",
    "bad_request",
    "not_found",
    "model_not_found",
    "rate_limited",
    "server_error",
    "overloaded",
]


class WireError(Exception):
    """A request the API would refuse; rendered in that API's error envelope."""

    def __init__(self, kind: ErrorKind, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.param = param


@dataclass(slots=True)
class PriorCall:
    """A call the assistant made earlier in the conversation (sent back by the client)."""

    call_id: str | None
    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class ToolOutput:
    """A tool result in the request; ``result`` is the parsed JSON object when it is one."""

    call_id: str | None
    name: str
    result: dict[str, Any]

    @property
    def failed(self) -> bool:
        return self.result.get("ok") is False

    @property
    def error_code(self) -> str | None:
        error = self.result.get("error")
        return str(error.get("code")) if isinstance(error, dict) and "code" in error else None


@dataclass(slots=True)
class ModelRequest:
    """One request as the simulated model sees it: the conversation, the tools and choice
    offered, the results sent back; one HTTP request per instance, whatever the API."""

    api: str
    model: str
    # (role, text) of the user/assistant messages before any tool activity
    conversation: tuple[tuple[str, str], ...]
    # offered tools in request order: name -> parameters schema as sent
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    choice: Choice = "none"
    forced: str | None = None
    allowed: list[str] | None = None  # allowed_tools / allowedFunctionNames subset
    parallel: bool = True
    calls: list[PriorCall] = field(default_factory=list)
    results: list[ToolOutput] = field(default_factory=list)  # the trailing tool-result group
    max_tokens: int | None = None
    # request facts an API echoes back in its response (Responses: tools, instructions...)
    echo: dict[str, Any] = field(default_factory=dict)
    # the contract's words for its tools (the server sets them; a wire never sees them)
    hints: Hints = NO_HINTS

    @property
    def callable_tools(self) -> list[str]:
        """The tools the model may call now, in offered order ([] means it must not call)."""
        if self.choice == "none" or not self.tools:
            return []
        if self.forced is not None:
            return [self.forced]
        if self.allowed is not None:
            allowed = set(self.allowed)
            return [n for n in self.tools if n in allowed]
        return list(self.tools)

    @property
    def last_user_text(self) -> str:
        for role, text in reversed(self.conversation):
            if role == "user":
                return text
        return ""


@dataclass(slots=True)
class SimCall:
    name: str
    arguments: dict[str, Any]
    raw: str | None = None  # set when the arguments string is deliberately not JSON

    def raw_text(self) -> str:
        if self.raw is not None:
            return self.raw
        return orjson.dumps(self.arguments).decode()


@dataclass(slots=True)
class Answer:
    kind: AnswerKind
    text: str = ""
    calls: list[SimCall] = field(default_factory=list)
    truncated: bool = False

    @property
    def output_tokens(self) -> int:
        """A deterministic stand-in for a token count: about four characters a token."""
        size = len(self.text) + sum(len(c.name) + len(c.raw_text()) for c in self.calls)
        return max(1, (size + 3) // 4)


def limit_tokens(answer: Answer, max_tokens: int | None) -> Answer:
    """Cut an answer the way a token limit would: text shortened, a call's JSON half-written."""
    if not max_tokens or max_tokens <= 0 or answer.output_tokens <= max_tokens:
        return answer
    budget = max_tokens * 4
    if answer.kind == "calls" and answer.calls:
        first = answer.calls[0]
        raw = first.raw_text()
        cut = raw[: max(1, min(len(raw) - 1, budget))]
        return Answer("calls", calls=[SimCall(first.name, {}, raw=cut)], truncated=True)
    return Answer(answer.kind, text=answer.text[:budget], truncated=True)


def parse_result(payload: Any) -> dict[str, Any]:
    """A tool result as the executor wrote it: a JSON object, possibly sent as a string."""
    if isinstance(payload, dict):
        return payload
    if isinstance(payload, str):
        try:
            value = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return {"ok": None, "text": payload}
        if isinstance(value, dict):
            return value
        return {"ok": None, "value": value}
    return {"ok": None, "value": payload}


def text_of(content: Any, kinds: tuple[str, ...] = ("text", "input_text", "output_text")) -> str:
    """Join the text of a message content: a string or a list of typed text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") in kinds:
                text = part.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "".join(parts)
    return ""


def loads_object(raw: Any) -> dict[str, Any]:
    """Parse call arguments sent back by a client; anything unparseable counts as {}."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


class CaseIndex:
    """Cases by conversation text, so finding a request's case costs one dict lookup."""

    def __init__(self, cases: list[Case]) -> None:
        self._by_user: dict[str, Case] = {}
        self._by_conversation: dict[tuple[tuple[str, str], ...], Case] = {}
        for case in cases:
            if case.messages is not None:
                key = tuple((m.role, m.content.strip()) for m in case.messages)
                self._by_conversation.setdefault(key, case)
            else:
                self._by_user.setdefault((case.user or "").strip(), case)

    def find(self, conversation: tuple[tuple[str, str], ...]) -> Case | None:
        case = self._by_conversation.get(conversation)
        if case is not None:
            return case
        if conversation and conversation[-1][0] == "user":
            return self._by_user.get(conversation[-1][1])
        return None


_MASK = (1 << 64) - 1


class Draws:
    """SplitMix64: a tiny seeded stream of uniforms, one per decision the persona makes."""

    __slots__ = ("_state",)

    def __init__(self, state: int) -> None:
        self._state = state & _MASK

    def uniform(self) -> float:
        self._state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        return (z >> 11) * (1.0 / (1 << 53))
