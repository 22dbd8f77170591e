"""Live attempts for the Run screen, one step at a time, and pasted bodies (no Textual).

The session runs in the app's own event loop: the embedded simulator (started by
``runner.targets_for``) and the httpx client live in that loop for the whole session,
so they are never shared across loops. Every finished attempt is appended to
runs/live-<date>.jsonl in the runner's record format.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import re
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx

from toolstand.attempt.plan import (
    AttemptState,
    Target,
    ToolResult,
    mode_applies,
    plan_attempt,
    policy_for,
)
from toolstand.attempt.reading import decode_body, read_turn, request_record
from toolstand.attempt.record import record
from toolstand.attempt.turns import (
    client_for,
    client_is_quick,
    first_request,
    first_turn,
    repair_turn,
    second_turn,
)
from toolstand.history import JsonlWriter
from toolstand.run.runner import Inputs, header, targets_for
from toolstand.spec.cases import Case, CaseFile
from toolstand.spec.config import Config
from toolstand.transport_read import EventHook, watching
from toolstand.tui.model.live_cases import LiveCases
from toolstand.tui.model.live_repair import arm
from toolstand.tui.model.project import Project
from toolstand.types import (
    AttemptRecord,
    FeedbackStyle,
    FollowupJudgement,
    Judgement,
    Mode,
    ToolResultRecord,
    TransportErrorRecord,
)
from toolstand.util.printable import visible


@dataclass
class TurnView:
    """One turn as the Run screen shows it: request, raw response, decision, verdict."""

    label: str
    request: dict[str, Any] | None
    response: dict[str, Any] | None
    decision: dict[str, Any] | None
    judgement: Judgement | FollowupJudgement | None
    transport_error: TransportErrorRecord | None = None
    tries: list[dict[str, Any]] = field(default_factory=list)
    latency_ms: float | None = None
    tool_results: list[ToolResultRecord] | None = None
    checks: dict[str, Any] | None = None  # turn 2: the followup checks it was judged by
    # the request's conversation item to open at: the user's last turn (in turn 2 the
    # call and the tool results follow it), never the system prompt at the top
    anchor: int | None = None

    @property
    def retries(self) -> int:
        return max(0, len(self.tries) - 1)


CONVERSATION_KEYS = ("messages", "input", "contents")  # chat/anthropic, responses, gemini


def conversation_of(body: Any) -> tuple[str, list[Any]] | None:
    """The key and the list of a request body's conversation, in any of the four APIs."""
    if isinstance(body, dict):
        for key in CONVERSATION_KEYS:
            if isinstance(body.get(key), list):
                return key, body[key]
    return None


def _last_item(request: dict[str, Any] | None) -> int | None:
    found = conversation_of((request or {}).get("body"))
    return len(found[1]) - 1 if found is not None and found[1] else None


def views_of(state: AttemptState, rec: AttemptRecord | None = None) -> list[TurnView]:
    """The turns of an attempt, from the same record that goes to disk."""
    rec = rec if rec is not None else record(state)
    user_turn = _last_item(rec["request"])
    turns = [
        TurnView(
            "turn 1",
            rec["request"],
            rec["response"],
            rec["decision"],
            state.judgement,  # first turn alone; the record merges the second's codes
            rec["transport_error"],
            rec["tries"],
            rec["latency_ms"],
            anchor=user_turn,
        )
    ]
    for t in rec.get("repair_turns") or []:
        turns.append(
            TurnView(
                f"turn {len(turns) + 1} · repair {t['index']} · {t['feedback']}",
                t["request"],
                t["response"],
                t["decision"],
                t["judgement"],
                t["transport_error"],
                t["tries"],
                t["elapsed_ms"],
                t["tool_results"],
                anchor=user_turn,
            )
        )
    st = rec.get("second_turn")
    if st is not None:
        turns.append(
            TurnView(
                f"turn {len(turns) + 1}",
                st["request"],
                st["response"],
                st["decision"],
                st["judgement"],
                st["transport_error"],
                st["tries"],
                st["elapsed_ms"],
                st["tool_results"],
                state.case.followup.model_dump(exclude_defaults=True, exclude={"tool_results"})
                if state.case.followup is not None
                else None,
                anchor=user_turn,
            )
        )
    return turns


def describe(view: TurnView, case_id: str, note: str) -> str:
    """The status line for ``view``: which turn of which case, how it ended, its network
    time, and ``note`` on how the attempt stands."""
    if view.transport_error:
        outcome = f"transport error {view.transport_error.get('code')}"
        outcome += f" after {view.retries} retries" if view.retries else ""
    else:
        outcome = f"verdict {view.judgement['verdict'] if view.judgement else None}"
    took = f"{view.latency_ms:.0f} ms" if view.latency_ms is not None else ""
    bits = [f"{view.label} of {visible(case_id)}", outcome, took, note]
    return " · ".join(b for b in bits if b)


