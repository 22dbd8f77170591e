"""The stream faults a server says it put in its streams, beside the parity they cost.

A server may name, in the response header ``x-toolstand-sim-stream-faults`` (comma
separated), the fault classes it put into a streamed answer; the embedded simulator does
(sim-streambug's server bug classes, providers.md S6). The stream parity block then lists
every class declared in the pair's streamed attempts: how many carried it, how many of
those read differently from their non-streamed pair (another normalized signature) and
how many failed only streamed. A class that never reads differently is one a correct
client takes in its stride (framing, ids, finish reasons); one that does is a server bug
the parity list shows by case.

A transient class (``error_inband``, ``no_terminal``) fails the try that carries it, and
the transport retries: the record keeps each retried try's headers in ``tries[]``
(transport.Try), so what the server declared there is counted too. Such a class is
declared for the attempt (``streams``) and counted under ``retried``; ``differing`` and
``failed_only_streamed`` count only the classes of the final try, the stream whose
reading was judged: a retried stream was read by no one, it cost a retry.

The header is in the records' first turns (the response and the tries), not in the
report's columns: the history's lines that hold its name (a byte search each) are
decoded when, and only when, the report has a parity block. A line that does not read
as such a record is skipped.
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
Faults = tuple[str, ...]
# -> [(run_identity, the final try's faults, those of the tries it retried)]
Entry = tuple[str | None, Faults, Faults]
Declared = dict[Key, list[Entry]]


@dataclass
class FaultRow:
    """One declared fault class over a pair's streamed attempts."""

    fault: str
    streams: int = 0
    differing: int = 0  # its streams whose signature differs from the non-streamed pair's
    failed_only_streamed: int = 0
    retried: int = 0  # its streams where it was on a try the transport retried

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # fault, streams, differing, failed_only_streamed, retried


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
    value = _declared(rec.get("response"))
    names = (rec.get("provider"), rec.get("model"), rec.get("mode"), rec.get("case_id"))
    feedback, number, ident = rec.get("feedback"), rec.get("attempt"), rec.get("run_identity")
    tries = rec.get("tries")
    retried = [_declared(t) for t in tries[:-1]] if isinstance(tries, list) else []
    said = [v for v in retried if v is not None]
    if (value is None and not said) or not all(isinstance(n, str) for n in names):
        return
    if type(number) is not int or not (feedback is None or isinstance(feedback, str)):
        return
    final = _names(value or "")
    earlier = tuple(sorted({f for v in said for f in _names(v)}))
    key = (str(names[0]), str(names[1]), str(names[2]), feedback, str(names[3]), number)
    out.setdefault(key, []).append((ident if isinstance(ident, str) else None, final, earlier))


def _declared(answer: Any) -> str | None:
    """The header's value in a response or a try, if it is there as a string."""
    headers = answer.get("headers") if isinstance(answer, dict) else None
    value = headers.get(HEADER) if isinstance(headers, dict) else None
    return value if isinstance(value, str) else None


def _names(value: str) -> Faults:
    return tuple(sorted({f.strip() for f in value.split(",") if f.strip()}))


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
        final, earlier = _faults(declared.get((*group, cid, number)), identity)
        (x_passed, x_sig), (y_passed, y_sig) = plain[(cid, number)], streamed[(cid, number)]
        for fault in sorted({*final, *earlier}):
            row = found.get(fault)
            if row is None:
                row = found[fault] = FaultRow(fault)
            row.streams += 1
            row.retried += fault in earlier
            if fault in final:  # the stream that was judged carried it
                row.differing += x_sig != y_sig
                row.failed_only_streamed += x_passed and not y_passed
    return sorted(found.values(), key=lambda r: (-r.differing, -r.streams, r.fault))


def _faults(entries: list[Entry] | None, identity: str | None) -> tuple[Faults, Faults]:
    """The faults of the attempt of this run (its final try's, its retried tries'): the
    one whose identity matches, else (an older record without one) the only one there is."""
    if not entries:
        return (), ()
    for ident, final, earlier in entries:
        if ident is not None and ident == identity:
            return final, earlier
    unnamed = [(final, earlier) for ident, final, earlier in entries if ident is None]
    return unnamed[0] if len(unnamed) == 1 else ((), ())


def lines(found: list[FaultRow]) -> list[str]:
    """The text report's table of declared faults, under the parity list."""
    if not found:
        return []
    out = [
        f"  declared stream faults ({HEADER})",
        "    (one stream may carry several: a class none of whose streams read differently",
        "    is one this client reads right; the parity list above shows the cases)",
        "    (retried: on a try the transport retried, whose stream nobody read)",
        f"    {'class':<24} {'streams':>7} {'read differently':>17} {'failed only streamed':>21}"
        f" {'retried':>8}",
    ]
    for r in found:
        out.append(
            f"    {r.fault[:24]:<24} {r.streams:>7} {r.differing:>17} {r.failed_only_streamed:>21}"
            f" {r.retried:>8}"
        )
    return out
