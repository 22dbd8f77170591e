"""The Run screen's status line: what the panels show, or a request's running clock."""

from __future__ import annotations

import time

from textual.timer import Timer

from toolstand.tui.widgets.status_line import StatusLine

TICK_S = 0.1  # how often the clock of a request in flight repaints


class RunStatus(StatusLine):
    """One line of text; ``-busy`` while a request is in flight, ``-failed`` after a problem.

    The clock's ticks are not kept in the line's log of messages."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._t0 = 0.0
        self._what = ""
        self._ticker: Timer | None = None

    def say(self, text: str, state: str = "") -> None:
        """Show ``text``; ``state`` is "", "busy" or "failed"."""
        self.update(text, keep=state != "busy")
        self.set_class(state == "busy", "-busy")
        self.set_class(state == "failed", "-failed")

    def start(self, what: str) -> None:
        """Count the seconds ``what`` has been waiting, until ``stop``."""
        self._t0, self._what = time.monotonic(), what
        self._tick()
        self._ticker = self.set_interval(TICK_S, self._tick)

    def _tick(self) -> None:
        elapsed = time.monotonic() - self._t0
        self.say(f"{self._what} · waiting {elapsed:.1f} s · Esc cancels", "busy")

    def stop(self) -> float:
        """Stop the clock; the seconds since ``start``."""
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        return time.monotonic() - self._t0