def live_path(runs_dir: Path, today: date | None = None) -> Path:
    return runs_dir / f"live-{(today or date.today()).isoformat()}.jsonl"


def inputs_of(project: Project, casefile: CaseFile | None = None) -> Inputs:
    """What a live run is made of; ``casefile``: its cases (default: the open file)."""
    assert project.config is not None and project.config_path is not None
    casefile = casefile if casefile is not None else project.casefile
    return Inputs(
        project.config,
        str(project.config_path),
        project.contract,
        project.contract_path,
        casefile,
        Path(casefile.path),
        project.system,
        project.prompt_version,
        project.prompt_hash,
    )


class LiveSession:
    """Targets, a client and the JSONL output for the live attempts of one app session."""

    def __init__(
        self,
        project: Project,
        today: Callable[[], date] = date.today,
        cases: LiveCases | None = None,
    ) -> None:
        self.project = project
        self.cases = cases if cases is not None else LiveCases()  # every file of the config
        self.today = today
        self.run_id = f"live-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"
        self._stack: contextlib.AsyncExitStack | None = None
        self._targets: list[Target] = []
        self._clients: dict[int, httpx.AsyncClient] = {}  # one a run, as the runner has
        self._cases_sha: str | None = None
        self._headed: set[Path] = set()
        self._attempts: Counter[tuple[int, str, str]] = Counter()
        self._writing = asyncio.Lock()  # one append at a time, in record order

    @property
    def config(self) -> Config:
        assert self.project.config is not None
        return self.project.config

    async def _ensure(self) -> None:
        # the simulator answers from the case file: restart it when the file was edited
        cases = self.cases.of(self.project)
        if self._stack is not None and self._cases_sha == cases.sha256:
            return
        await self.close()
        stack = contextlib.AsyncExitStack()
        inputs = inputs_of(self.project, cases)
        self._targets = await stack.enter_async_context(targets_for(inputs))
        self._stack = stack
        self._cases_sha = cases.sha256

    async def _client(self, run_index: int) -> httpx.AsyncClient:
        """Run ``run_index``'s client, made at its first turn of this session."""
        client = self._clients.get(run_index)
        if client is not None:
            return client
        assert self._stack is not None
        spec = self.config.runs[run_index]
        if client_is_quick(spec):
            client = client_for(self.config, spec)  # no TLS: nothing slow to build
        else:
            # loading the CA bundle takes 30-120 ms: off the loop; the client is bound
            # to no loop until its first request, which happens in this one
            client = await asyncio.to_thread(client_for, self.config, spec)
        self._stack.push_async_callback(client.aclose)
        self._clients[run_index] = client
        return client

    def _client_of(self, state: AttemptState, turn: str) -> httpx.AsyncClient:
        """The client ``state``'s turn 1 went through (a later ``turn`` needs it)."""
        client = self._clients.get(self._run_index(state))
        assert client is not None, f"a {turn} needs the session of its first"
        return client

    def _run_index(self, state: AttemptState) -> int:
        """The configured run of ``state``'s turn 1, while this session's targets last."""
        found = next((i for i, t in enumerate(self._targets) if t is state.plan.target), None)
        if found is None or found not in self._clients:
            raise ValueError("the session was restarted since this turn 1 (the case file changed)")
        return found

    async def first(
        self,
        run_index: int,
        case: Case,
        mode: Mode,
        stream: bool = False,
        on_event: EventHook | None = None,
    ) -> AttemptState:
        """Start an attempt in the ``stream`` arm and send its first turn (cancellable
        while it waits); ``on_event`` sees each streamed event as it arrives."""
        if not mode_applies(case, mode):
            raise ValueError(f"mode {mode} runs only cases that expect a call")
        await self._ensure()
        client = await self._client(run_index)
        key = (run_index, case.id, mode)
        self._attempts[key] += 1
        plan = plan_attempt(
            self._targets[run_index], case, mode, self.project.contract, self.config,
            stream=stream,
        )  # fmt: skip
        state = AttemptState(plan, self._attempts[key], self.run_id)
        with watching(on_event):
            await first_turn(state, self.project.system, client, policy_for(self.config))
        return state

    async def repair(
        self,
        state: AttemptState,
        style: FeedbackStyle,
        results: list[ToolResult],
        on_event: EventHook | None = None,
    ) -> AttemptState:
        """Send the (possibly edited) feedback as the next repair turn and judge it."""
        client = self._client_of(state, "repair turn")
        arm(state, style, self.config)
        with watching(on_event):
            await repair_turn(state, results, client, policy_for(self.config))
        return state

    async def second(
        self,
        state: AttemptState,
        results: list[ToolResult],
        on_event: EventHook | None = None,
    ) -> AttemptState:
        """Send the (possibly edited) tool results back and judge the followup."""
        client = self._client_of(state, "second turn")
        with watching(on_event):
            await second_turn(state, results, client, policy_for(self.config))
        return state

    def again(self, state: AttemptState, *, repair: bool = False) -> AttemptState:
        """A new attempt that continues ``state``'s turn 1 (and its repair turns) with
        another turn 2, without asking for turn 1 again: its own attempt number, those
        turns copied and the record marked ``first_turn_shared`` (as a feedback arm's).
        With ``repair``, only turn 1 is copied and the arm is left open: the next repair
        turn (``repair``) sets it to the style it sends."""
        run_index = self._run_index(state)
        key = (run_index, state.case.id, state.mode)
        self._attempts[key] += 1
        return AttemptState(
            state.plan.arm(None, 0) if repair else state.plan,
            self._attempts[key],
            state.run_id,
            state.started_at,  # turn 1's, as the copy of it is
            first=state.first,
            judgement=copy.deepcopy(state.judgement),
            repair_needed=state.repair_needed and not repair,  # arm() sets it again
            repairs=[] if repair else list(state.repairs),
            first_turn_shared=True,
        )

    def append(self, state: AttemptState) -> tuple[Path, AttemptRecord]:
        """Append the attempt's record (after this session's run header) and return it."""
        path = live_path(self.project.runs_dir, self.today())
        rec = record(state)
        with JsonlWriter(path) as writer:
            if path not in self._headed:
                # a header per session: each session is its own run_id
                inputs = inputs_of(self.project, self.cases.of(self.project))
                writer.write(header(inputs, self.run_id))
                self._headed.add(path)
            writer.write(rec)
        return path, rec

    async def save(self, state: AttemptState) -> tuple[Path, AttemptRecord]:
        """``append`` off the event loop, one at a time (records left behind and the
        next attempt's can finish together)."""
        async with self._writing:
            return await asyncio.to_thread(self.append, state)

    async def close(self) -> None:
        stack, self._stack = self._stack, None
        self._clients = {}
        if stack is not None:
            await stack.aclose()


