"""The stream faults a server says it put in its streams, beside the parity they cost.

A server may name, in the response header ``x-toolstand-sim-stream-faults`` (comma
separated), the fault classes it put into a streamed answer; the embedded simulator does
(sim-streambug's server bug classes, providers.md S6). The stream parity block then lists
every class declared in the pair's streamed attempts: how many carried it, how many of
those read differently from their non-streamed pair (another normalized signature) and
how many failed only streamed. A class that never reads differently is one a correct
client takes in its stride (framing, ids, finish reasons); one that does is a server bug
the parity list shows by case.

The header is in the records' first-turn responses, not in the report's columns: the
history's lines that hold its name (a byte search each) are decoded when, and only when,
the report has a parity block. A line that does not read as such a record is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import orjson

from toolstand.history.read import bounded_lines

HEADER = "x-toolstand-sim-stream-faults"
_NEEDLE = HEADER.encode()

# (provider, model, mode, feedback, case_id, attempt) of a streamed attempt
Key = tuple[str, str, str, str | None, str, int]
Declared = dict[Key, list[tuple[str | None, tuple[str, ...]]]]  # -> [(run_identity, faults)]


@dataclass
class FaultRow:
    """One declared fault class over a pair's streamed attempts."""

    fault: str
    streams: int = 0
    differing: int = 0  # its streams whose signature differs from the non-streamed pair's
    failed_only_streamed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # fault, streams, differing, failed_only_streamed


def read(files: Iterable[str]) -> Declared:
    """The declared faults of every streamed attempt in ``files`` that carries the header,
    line by line as every reader takes them (history.read.bounded_lines: a line over the
    cap ends the file). A file that cannot be read declares nothing, and the warnings are
    the report's own, already given."""
    out: Declared = {}
    for name in files:
        try:
            with open(name, "rb") as fh:
                for line in bounded_lines(fh, name, []):
                    if _NEEDLE in line:
                        _add(out, line)
        except OSError:
            continue
    return out


def _add(out: Declared, line: bytes) -> None:
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return
    if not isinstance(rec, dict) or rec.get("type") != "attempt" or rec.get("stream") is not True:
        return
    response = rec.get("response")
    headers = response.get("headers") if isinstance(response, dict) else None
    value = headers.get(HEADER) if isinstance(headers, dict) else None
    names = (rec.get("provider"), rec.get("model"), rec.get("mode"), rec.get("case_id"))
    feedback, number, ident = rec.get("feedback"), rec.get("attempt"), rec.get("run_identity")
    if not isinstance(value, str) or not all(isinstance(n, str) for n in names):
        return
    if type(number) is not int or not (feedback is None or isinstance(feedback, str)):
        return
    faults = tuple(sorted({f.strip() for f in value.split(",") if f.strip()}))
    key = (str(names[0]), str(names[1]), str(names[2]), feedback, str(names[3]), number)
    out.setdefault(key, []).append((ident if isinstance(ident, str) else None, faults))


def rows(
    declared: Declared,
    group: tuple[str, str, str, str | None],
    identity: str | None,
    plain: Mapping[tuple[str, int], tuple[bool, Any]],
    streamed: Mapping[tuple[str, int], tuple[bool, Any]],
) -> list[FaultRow]:
    """Per declared class, over the pairs of one parity block (``plain`` and ``streamed``:
    (case id, attempt) -> (passed, signature)); classes that read differently first."""
    found: dict[str, FaultRow] = {}
    for cid, number in sorted(plain.keys() & streamed.keys()):
        faults = _faults(declared.get((*group, cid, number)), identity)
        (x_passed, x_sig), (y_passed, y_sig) = plain[(cid, number)], streamed[(cid, number)]
        for fault in faults:
            row = found.get(fault)
            if row is None:
                row = found[fault] = FaultRow(fault)
            row.streams += 1
            row.differing += x_sig != y_sig
            row.failed_only_streamed += x_passed and not y_passed
    return sorted(found.values(), key=lambda r: (-r.differing, -r.streams, r.fault))


def _faults(
    entries: list[tuple[str | None, tuple[str, ...]]] | None, identity: str | None
) -> tuple[str, ...]:
    """The faults of the attempt of this run: the one whose identity matches, else (an
    older record without one) the only one there is."""
    if not entries:
        return ()
    for ident, faults in entries:
        if ident is not None and ident == identity:
            return faults
    unnamed = [faults for ident, faults in entries if ident is None]
    return unnamed[0] if len(unnamed) == 1 else ()


def lines(found: list[FaultRow]) -> list[str]:
    """The text report's table of declared faults, under the parity list."""
    if not found:
        return []
    out = [
        f"  declared stream faults ({HEADER})",
        "    (one stream may carry several: a class none of whose streams read differently",
        "    is one this client reads right; the parity list above shows the cases)",
        f"    {'class':<24} {'streams':>7} {'read differently':>17} {'failed only streamed':>21}",
    ]
    for r in found:
        out.append(
            f"    {r.fault[:24]:<24} {r.streams:>7} {r.differing:>17} {r.failed_only_streamed:>21}"
        )
    return out
