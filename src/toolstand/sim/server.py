"""SimServer: the simulated provider, a real HTTP server on loopback speaking four wire APIs.

Determinism: a request's fingerprint is a hash of its path and body (the model, the
case, the mode and the conversation so far are all in it). toolstand's own client names
the repetition an attempt is (``x-toolstand-repetition``): a turn 1 is then seeded by
(seed, fingerprint, repetition) and a later turn by its fingerprint alone (its
conversation holds the repetition's own earlier answers), a retry by the number of
tries before it. So an answer never depends on the order requests arrive in, nor on how
many feedback arms share the turn (design.md, Repair turn). Another client's k-th
identical request gets draws seeded by (seed, fingerprint, k): a fresh draw each time,
the multiset of outcomes fixed by the seed. Repetition n's turn 1 draws what the n-th
identical request would, so the two agree wherever arrival order did not matter.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from toolstand.sim.http import (
    BAD_GATEWAY_PAGE,
    HttpError,
    Request,
    encode_response,
    read_request,
    reset,
)
from toolstand.sim.imported import OwnToolsIndex
from toolstand.sim.invent import hints_for
from toolstand.sim.personas import MODELS, PERSONAS, careful, check_fault_rates, decide
from toolstand.sim.repairs import repair_answer
from toolstand.sim.turn import (
    Answer,
    Draws,
    ErrorKind,
    ModelRequest,
    WireError,
    limit_tokens,
)
from toolstand.sim.wire_anthropic import AnthropicWire
from toolstand.sim.wire_chat import ChatWire
from toolstand.sim.wire_gemini import GeminiWire
from toolstand.sim.wire_responses import ResponsesWire
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract
from toolstand.types import APIS, REPETITION_HEADER

log = logging.getLogger(__name__)

_GEMINI_PREFIX = "/v1beta/models/"
_GEMINI_SUFFIX = ":generateContent"
_FAULT_ERRORS: dict[str, tuple[ErrorKind, str]] = {
    "rate_limited": ("rate_limited", "Rate limit reached for requests (toolstand simulator)."),
    "server_error": (
        "server_error",
        "The server had an error processing your request (toolstand simulator).",
    ),
    "overloaded": ("overloaded", "Overloaded (toolstand simulator)."),
}


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


def sim_base_url(root: str, api: str) -> str:
    """The base_url an adapter takes for this API (the official SDKs' conventions)."""
    root = root.rstrip("/")
    if api in ("openai-chat", "openai-responses"):
        return root + "/v1"
    if api in ("anthropic", "gemini"):
        return root
    raise ValueError(f"unknown api {api!r}; allowed: {', '.join(APIS)}")


class SimServer:
    """The embedded simulated provider; see ``toolstand.sim.personas`` for its "models"."""

    def __init__(
        self,
        cases: list[Case],
        contract: Contract,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        seed: int = 0,
        latency_s: float = 0.0,
        retry_after_s: float = 0.0,
        timeout_hold_s: float = 900.0,
        fault_rates: Mapping[str, float] | None = None,
    ) -> None:
        self.cases = cases
        self.contract = contract
        self.host = host
        self.port = port
        self.seed = seed
        self.latency_s = latency_s
        self.retry_after_s = retry_after_s
        # longer than any client timeout (the SDKs default to 600 s), yet finite
        self.timeout_hold_s = timeout_hold_s
        if fault_rates is not None:
            check_fault_rates(fault_rates)
        self.fault_rates = fault_rates  # None: personas.FLAKY_FAULT_RATES
        self.requests_total = 0
        self.max_in_flight = 0
        self.in_flight = 0
        self.outcomes: Counter[str] = Counter()
        # (model, case id, first turn?) of each request answered, in arrival order
        self.log: list[tuple[str, str | None, bool]] = []
        self.root = ""
        self._index = OwnToolsIndex(cases)
        self._effects = {t.name: t.effect for t in contract.tools}
        self._hints = hints_for(contract.tools)
        self._wires: dict[str, Wire] = {
            "openai-chat": ChatWire(),
            "openai-responses": ResponsesWire(),
            "anthropic": AnthropicWire(),
            "gemini": GeminiWire(),
        }
        self._seen: dict[bytes, int] = {}
        self._key = hashlib.blake2b(str(seed).encode(), digest_size=32).digest()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()

    async def start(self) -> str:
        """Listen and return the root URL, e.g. ``http://127.0.0.1:PORT``."""
        self._server = await asyncio.start_server(self._serve, self.host, self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.root = f"http://{host}:{self.port}"
        return self.root

    async def stop(self) -> None:
        """Stop listening and end every connection, held ones included."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> SimServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            keep = True
            while keep:
                try:
                    request = await read_request(reader)
                except HttpError as exc:
                    writer.write(encode_response(exc.status, b"", {}, keep_alive=False))
                    break
                if request is None:
                    break
                self.requests_total += 1
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    reply = self._reply(request)
                    if self.latency_s > 0:
                        await asyncio.sleep(self.latency_s)
                    keep = await self._write(reply, request, reader, writer)
                finally:
                    self.in_flight -= 1
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # stop() cancels held connections; ending normally keeps asyncio's stream
            # callback from logging the cancellation as an error
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            if not writer.is_closing():
                writer.close()

    async def _write(
        self,
        reply: Reply,
        request: Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        if reply.fault == "reset":
            reset(writer)
            return False
        if reply.fault == "timeout":
            # hold until the client gives up (EOF) or the hold ends
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(reader.read(1), self.timeout_hold_s)
            return False
        if reply.fault == "torn_body":
            half = reply.body[: len(reply.body) // 2]
            writer.write(
                encode_response(
                    reply.status, half, reply.headers, declared_length=len(reply.body) + 512
                )
            )
            await writer.drain()
            return False
        writer.write(
            encode_response(
                reply.status,
                reply.body,
                reply.headers,
                content_type=reply.content_type,
                keep_alive=request.keep_alive,
            )
        )
        await writer.drain()
        return request.keep_alive

    def _reply(self, request: Request) -> Reply:
        route = self._route(request)
        if request.method == "GET" and request.path == "/":
            return Reply(200, orjson.dumps(self.describe()))
        api = route[0] if route is not None else self._guess_api(request)
        wire = self._wires[api]
        rid = f"{self.requests_total:020x}"
        if route is None or request.method != "POST":
            return self._error(
                wire, WireError("not_found", f"Invalid URL ({request.method} {request.path})"), rid
            )
        try:
            return self._answer(wire, request, route[1])
        except WireError as err:
            return self._error(wire, err, rid)
        except Exception:  # a simulator bug must not hang the client
            log.exception("toolstand simulator failed on %s %s", request.method, request.path)
            return self._error(
                wire, WireError("server_error", "toolstand simulator internal error"), rid
            )

    def _answer(self, wire: Wire, request: Request, path_model: str | None) -> Reply:
        extra = wire.authorize(request.headers, request.query)
        try:
            body = orjson.loads(request.body)
        except orjson.JSONDecodeError:
            body = None
        if not isinstance(body, dict):
            raise WireError(
                "bad_request",
                "We could not parse the JSON body of your request: expected a JSON object.",
            )
        model = path_model if path_model is not None else body.get("model")
        persona = model[4:] if isinstance(model, str) and model.startswith("sim-") else None
        if persona not in PERSONAS or not isinstance(model, str):
            raise WireError(
                "model_not_found",
                f"The model {model!r} does not exist in the toolstand simulator; allowed: {', '.join(MODELS)}.",
                "model",
            )
        turn = wire.parse(body, model)
        turn.hints = self._hints
        case = self._index.find(turn.conversation, turn.tools)
        fingerprint = hashlib.blake2b(
            request.path.encode() + b"\0" + request.body, digest_size=16
        ).digest()
        first = not turn.calls and not turn.results
        repetition = request.headers.get(REPETITION_HEADER) if first else "1"
        digest = hashlib.blake2b(
            self._draw_key(fingerprint, repetition), key=self._key, digest_size=16
        ).digest()
        self.log.append((model, case.id if case is not None else None, first))
        rid = digest.hex()[:20]
        draws = Draws(int.from_bytes(digest[8:], "big"))
        outcome = repair_answer(persona, case, turn, draws) or decide(
            persona, case, turn, self._effects, draws, self.fault_rates
        )
        headers = {**extra, wire.request_id_header: f"req_sim{rid}"}
        if isinstance(outcome, str):
            self.outcomes[outcome] += 1
            return self._fault(wire, outcome, case, turn, rid, request, headers)
        answer = limit_tokens(outcome, turn.max_tokens)
        self.outcomes["truncated" if answer.truncated else answer.kind] += 1
        data = wire.render(answer, turn, rid, max(1, len(request.body) // 4))
        return Reply(200, orjson.dumps(data), headers)

    def _draw_key(self, fingerprint: bytes, repetition: str | None) -> bytes:
        """What a request's draws are seeded by (see the module docstring)."""
        if repetition is None or not repetition.isdigit() or int(repetition) < 1:
            k = self._seen.get(fingerprint, 0)
            self._seen[fingerprint] = k + 1
            return fingerprint + k.to_bytes(8, "big")
        index = (int(repetition) - 1).to_bytes(8, "big")
        tries = self._seen.get(fingerprint + index, 0)
        self._seen[fingerprint + index] = tries + 1
        return fingerprint + index + (tries.to_bytes(8, "big") if tries else b"")

    def _fault(
        self,
        wire: Wire,
        fault: str,
        case: Case | None,
        turn: ModelRequest,
        rid: str,
        request: Request,
        headers: dict[str, str],
    ) -> Reply:
        if fault in ("timeout", "reset"):
            return Reply(0, b"", fault=fault)
        if fault == "html_502":
            return Reply(502, BAD_GATEWAY_PAGE, content_type="text/html", headers=headers)
        if fault == "torn_body":
            data = wire.render(careful(case, turn), turn, rid, max(1, len(request.body) // 4))
            return Reply(200, orjson.dumps(data), headers, fault="torn_body")
        kind, message = _FAULT_ERRORS[fault]
        status, body, extra = wire.error(kind, message, rid, self.retry_after_s)
        return Reply(status, orjson.dumps(body), {**headers, **extra})

    def _error(self, wire: Wire, err: WireError, rid: str) -> Reply:
        self.outcomes[f"error:{err.kind}"] += 1
        status, body, extra = wire.error(err.kind, err.message, rid, self.retry_after_s, err.param)
        return Reply(status, orjson.dumps(body), {**extra, wire.request_id_header: f"req_sim{rid}"})

    @staticmethod
    def _route(request: Request) -> tuple[str, str | None] | None:
        path = request.path
        if path == "/v1/chat/completions":
            return "openai-chat", None
        if path == "/v1/responses":
            return "openai-responses", None
        if path == "/v1/messages":
            return "anthropic", None
        if path.startswith(_GEMINI_PREFIX) and path.endswith(_GEMINI_SUFFIX):
            return "gemini", path[len(_GEMINI_PREFIX) : -len(_GEMINI_SUFFIX)]
        return None

    @staticmethod
    def _guess_api(request: Request) -> str:
        """Which envelope a 404 uses: the one the client most likely speaks."""
        if request.path.startswith("/v1beta"):
            return "gemini"
        if "anthropic-version" in request.headers or "x-api-key" in request.headers:
            return "anthropic"
        return "openai-chat"

    def describe(self) -> dict[str, Any]:
        """What GET / answers: a label, the models and the base URLs."""
        return {
            "simulator": "toolstand",
            "note": "a simulated provider for tests; no real model answers here",
            "models": list(MODELS),
            "base_urls": {api: sim_base_url(self.root, api) for api in APIS},
            "cases": len(self.cases),
            "contract": f"{self.contract.name} {self.contract.version}",
        }