def judge_pasted(
    project: Project, run_index: int, case: Case, mode: Mode, status: int, text: str
) -> TurnView:
    """Rule on a pasted provider body exactly as on a live answer: the same plan, the
    same request, and ``read_turn`` (classify, parse, strict nulls as absent, judge)."""
    assert project.config is not None
    spec = project.config.runs[run_index]
    base_url = "http://simulator.invalid" if spec.simulated else spec.base_url
    plan = plan_attempt(
        Target.make(spec, base_url, None), case, mode, project.contract, project.config
    )
    built = first_request(plan, project.system, base_url, spec.model)
    body, is_json = decode_body(text.encode("utf-8"))
    response = {"status": status, "headers": {}, "body": body, "body_is_json": is_json}
    request = request_record(built)
    view = TurnView("pasted", request, response, None, None, anchor=_last_item(request))
    reading = read_turn(plan, built, status, {}, body)
    view.transport_error = reading.error
    view.decision = reading.decision.to_dict() if reading.decision is not None else None
    view.judgement = reading.judgement
    return view


# the HTTP status an error body stands for: Anthropic and OpenAI error types and codes,
# Google RPC status names
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "invalid_api_key": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "model_not_found": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "insufficient_quota": 429,
    "requests": 429,
    "tokens": 429,
    "api_error": 500,
    "server_error": 500,
    "overloaded_error": 529,
    "INVALID_ARGUMENT": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
_HTTP_CODE = re.compile(r"\b([45]\d\d)\b")


def status_of_body(text: str) -> int | None:
    """The HTTP status a pasted body most likely came with, so an error body is not
    judged as a 200: the code an error envelope names, 200 for any other JSON body, the
    4xx/5xx a text page names (an HTML 502), else None (unknown)."""
    body, is_json = decode_body(text.encode("utf-8"))
    if not is_json:
        found = _HTTP_CODE.search(str(body or ""))
        return int(found.group(1)) if found else None
    error = body.get("error") if isinstance(body, dict) else None
    if not error:
        return 200
    if isinstance(error, dict):
        code = error.get("code")
        if isinstance(code, int) and 400 <= code <= 599:  # Gemini's envelope
            return code
        for key in ("status", "code", "type"):
            named = _ERROR_STATUS.get(str(error.get(key)))
            if named is not None:
                return named
    return 400
