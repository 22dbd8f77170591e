"""The workers of one run: a queue of attempts, ``parallelism`` of them in flight.

Requests are spread over several httpx clients per run (one client's pool slows down
with many queued requests); each finished attempt is written and flushed as soon as
the requests ready to go out have gone (run/recorder.py), and a failed write stops
every worker (runner.py says what to do next).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

import httpx

from toolstand.adapters.base import BuiltRequest
from toolstand.attempt.arms import play_arms
from toolstand.attempt.plan import AttemptPlan, AttemptState, Target, policy_for
from toolstand.attempt.record import record
from toolstand.attempt.turns import client_for, client_is_quick
from toolstand.history import HistoryWriteError, IndexedWriter
from toolstand.run.inputs import Inputs
from toolstand.run.matrix import Repetition
from toolstand.run.recorder import Recorder
from toolstand.spec.config import Config
from toolstand.types import AttemptRecord

# requests in flight per httpx client: httpcore's pool does work per queued request x
# connection (and polls each idle connection's socket) on every request it assigns, so
# many small pools cost less CPU than a few big ones: 4 took a third less CPU per
# request than 16 at parallelism 64 (bench/bench_runner.py (b)); 1 and 2 no less than 4.
# A client on toolstand's plain transport (transport_client.lean) takes them all.
CLIENT_SHARE = 4

# how long no repetition may have ended before the waiting records are made: answers
# of a wave at 64 in flight arrive ~1 ms apart (run/recorder.py)
RECORD_QUIET_S = 0.004


@dataclass
class Progress:
    total: int  # records to write
    out: IO[str] = field(default_factory=lambda: sys.stderr)
    requests: int = 0  # first-turn requests planned: one per repetition, whatever the arms
    done: int = 0
    failed: int = 0
    transport: int = 0
    t0: float = field(default_factory=time.monotonic)
    _last: float = 0.0

    def tick(self, rec: Mapping[str, Any]) -> None:
        self.done += 1
        if rec.get("transport_error"):
            self.transport += 1
        elif (rec.get("judgement") or {}).get("verdict") == "fail":
            self.failed += 1
        now = time.monotonic()
        if now - self._last >= 0.5 or self.done == self.total:
            self._last = now
            self.out.write(self.line() + ("\n" if not self.out.isatty() else "\r"))
            self.out.flush()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        shared = (
            f"  {self.requests} first-turn requests planned (shared by the feedback arms)"
            if self.requests and self.requests != self.total
            else ""
        )
        return (
            f"[{self.done}/{self.total}] failed {self.failed}  transport errors {self.transport}  "
            f"{rate:.1f}/s  ETA {eta:.0f}s{shared}"
        )


class RateLimiter:
    """At most ``rpm`` request starts a minute, evenly spaced."""

    def __init__(self, rpm: float | None) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            delay = self._next - now
            self._next = max(now, self._next) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


def clients_for(config: Config) -> list[list[httpx.AsyncClient]]:
    """Clients of their own per run: no connection or state is shared between providers."""
    out = []
    for r in config.runs:
        plain = client_is_quick(r)
        share = config.parallelism if plain else CLIENT_SHARE
        n_clients = max(1, -(-config.parallelism // share))
        out.append(
            [client_for(config, r, min(config.parallelism, share)) for _ in range(n_clients)]
        )
    return out


class Work:
    """What the workers of one run share: the queue, the writer and the counts."""

    def __init__(
        self,
        inputs: Inputs,
        run_id: str,
        writer: IndexedWriter,
        todo: list[Repetition],
        records: int,
        progress_out: IO[str] | None,
        on_record: Callable[[AttemptRecord], None] | None,
    ) -> None:
        config = inputs.config
        self.inputs, self.run_id, self.writer, self.on_record = inputs, run_id, writer, on_record
        self.queue: deque[Repetition] = deque(todo)  # taken from the left, no one waits on it
        self.verdicts: Counter[str] = Counter()
        self.progress = (
            Progress(records, progress_out, requests=len(todo))
            if progress_out is not None
            else None
        )
        self.policy = policy_for(config)
        self.limiters = [RateLimiter(r.requests_per_minute) for r in config.runs]
        self.stopped: list[HistoryWriteError] = []  # the write that failed: every worker stops
        self.clients: list[list[httpx.AsyncClient]] = []
        self.targets: list[Target] = []
        self.recorder = Recorder(self.record, at_once=config.parallelism == 1)
        # each (run, case, mode, arm, stream arm)'s plan and turn 1 request, made once
        self.prepared: dict[Hashable, tuple[AttemptPlan, BuiltRequest]] = {}

    def next_item(self) -> Repetition | None:
        if self.stopped:
            return None
        return self.queue.popleft() if self.queue else None

    def record(self, it: Repetition, states: list[AttemptState]) -> None:
        """Write the records of a finished repetition, one per arm, in order; none when
        building one failed (a toolstand bug: said on stderr, counted as crashed)."""
        try:
            records = [record(s) for s in states]
        except Exception as exc:
            _crashed(self, it, exc)
            return
        for rec in records:
            if not self.keep(rec):
                return

    def keep(self, rec: AttemptRecord) -> bool:
        """Write one record and count it; False when the write failed (the run stops)."""
        try:
            self.writer.write(rec)
        except HistoryWriteError as exc:
            self.stopped.append(exc)
            return False
        j = rec["judgement"]  # None exactly when transport_error is set
        self.verdicts["transport_error" if j is None else j["verdict"]] += 1
        if self.progress is not None:
            self.progress.tick(rec)
        if self.on_record is not None:
            self.on_record(rec)
        return True


async def run_workers(
    work: Work, targets: contextlib.AbstractAsyncContextManager[list[Target]]
) -> None:
    """``parallelism`` workers over the queue, with the simulator and clients up meanwhile."""
    config = work.inputs.config
    work.clients = clients_for(config)
    async with targets as made:
        work.targets = made
        recording = asyncio.create_task(
            work.recorder.run(most=config.parallelism, quiet_s=RECORD_QUIET_S)
        )
        try:
            await asyncio.gather(*(_worker(work, i) for i in range(config.parallelism)))
        finally:
            recording.cancel()
            # what finished is on disk, whether the workers ended or were cancelled
            work.recorder.drain()
            # before the simulator stops, as their connections go to it
            for c in (c for per_run in work.clients for c in per_run):
                await c.aclose()


async def _worker(work: Work, slot: int) -> None:
    while (it := work.next_item()) is not None:
        await work.limiters[it.run_index].wait()
        states = await _repetition(work, it, slot)
        if states:
            work.recorder.hand(it, states, last=not work.queue)


async def _repetition(work: Work, it: Repetition, slot: int) -> list[AttemptState]:
    """Every turn of a repetition, one finished state per arm; none when toolstand
    itself failed (said on stderr)."""
    inputs, config = work.inputs, work.inputs.config
    clients = work.clients[it.run_index]
    try:
        return await play_arms(
            work.targets[it.run_index],
            it.case,
            it.mode,
            it.attempt,
            work.run_id,
            contract=inputs.contract,
            config=config,
            system=inputs.system,
            client=clients[slot % len(clients)],
            policy=work.policy,
            arms=it.arms,
            stream=it.stream,
            read_last_later=True,  # judged by the recorder, after the next requests
            prepared=work.prepared,
        )
    except Exception as exc:  # a toolstand bug: say so, keep the run going
        _crashed(work, it, exc)
        return []


def _crashed(work: Work, it: Repetition, exc: Exception) -> None:
    """Nothing of ``it`` is written, so --resume retries these attempts later."""
    config = work.inputs.config
    work.verdicts["crashed"] += len(it.arms)
    named = [a for a in it.arms if a is not None]
    arm = f" feedback {','.join(named)}" if named else ""
    arm += " streamed" if it.stream else ""
    where = f"{config.runs[it.run_index].label} {it.case.id} {it.mode}{arm} #{it.attempt}"
    print(
        f"error: {where}: {type(exc).__name__}: {exc} (not recorded; "
        "please report it; --resume retries it)",
        file=sys.stderr,
    )
