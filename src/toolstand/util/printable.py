"""Showing outside text on a terminal with its control characters made visible.

Every string that came from a provider, a history, a case or a config can hold terminal
escapes (``\\x1b]0;title\\x07`` sets a window title, ``\\x1b[2J`` clears the screen). Before
such a string is printed or drawn, each control character (Unicode category Cc: C0, DEL and
C1, where ``\\x9b`` is a one-byte CSI) is replaced by its ``\\xNN`` spelling, so what the
user sees is what the record holds, and the terminal is never driven by it.
"""

from __future__ import annotations

import re

__all__ = ["visible", "visible_lines"]

# C0 but tab and newline, DEL, C1: the characters a terminal may act on
_CONTROL_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# the same with tab and newline, for text shown on one line
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _spell(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def visible(text: str) -> str:
    """``text`` for one line: every control character, newline and tab included, as ``\\xNN``."""
    if text.isprintable():  # the common case, and cheap
        return text
    return _CONTROL.sub(_spell, text)


def visible_lines(text: str) -> str:
    """``text`` for a multi-line view: newlines and tabs kept, every other control
    character as ``\\xNN``."""
    return _CONTROL_LINES.sub(_spell, text)
