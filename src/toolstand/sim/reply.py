"""What the simulator's server passes around: the Wire protocol each API module fills, a
reply before it is written, and the request log's entries."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolstand.sim.streaming import StreamAsk
from toolstand.sim.turn import Answer, Draws, ErrorKind, ModelRequest


@dataclass(slots=True, frozen=True)
class StreamKeys:
    """A streamed request's keys: its options, persona and the seeds of its stream draws."""

    ask: StreamAsk
    persona: str
    fingerprint: bytes
    digest: bytes  # this request's (k-th arrival's) digest

    def stable(self, key: bytes) -> Draws:
        """Draws that are the same at every arrival of the request (its repetitions)."""
        seed = hashlib.blake2b(self.fingerprint, key=key, person=b"stream-faults").digest()
        return Draws(int.from_bytes(seed[:8], "big"))

    def cuts(self) -> Draws:
        """This arrival's draws for random fragment boundaries and socket writes."""
        seed = hashlib.blake2b(self.digest, person=b"stream-cuts").digest()
        return Draws(int.from_bytes(seed[:8], "big"))


class Wire(Protocol):
    api: str
    request_id_header: str

    def authorize(self, headers: dict[str, str], query: dict[str, str]) -> dict[str, str]: ...

    def parse(self, body: dict[str, Any], model: str) -> ModelRequest: ...

    def render(
        self, answer: Answer, turn: ModelRequest, rid: str, input_tokens: int
    ) -> dict[str, Any]: ...

    def error(
        self,
        kind: ErrorKind,
        message: str,
        rid: str,
        retry_after_s: float = 0.0,
        param: str | None = None,
    ) -> tuple[int, dict[str, Any], dict[str, str]]: ...


@dataclass(slots=True)
class Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    fault: str | None = None  # "timeout" | "torn_body" | "reset": written specially
    # a stream: one byte string per socket write, each sent as one HTTP chunk
    chunks: list[bytes] | None = None
    model: str | None = None
    streamed: bool = False
    outcome: str = ""
    stream_faults: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class LoggedRequest:
    """One request as the simulator's request log keeps it (tests count requests with it)."""

    method: str
    path: str
    api: str
    model: str | None
    streamed: bool  # the request asked for a stream (whatever the answer was)
    status: int  # 0: no status line was sent (a held or reset connection)
    outcome: str  # what the persona did: calls, text, refusal, truncated, a fault, error:KIND
    stream_faults: tuple[str, ...] = ()  # the stream faults the answer shows
