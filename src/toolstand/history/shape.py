"""How a history's attempt lines are laid out, learned from one of them (no Textual).

A runner writes every attempt of a file with the same top-level key order. LineShape
records, for that order, which runs of small keys ("segments") hold the summary fields
and where the judgement sits, so HistoryIndex can decode just those bytes of each line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VERDICTS = ("pass", "fail", "error")  # error: a transport failure, no verdict
PASS, FAIL, ERROR, UNJUDGED = 0, 1, 2, 3
NEEDED = ("run_id", "provider", "model", "case_id", "mode", "attempt", "started_at", "elapsed_ms")
# Top-level keys with small values: a run of them decodes cheaply. The rest are "bulky".
SMALL = frozenset(
    {
        *NEEDED,
        *("type", "schema_version", "api", "simulated", "category", "latency_ms", "retries"),
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
    """Where the needed keys sit in the lines of one file, learned from one attempt.

    Segments are runs of small top-level keys; each is found by its first key's literal
    ``,"key":`` and ends at the next key's. Only the segments holding NEEDED keys are
    decoded on every line; the user message's only for a new run x case.
    """

    def __init__(self, rec: dict[str, Any]) -> None:
        keys = list(rec)
        self.segments: list[tuple[bytes | None, bytes | None, tuple[str, ...]]] = []
        self.seg_of: dict[str, int] = {}
        self.judgement_from = -1  # the segment whose end the judgement is searched from
        self.judgement_guard: bytes | None = None
        self.errors_end = b""
        i = 0
        while i < len(keys):
            if keys[i] not in SMALL:
                if keys[i] == "judgement":
                    self._judgement(keys, i, rec)
                i += 1
                continue
            j = i
            while j < len(keys) and keys[j] in SMALL:
                j += 1
            seg = tuple(keys[i:j])
            start = None if i == 0 else b',"' + keys[i].encode() + b'":'
            end = b',"' + keys[j].encode() + b'":' if j < len(keys) else None
            for k in seg:
                self.seg_of[k] = len(self.segments)
            self.segments.append((start, end, seg))
            i = j
        wanted = {*NEEDED, "transport_error"}
        self.always = sorted({self.seg_of[k] for k in wanted if k in self.seg_of})
        # per decoded segment: start literal, end literal, key count, judgement after it
        self.plan = [
            (self.segments[n][0], self.segments[n][1], len(self.segments[n][2]),
             n == self.judgement_from)
            for n in self.always
        ]  # fmt: skip
        self.at_of = {k: self.always.index(n) for k, n in self.seg_of.items() if n in self.always}
        self.te_at = 3 + self.at_of.get("transport_error", 0)
        self.judgement_lit = self.judgement_guard or b',"judgement":'
        self.ok = (
            bool(self.segments)
            and self.segments[0][0] is None
            and wanted <= self.seg_of.keys()
            and self.judgement_from in self.always
            and bool(self.errors_end)
        )

    def _judgement(self, keys: list[str], i: int, rec: dict[str, Any]) -> None:
        j = rec.get("judgement")
        jkeys = list(j) if isinstance(j, dict) else []
        if not jkeys or jkeys[0] != "verdict" or "errors" not in jkeys:
            return
        k = jkeys.index("errors")
        self.errors_end = b"]}" if k == len(jkeys) - 1 else b'],"' + jkeys[k + 1].encode() + b'":'
        self.judgement_from = len(self.segments) - 1
        if keys[i - 1] == "second_turn":
            # a second turn holds a judgement of its own: only a null one is passed safely
            self.judgement_guard = b',"second_turn":null,"judgement":'


def flat_row(rec: Mapping[str, Any]) -> dict[str, Any]:
    """A row dict with every NEEDED key, its verdict and error codes, from a decoded attempt."""
    d = {k: rec.get(k) for k in NEEDED}
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
