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
A streamed request is fingerprinted as its unstreamed twin (streaming.unstreamed) and
counted apart from it, so a streamed answer gets the draws, hence the answer, the same
request would get unstreamed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import Counter
from collections.abc import Mapping
from typing import Any

import orjson

from toolstand.sim.http import (
    BAD_GATEWAY_PAGE,
    HttpError,
    Request,
    encode_chunk,
    encode_response,
    encode_stream_head,
    read_request,
    reset,
)
from toolstand.sim.imported import OwnToolsIndex
from toolstand.sim.invent import hints_for
from toolstand.sim.personas import (
    MODELS,
    PERSONAS,
    STREAM_FAULTS,
    careful,
    check_fault_rates,
    decide,
)
from toolstand.sim.repairs import repair_answer
from toolstand.sim.reply import LoggedRequest, Reply, StreamKeys, Wire
from toolstand.sim.stream import ChunkMode, Splitter, pieces
from toolstand.sim.stream_faults import apply_to_answer, check_stream_faults, pick
from toolstand.sim.streaming import (
    SSE_TYPE,
    framing,
    stream_ask,
    stream_events,
    unstreamed,
)
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
from toolstand.types import APIS, REPETITION_HEADER, SIM_CASE_HEADER

log = logging.getLogger(__name__)

