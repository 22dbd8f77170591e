"""Python's cyclic collector waits for the TUI's first frame.

Starting the TUI allocates some 110,000 objects (Textual's modules and stylesheets,
pydantic's schemas, the Cases screen) and the collector walks them over and over on the
way: ~230 gen-0/1 collections and two full ones, a fifth of the CPU time to the first
frame, which find a few thousand cycles. The package's import (``tui/__init__.py``, run
before the app's module imports Textual) holds it; ``ToolstandApp`` releases it once
its first screen is drawn, after freezing what is alive by then (``gc.freeze``: nearly
all of it lives as long as the app, and the few cycles of the start are kept until it
quits). No Textual here.
"""

from __future__ import annotations

import gc

_held = False


def hold_collector() -> None:
    """Stop the cyclic collector until ``release_collector`` (nothing if it is off)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_collector(*, freeze: bool = True) -> None:
    """Start the collector again if ``hold_collector`` stopped it, with the objects alive
    now out of its sight unless ``freeze`` is False; otherwise do nothing."""
    global _held
    if _held:
        _held = False
        if freeze:
            gc.freeze()
        gc.enable()


def collector_held() -> bool:
    return _held
