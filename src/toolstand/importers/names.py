"""Names the wire APIs accept for tools whose own names they refuse, kept distinct.

Renaming ``math.factorial`` to ``math_factorial`` is safe only while no other tool of
the same list is called that already, and two names longer than 64 characters must not
be cut to the same 64: the second gets a ``_2`` suffix (``_3`` ...), within 64.
"""

from __future__ import annotations


def distinct(base: str, taken: set[str]) -> str:
    """``base`` (already wire-safe, at most 64 characters), or it with the first free
    ``_N`` suffix, cut to stay within 64 characters."""
    out, n = base, 1
    while out in taken:
        n += 1
        out = f"{base[: 64 - len(str(n)) - 1]}_{n}"
    return out
