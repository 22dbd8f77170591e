"""How a history's attempt lines are laid out, learned from one of them (no Textual).

A runner writes every attempt of a file with the same top-level key order. LineShape
records, for that order, where the run id and start time sit after the judgement, so
HistoryIndex can decode just those bytes of each line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

VERDICTS = ("pass", "fail", "error")  # error: a transport failure, no verdict
PASS, FAIL, ERROR, UNJUDGED = 0, 1, 2, 3
NEEDED = ("run_id", "provider", "model", "case_id", "mode", "attempt", "started_at", "elapsed_ms")
# the arms and the case's category: facets, null in a record without them
ARMS = ("stream", "feedback", "category")
# Top-level keys with small values: a run of them decodes cheaply. The rest are "bulky".
SMALL = frozenset(
    {
        *NEEDED,
        *("type", "schema_version", "api", "simulated", "category", "latency_ms", "retries"),
        *("stream", "feedback"),
        *("transport_error", "usage", "cost_usd", "adapter_version", "toolstand_version"),
        *("api_settings", "tool_choice", "offered_tools", "blocked_tools", "user"),
        "request_hash",
    }
)
ATTEMPT = b'{"type":"attempt"'
JPASS, JFAIL, JNULL = b'{"verdict":"pass"', b'{"verdict":"fail"', b"null"


def error_code(err: Any) -> str:
    """``invalid_arguments.pattern`` for a sub-coded error (as the error CSV writes it)."""
    if not isinstance(err, dict):
        return "?"
    code = str(err.get("code"))
    return f"{code}.{err['subcode']}" if err.get("subcode") else code


class LineShape:
    """Where run_id, started_at and the arms sit in the lines of one file, learned from
    one attempt.

    The rest of an attempt line the index reads the way the report does (head before
    ``second_turn``, the judgement before ``errors``: history.read); these two come after
    the judgement, in a run of small keys that is found by its first key's literal
    ``,"key":`` and ends at the next key's, and decoded alone. ``ok`` is False for a
    layout the fast path cannot read (every line of such a file is decoded whole).
    """

    def __init__(self, rec: dict[str, Any]) -> None:
        keys = list(rec)
        self.start = self.end = b""
        self.nkeys = 0
        self.keys: tuple[str, ...] = ()  # the segment's keys, in order
        self.ok = False
        if "judgement" not in keys or not {"run_id", "started_at"} <= set(keys):
            return
        after = keys.index("judgement") + 1
        # an arm before second_turn is in the head the index decodes; one after, here
        head = set(keys[: keys.index("second_turn")]) if "second_turn" in keys else set()
        wanted = {"run_id", "started_at", *(k for k in ARMS if k in rec and k not in head)}
        lo = min(map(keys.index, wanted))
        hi = max(map(keys.index, wanted))
        if lo < after or hi + 1 >= len(keys) or not set(keys[lo : hi + 1]) <= SMALL:
            return  # the segment must follow another key and be followed by one
        self.start = b',"' + keys[lo].encode() + b'":'
        self.end = b',"' + keys[hi + 1].encode() + b'":'
        self.nkeys = hi + 1 - lo
        self.keys = tuple(keys[lo : hi + 1])
        self.ok = True


# A chunk's rows before they become columns (index.py _columns): one tuple a row,
# (offset in the chunk, verdict, error codes, report facts, line number, the values of
# FLAT_KEYS, the row's dict or None); a key absent from the row reads None, but for
# "user", which reads NO_USER (the line is then read whole for it, once per run x case)
FLAT_KEYS = ("run_id", "provider", "model", "case_id", "mode", "attempt", "started_at",
             "elapsed_ms", *ARMS, "user")  # fmt: skip
NO_USER = object()
FLAT_AT = {k: 5 + i for i, k in enumerate(FLAT_KEYS)}  # where a key's value sits


def flat_of(row: Sequence[Any]) -> tuple[Any, ...]:
    """The flat tuple of a row ``(offset, verdict, errors, dict, facts, line)``."""
    d = row[3]
    get = d.get
    return (
        row[0], row[1], row[2], row[4], row[5],
        *map(get, FLAT_KEYS[:-1]), get("user", NO_USER), d,
    )  # fmt: skip


def flat_row(rec: Mapping[str, Any]) -> dict[str, Any]:
    """A row dict with every NEEDED key, its verdict and error codes, from a decoded attempt."""
    d = {k: rec.get(k) for k in (*NEEDED, *ARMS)}
    if "user" in rec:  # else (cut off by decode_summary) read whole when first needed
        d["user"] = rec["user"]
    te = rec.get("transport_error")
    j = rec.get("judgement")
    if isinstance(te, dict):
        d["_v"], d["_e"] = ERROR, (str(te.get("code")),)
    elif isinstance(j, dict):
        codes = tuple(dict.fromkeys(error_code(x) for x in j.get("errors") or []))
        d["_v"], d["_e"] = (PASS if j.get("verdict") == "pass" else FAIL), codes
    else:
        d["_v"], d["_e"] = UNJUDGED, ()
    return d
