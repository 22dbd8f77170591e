"""A run's records, built and written after the requests that are ready to go out.

With many requests in flight against a slow provider, the answers of a wave arrive
together and the event loop serves them one after another: whatever a worker does
between its answer and its next request delays every answer queued behind it, and
those delays stay in the run (each worker keeps its place in the wave). So a worker
whose repetition is over hands its finished states here and takes its next job at
once; the record (built and scrubbed, appended with its index row, the progress line,
``on_record``) is made once no worker has handed anything over for ``quiet_s``, that is
once the wave's answers are in and its requests have gone out, or when a wave's worth
is waiting. Records keep the order in which their repetitions ended, the arms of one
side by side (design.md, History). With one request in flight there is nothing to let
through first: the record is made at once; so it is once no repetition is left to start
(the last wave's records are made as its answers come in, not all after the last).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable

from toolstand.attempt.plan import AttemptState
from toolstand.run.matrix import Repetition

Finished = tuple[Repetition, list[AttemptState]]


class Recorder:
    """The queue of finished repetitions and the task that records them in order."""

    def __init__(self, write: Callable[[Repetition, list[AttemptState]], object], *, at_once: bool):
        self._write = write
        self._at_once = at_once
        self._queue: deque[Finished] = deque()
        self._last = 0.0  # the loop's time of the last hand-off
        self._most = 1  # run's ``most``
        self._wake = asyncio.Event()
        self.failed: BaseException | None = None  # what a record raised (a bug)

    def hand(self, item: Repetition, states: list[AttemptState], *, last: bool = False) -> None:
        """A repetition whose last turn is done; recorded at once with ``at_once``, and
        with ``last`` (no repetition is left to start: no request of a next one waits
        behind the record), after those waiting before it. Raises what recording raised
        before, so the worker stops as it would have."""
        if self.failed is not None:
            raise self.failed
        if self._at_once:
            self._write(item, states)
            return
        self._queue.append((item, states))
        if last:
            self._flush()
            return
        self._last = asyncio.get_running_loop().time()
        if len(self._queue) in (1, self._most):  # something to record, or too much
            self._wake.set()

    @property
    def backlog(self) -> int:
        return len(self._queue)

    async def run(self, most: int, quiet_s: float) -> None:
        """Record what is handed over, one repetition a turn of the loop, once no worker
        has handed anything over for ``quiet_s``; ``most``: records waiting past this
        many go out even then (a run that never pauses still writes as it goes)."""
        loop = asyncio.get_running_loop()
        self._most = most
        while True:
            if not self._queue:
                self._wake.clear()
                await self._wake.wait()
                continue  # a last hand-off may have recorded it meanwhile
            wait = self._last + quiet_s - loop.time()
            if wait > 0 and len(self._queue) < most:  # workers are busy: after them
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._wake.wait()  # set when the backlog reaches most
                continue
            try:
                self._write(*self._queue.popleft())
            except BaseException as exc:  # handed to the workers and to drain
                self.failed = exc
                return
            await asyncio.sleep(0)

    def drain(self) -> None:
        """Record everything still waiting, now (the workers are done or cancelled);
        raises what recording raised, if it did."""
        if self.failed is not None:
            raise self.failed
        self._flush()

    def _flush(self) -> None:
        while self._queue:
            try:
                self._write(*self._queue.popleft())
            except BaseException as exc:  # what was handed after it stays unrecorded
                self.failed = exc
                raise