_GEMINI_PREFIX = "/v1beta/models/"
_GEMINI_SUFFIX = ":generateContent"
_GEMINI_STREAM = ":streamGenerateContent"
_FAULT_ERRORS: dict[str, tuple[ErrorKind, str]] = {
    "rate_limited": ("rate_limited", "Rate limit reached for requests (toolstand simulator)."),
    "server_error": (
        "server_error",
        "The server had an error processing your request (toolstand simulator).",
    ),
    "overloaded": ("overloaded", "Overloaded (toolstand simulator)."),
}


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
        stream_chunks: ChunkMode = "token",
        stream_faults: Mapping[str, float] | None = None,
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
        self.stream_chunks: ChunkMode = stream_chunks
        if stream_faults is not None:
            check_stream_faults(stream_faults)
        # None: each persona's own (personas.STREAM_FAULTS); else for sim-streambug
        self.stream_faults = stream_faults
        self.request_log: list[LoggedRequest] = []
        self.requests_total = 0
        self.max_in_flight = 0
        self.in_flight = 0
        self.outcomes: Counter[str] = Counter()
        # (model, case id, first turn?) of each request answered, in arrival order
        self.log: list[tuple[str, str | None, bool]] = []
        self.root = ""
        self._index = OwnToolsIndex(cases, tuple(contract.tools))
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
                    self._log(request, reply)
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
        if reply.chunks is not None:
            return await self._write_stream(reply, request, reader, writer)
        if reply.fault == "timeout":
            await self._hold(reader)
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

    async def _hold(self, reader: asyncio.StreamReader) -> None:
        """Hold until the client gives up (EOF) or the hold ends."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(reader.read(1), self.timeout_hold_s)

    async def _write_stream(
        self,
        reply: Reply,
        request: Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        """A chunked body, one chunk per write; a torn stream stops halfway and closes the
        connection without the last chunk, a held one stops halfway and goes idle."""
        chunks = reply.chunks or []
        keep = request.keep_alive and reply.fault is None
        writer.write(encode_stream_head(reply.status, reply.headers, reply.content_type, keep))
        if reply.fault is not None:
            chunks = chunks[: len(chunks) // 2]
        for chunk in chunks:
            writer.write(encode_chunk(chunk))
            await writer.drain()
        if reply.fault == "timeout":
            await self._hold(reader)
            return False
        if reply.fault == "torn_body":
            writer.transport.abort()
            return False
        writer.write(encode_chunk(b""))
        await writer.drain()
        return keep

    def _log(self, request: Request, reply: Reply) -> None:
        route = self._route(request)
        api = route[0] if route is not None else self._guess_api(request)
        entry = LoggedRequest(
            request.method,
            request.path,
            api,
            reply.model,
            reply.streamed,
            0 if reply.fault in ("timeout", "reset") and reply.chunks is None else reply.status,
            reply.outcome,
            reply.stream_faults,
        )
        self.request_log.append(entry)

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
            return self._answer(wire, request, route)
        except WireError as err:
            reply = self._error(wire, err, rid)
            reply.streamed = _asks_stream(request, route[2])
            return reply
        except Exception:  # a simulator bug must not hang the client
            log.exception("toolstand simulator failed on %s %s", request.method, request.path)
            return self._error(
                wire, WireError("server_error", "toolstand simulator internal error"), rid
            )

    def _answer(self, wire: Wire, request: Request, route: tuple[str, str | None, bool]) -> Reply:
        _, path_model, gemini_stream = route
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
        ask = stream_ask(wire.api, body, gemini_stream, request.query)
        turn = wire.parse(body, model)
        turn.hints = self._hints
        case = self._index.find(turn.conversation, turn.tools, request.headers.get(SIM_CASE_HEADER))
        # the unstreamed twin: the same fingerprint, so the same draws, streamed or not
        plain_path = request.path.replace(_GEMINI_STREAM, _GEMINI_SUFFIX)
        plain = request.body if ask is None else unstreamed(request.body)
        fingerprint = hashlib.blake2b(plain_path.encode() + b"\0" + plain, digest_size=16).digest()
        first = not turn.calls and not turn.results
        repetition = request.headers.get(REPETITION_HEADER) if first else "1"
        digest = hashlib.blake2b(
            self._draw_key(fingerprint, repetition, ask is not None),
            key=self._key,
            digest_size=16,
        ).digest()
        self.log.append((model, case.id if case is not None else None, first))
        rid = digest.hex()[:20]
        draws = Draws(int.from_bytes(digest[8:], "big"))
        outcome = repair_answer(persona, case, turn, draws) or decide(
            persona, case, turn, self._effects, draws, self.fault_rates
        )
        headers = {**extra, wire.request_id_header: f"req_sim{rid}"}
        tokens = max(1, len(plain) // 4)
        stream = None
        if ask is not None:
            stream = StreamKeys(ask, persona, fingerprint, digest)
        if isinstance(outcome, str):
            self.outcomes[outcome] += 1
            reply = self._fault(wire, outcome, case, turn, rid, tokens, headers, stream)
            reply.outcome = outcome
        else:
            answer = limit_tokens(outcome, turn.max_tokens)
            reply = self._render(wire, answer, turn, rid, tokens, headers, stream)
            reply.outcome = "truncated" if answer.truncated else answer.kind
            self.outcomes[reply.outcome] += 1
        reply.model, reply.streamed = model, ask is not None
        return reply

    def _render(
        self,
        wire: Wire,
        answer: Answer,
        turn: ModelRequest,
        rid: str,
        tokens: int,
        headers: dict[str, str],
        stream: StreamKeys | None,
        fault: str | None = None,
    ) -> Reply:
        """The answer unstreamed, or streamed with the persona's stream faults."""
        if stream is None:
            data = wire.render(answer, turn, rid, tokens)
            return Reply(200, orjson.dumps(data), headers, fault=fault)
        rates: Mapping[str, float] = STREAM_FAULTS.get(stream.persona, {})
        if stream.persona == "streambug" and self.stream_faults is not None:
            rates = self.stream_faults
        fresh = Draws(int.from_bytes(stream.digest[:8], "big"))
        faults = (
            pick(rates, wire.api, answer, stream.stable(self._key), fresh) if rates else frozenset()
        )
        shown = apply_to_answer(answer, faults, wire.api)
        data = wire.render(shown, turn, rid, tokens)
        cuts = stream.cuts()
        events = stream_events(
            wire.api, data, shown, stream.ask, Splitter(self.stream_chunks, cuts), faults
        )
        named = tuple(sorted(faults))
        if named:
            headers = {**headers, "x-toolstand-sim-stream-faults": ",".join(named)}
        if not stream.ask.sse:  # Gemini without alt=sse: the chunks as one JSON array
            array = b"[" + b",\r\n".join(orjson.dumps(e.data) for e in events) + b"]"
            return Reply(200, array, headers, fault=fault, stream_faults=named)
        blobs = framing(wire.api, faults).encode(events)
        if self.stream_chunks == "random":
            blobs = pieces(b"".join(blobs), cuts)
        return Reply(200, b"", headers, SSE_TYPE, fault, blobs, stream_faults=named)

    def _draw_key(self, fingerprint: bytes, repetition: str | None, streamed: bool) -> bytes:
        """What a request's draws are seeded by (see the module docstring); streamed and
        unstreamed requests are counted apart, and draw alike."""
        arm = b"s" if streamed else b"u"
        if repetition is None or not repetition.isdigit() or int(repetition) < 1:
            k = self._seen.get(fingerprint + arm, 0)
            self._seen[fingerprint + arm] = k + 1
            return fingerprint + k.to_bytes(8, "big")
        index = (int(repetition) - 1).to_bytes(8, "big")
        tries = self._seen.get(fingerprint + index + arm, 0)
        self._seen[fingerprint + index + arm] = tries + 1
        return fingerprint + index + (tries.to_bytes(8, "big") if tries else b"")

    def _fault(
        self,
        wire: Wire,
        fault: str,
        case: Case | None,
        turn: ModelRequest,
        rid: str,
        tokens: int,
        headers: dict[str, str],
        stream: StreamKeys | None,
    ) -> Reply:
        if fault == "reset" or (fault == "timeout" and stream is None):
            return Reply(0, b"", fault=fault)
        if fault == "html_502":
            return Reply(502, BAD_GATEWAY_PAGE, content_type="text/html", headers=headers)
        if fault in ("torn_body", "timeout"):  # a stream stops halfway: torn, or idle
            return self._render(
                wire, careful(case, turn), turn, rid, tokens, headers, stream, fault
            )
        kind, message = _FAULT_ERRORS[fault]
        status, body, extra = wire.error(kind, message, rid, self.retry_after_s)
        return Reply(status, orjson.dumps(body), {**headers, **extra})

    def _error(self, wire: Wire, err: WireError, rid: str) -> Reply:
        self.outcomes[f"error:{err.kind}"] += 1
        status, body, extra = wire.error(err.kind, err.message, rid, self.retry_after_s, err.param)
        headers = {**extra, wire.request_id_header: f"req_sim{rid}"}
        return Reply(status, orjson.dumps(body), headers, outcome=f"error:{err.kind}")

    @staticmethod
    def _route(request: Request) -> tuple[str, str | None, bool] | None:
        """(api, the model named in the path, a Gemini stream) of a request, or None."""
        path = request.path
        if path == "/v1/chat/completions":
            return "openai-chat", None, False
        if path == "/v1/responses":
            return "openai-responses", None, False
        if path == "/v1/messages":
            return "anthropic", None, False
        if path.startswith(_GEMINI_PREFIX):
            for suffix in (_GEMINI_SUFFIX, _GEMINI_STREAM):
                if path.endswith(suffix):
                    return (
                        "gemini",
                        path[len(_GEMINI_PREFIX) : -len(suffix)],
                        suffix == _GEMINI_STREAM,
                    )
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
            "stream_chunks": self.stream_chunks,
        }


def _asks_stream(request: Request, gemini_stream: bool) -> bool:
    """Whether a refused request asked for a stream (for the request log)."""
    if gemini_stream:
        return True
    try:
        body = orjson.loads(request.body)
    except orjson.JSONDecodeError:
        return False
    return isinstance(body, dict) and body.get("stream") is True
