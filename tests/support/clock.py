"""Virtual time for the transport: a retry test counts tries, not how busy the machine is.

``virtual_time(monkeypatch)`` gives ``toolstand.transport.exchange`` a clock of its own
per asyncio task, moved only by the waits the retry policy asks for; those waits return
at once. Every request still goes over the real loopback socket, so what a test checks
(how many tries fit a budget, which waits were asked for) no longer depends on how long
a loaded machine took to answer.
"""

from __future__ import annotations

import asyncio

import pytest

from toolstand import transport


class VirtualTime:
    """Each task's clock starts at 0 and moves by the waits it sleeps, nothing else."""

    def __init__(self) -> None:
        self._now: dict[asyncio.Task[object] | None, float] = {}
        self.waits: list[float] = []

    def clock(self) -> float:
        return self._now.get(asyncio.current_task(), 0.0)

    async def sleep(self, seconds: float) -> None:
        task = asyncio.current_task()
        self._now[task] = self._now.get(task, 0.0) + seconds
        self.waits.append(seconds)
        await asyncio.sleep(0)  # still a point where other attempts run


def virtual_time(monkeypatch: pytest.MonkeyPatch) -> VirtualTime:
    """Patch ``exchange``'s default clock and sleep for the length of the test."""
    vt = VirtualTime()
    defaults = transport.exchange.__kwdefaults__
    assert defaults is not None and {"clock", "sleep"} <= set(defaults)
    monkeypatch.setitem(defaults, "clock", vt.clock)
    monkeypatch.setitem(defaults, "sleep", vt.sleep)
    return vt
