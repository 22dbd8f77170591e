"""Reading JSONL run histories: headers and attempts, line by line, never fatal.

A history is append-only and may end in a torn line (a killed run) or hold a damaged
line; such a line is skipped and a HistoryWarning naming the file and line is collected,
so one bad byte never hides a night of results.

Reading levels, because decoding whole lines is what makes a 1M-attempt report slow:

* ``full``: every key of every line;
* ``summary``: an attempt without its bulky tail (request, response, decision, ...):
  the line is cut just before the top-level ``,"request":`` and closed;
* ``metrics``: only what the metrics need: the keys before ``second_turn``, the
  judgement without ``errors``/``calls``, and the second turn's small keys
  (see split_metrics);
* ``metrics+errors``: ``metrics`` for passing attempts, ``summary`` for the others (what
  the error CSV and JUnit need).

They rely on this key order in the attempt lines the runner writes (in_key_order
puts a record in it):

1. ``type`` and METRIC_KEYS, in any order;
2. ``second_turn``, its own keys ordered transport_error, judgement, elapsed_ms,
   retries, usage, then tool_results, request and the rest;
3. ``judgement``, its own keys ordered verdict, metrics, unsafe, flags, errors, calls;
4. the other small keys (run_id, category, started_at, offered_tools, ...), any order;
5. ``request``, then everything bulky (response, decision, ...).

A line that does not honour the order, or whose prefix lacks a key it should hold, is
decoded another way: the order is a speed contract, never a correctness one.

Why slicing is sound: in compact JSON ``,"name":`` can only be a real key (inside a
string the quote would be escaped), and closing a prefix with one ``}`` parses only
when the cut is at the top level (``}}`` only at depth 2); each decoder also checks
that the object it cut is the one it meant.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple, TypeVar

import orjson

from toolstand.history.fields import attempt_problem, header_problem, kind_word
from toolstand.util.printable import visible

# Top-level keys written before "second_turn", in the order in_key_order writes them:
# all the metrics need besides the two turns.
_HEAD_ORDER: tuple[str, ...] = (
    *("type", "provider", "model", "api", "mode", "case_id", "attempt", "simulated"),
    *("elapsed_ms", "retries", "usage", "cost_usd", "transport_error"),
    # with repair turns only (so not required of a head): the arm and its summary
    *("feedback", "repair"),
    # the stream arm and a streamed turn 1's first output and first call (not required:
    # histories written before streaming have none)
    *("stream", "first_token_ms", "first_call_ms"),
    # the run's identity, its group's part (not required: older histories have none)
    "run_identity",
)
METRIC_KEYS: frozenset[str] = frozenset(_HEAD_ORDER) - {
    *("feedback", "repair", "stream", "first_token_ms", "first_call_ms", "run_identity")
}
# Keys a summary-level record must hold (all before the top-level "request").
SUMMARY_KEYS: frozenset[str] = METRIC_KEYS | {"run_id", "judgement", "second_turn"}
SECOND_TURN_SUMMARY_KEYS: frozenset[str] = frozenset(("transport_error", "judgement"))

_REQUEST = b',"request":'
JUDGEMENT = b',"judgement":'
ERRORS = b',"errors":'
_CALLS = b',"calls":'
SECOND = b',"second_turn":'
TOOL_RESULTS = b',"tool_results":'


def second_keys(buf: bytes | bytearray, q: int, nl: int) -> tuple[dict[str, Any], int] | None:
    """A second turn's small keys (those before tool_results, from ``q``: the comma
    before ``"second_turn"``) and where they end, or None where the line does not read
    that way (the cold index's fast path and its scan both read a second turn so)."""
    r = buf.find(TOOL_RESULTS, q, nl)
    if r < 0:
        return None
    try:
        st = orjson.loads(b"{" + buf[q + 1 : r] + b"}}").get("second_turn")
    except orjson.JSONDecodeError:
        return None
    if type(st) is not dict or not st.keys() >= SECOND_TURN_SUMMARY_KEYS:
        return None
    return st, r


SECOND_NULL = b',"second_turn":null,"judgement":'
_RUN_ID = b',"run_id":"'
_CATEGORY = b',"category":'
_MAX_CUTS = 8  # a model may name an argument "request"; past a few, decode the line whole
RECORD_TYPES = ("run", "attempt")

Level = Literal["full", "summary", "metrics", "metrics+errors"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class HistoryWarning:
    """A line that was skipped, or something about a file the reader had to work around."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        """One line, control characters spelled out: a message may quote the history."""
        return visible(
            f"{self.path}:{self.line}: {self.message}"
            if self.line
            else f"{self.path}: {self.message}"
        )


# verdict_normalized before errors: the fast readers cut the judgement there
_JUDGEMENT_ORDER = (
    "verdict",
    "metrics",
    "unsafe",
    "flags",
    "verdict_normalized",
    "errors",
    "calls",
)
_SECOND_ORDER = ("transport_error", "judgement", "elapsed_ms", "retries", "usage")
_BULKY = ("tool_results", "request", "response", "decision", "repair_turns")


def _ordered(d: dict[str, Any], first: Iterable[str], last: Iterable[str] = ()) -> dict[str, Any]:
    head = [k for k in first if k in d]
    tail = [k for k in last if k in d]
    rest = [k for k in d if k not in head and k not in tail]
    return {k: d[k] for k in (*head, *rest, *tail)}


def in_key_order(rec: dict[str, Any]) -> dict[str, Any]:
    """The same attempt record with its keys in the order the fast readers want (see
    the module docstring); the history's writers write what this returns. Keys and
    values are untouched."""
    if rec.get("type") != "attempt":
        return rec
    out = {k: rec[k] for k in _HEAD_ORDER if k in rec}
    if "second_turn" in rec:  # a key the record lacks is never added
        st = rec["second_turn"]
        out["second_turn"] = _ordered(st, _SECOND_ORDER, _BULKY) if isinstance(st, dict) else st
    if "judgement" in rec:
        j = rec["judgement"]
        out["judgement"] = _ordered(j, _JUDGEMENT_ORDER) if isinstance(j, dict) else j
    for k, v in rec.items():
        if k not in out and k not in _BULKY:
            out[k] = v
    out.update((k, rec[k]) for k in _BULKY if k in rec)
    return out


class Entry(NamedTuple):
    """One decoded line: its 1-based number, its byte offset and the record."""

    line: int
    offset: int
    record: dict[str, Any]


def _summary_ok(d: Any) -> bool:
    if type(d) is not dict or d.get("type") != "attempt" or not d.keys() >= SUMMARY_KEYS:
        return False
    st = d["second_turn"]
    return st is None or (isinstance(st, dict) and st.keys() >= SECOND_TURN_SUMMARY_KEYS)


def decode_summary(line: bytes) -> dict[str, Any]:
    """An attempt line up to its top-level ``request``; any other line whole.

    Raises orjson.JSONDecodeError for a line that is not JSON.
    """
    loads = orjson.loads
    pos = line.find(_REQUEST)
    cuts = 0
    while pos != -1 and cuts < _MAX_CUTS:
        try:
            d = loads(line[:pos] + b"}")
        except orjson.JSONDecodeError:
            # a nested "request" (the second turn's): the top-level one is further on
            pos = line.find(_REQUEST, pos + 1)
            cuts += 1
            continue
        if _summary_ok(d):
            return d
        break  # the top-level request came before a summary key: out of order
    return loads(line)


# (head, judgement, second_turn): head holds type and METRIC_KEYS (and whatever else came
# before second_turn); judgement is the JSON of {verdict, metrics, unsafe, flags}, None
# when null; second_turn its small keys only. A plain tuple: a NamedTuple costs a Python
# call per line.
MetricParts = tuple[dict[str, Any], bytes | None, dict[str, Any] | None]
# key sequences already checked against METRIC_KEYS: a runner writes one shape, so the
# subset test runs once per shape instead of once per line
_good_heads: set[tuple[str, ...]] = set()


def _head_ok(head: Any) -> bool:
    if head.get("type") != "attempt" or not head.keys() >= METRIC_KEYS:
        return False
    if len(_good_heads) < 64:
        _good_heads.add(tuple(head))
    return True


def split_metrics(
    line: bytes, *, with_errors: bool = False, run_id: bool = False
) -> MetricParts | None:
    """Split an attempt line into what the metrics need, or None when the line does not
    follow the key order (then decode it with decode_summary or orjson).

    The judgement comes back as raw bytes so that a caller can cache its decoding: across
    repetitions most judgements are byte-identical. ``with_errors`` keeps its ``errors``
    too (cut before ``calls`` instead), for the error table. A line without a run_id
    string is not split; ``run_id`` puts its value in the head too (the metrics only
    need to know it is there). Never raises.
    """
    loads = orjson.loads
    q = line.find(SECOND)
    if q == -1:
        return None
    try:
        head = loads(line[:q] + b"}")
    except orjson.JSONDecodeError:
        return None
    if type(head) is not dict or (tuple(head) not in _good_heads and not _head_ok(head)):
        return None
    st: dict[str, Any] | None = None
    if line.startswith(SECOND_NULL, q):
        v = q + len(SECOND_NULL)
    else:
        r = line.find(TOOL_RESULTS, q)
        if r == -1:
            return None
        try:
            st = loads(b"{" + line[q + 1 : r] + b"}}").get("second_turn")
        except orjson.JSONDecodeError:
            return None
        if not isinstance(st, dict) or not st.keys() >= SECOND_TURN_SUMMARY_KEYS:
            return None
        j = line.find(JUDGEMENT, r)
        if j == -1:
            return None
        v = j + len(JUDGEMENT)
    if line.startswith(b"null", v):
        return (head, None, st) if _has_run_id(line, v, head, run_id) else None
    e = line.find(_CALLS if with_errors else ERRORS, v)
    if e == -1:
        return None
    jblob = line[v:e] + b"}"
    # verdict first and metrics before errors, else the cut may lie in other keys
    if not jblob.startswith(b'{"verdict":') or b',"metrics":{' not in jblob:
        return None
    if with_errors and b',"errors":[' not in jblob:
        return None
    return (head, jblob, st) if _has_run_id(line, e, head, run_id) else None


def _has_run_id(line: bytes, start: int, head: dict[str, Any], keep: bool) -> bool:
    """Whether the line has a run_id string: in ``head``, or after ``start`` (where the
    runner writes it, after the judgement), then with ``keep`` its value put in ``head``.
    False sends the line the careful way, where attempt_problem names what is missing.
    (A tool argument named run_id could stand in for a missing one: the line is then
    read as if it had one.)"""
    if "run_id" in head:
        return type(head["run_id"]) is str
    r = line.find(_RUN_ID, start)
    if r == -1:
        return False
    if not keep:
        return True
    s = r + len(_RUN_ID)
    q = line.find(b'"', s)
    value = line[s:q]
    if q == -1 or b"\\" in value:
        return False  # an escape in a run id: let orjson read it
    try:
        text = value.decode()
    except UnicodeDecodeError:
        return False
    if not text.isprintable():
        return False  # raw control characters: not JSON, and orjson says so
    head["run_id"] = text
    # the runner writes the case's category next: a value that is not a string or null
    # (fields.arms_problem) sends the line the careful way, which names it
    c = q + 1 + len(_CATEGORY)
    return not line.startswith(_CATEGORY, q + 1) or line[c : c + 1] in b'"n'


def decode_metrics(line: bytes) -> dict[str, Any]:
    """An attempt with only what the metrics need (no judgement errors or calls).

    Falls back to decode_summary for a line out of order. Raises
    orjson.JSONDecodeError for a line that is not JSON.
    """
    parts = split_metrics(line, run_id=True)
    if parts is None:
        return decode_summary(line)
    d, blob, st = parts
    d["judgement"] = None if blob is None else orjson.loads(blob)
    d["second_turn"] = st
    return d


def decode_metrics_errors(line: bytes) -> dict[str, Any]:
    """decode_metrics, but the summary (with judgement errors) for an attempt that did not
    pass or whose second turn failed in transport."""
    d = decode_metrics(line)
    j = d.get("judgement")
    if "errors" in (j or {}):
        return d
    st = d.get("second_turn")
    if (j is not None and j.get("verdict") != "pass") or (st and st.get("transport_error")):
        return decode_summary(line)
    return d


DECODERS: dict[str, Callable[[bytes], Any]] = {
    "full": orjson.loads,
    "summary": decode_summary,
    "metrics": decode_metrics,
    "metrics+errors": decode_metrics_errors,
}


def scan_with(
    path: str | os.PathLike[str],
    decode: Callable[[bytes], T],
    warnings: list[HistoryWarning] | None = None,
) -> Iterator[tuple[int, int, T | dict[str, Any]]]:
    """(line number, byte offset, decoded) for every usable line of one file.

    ``decode`` gets each line ending in ``}`` and a newline, and raises ValueError (orjson's
    error included) for a malformed one; other lines (a torn tail, stray text) are
    decoded whole. A dict whose type is not run or attempt, or an attempt without a field
    the stand needs (attempt_problem), is skipped with a warning naming its line.
    Raises OSError when the file itself cannot be opened.
    """
    name = os.fspath(path)
    sink: list[HistoryWarning] = warnings if warnings is not None else []
    offset = 0
    with open(name, "rb", buffering=1 << 20) as fh:
        for number, raw in enumerate(bounded_lines(fh, name, sink), 1):
            start = offset
            offset += len(raw)
            rec = read_line(name, number, raw, decode, sink)
            if rec is not None:
                yield number, start, rec


# the longest line any reader takes in: past it a file (``/dev/zero``, a line without
# newlines) is not read on, so memory stays bounded
MAX_LINE_BYTES = 1 << 30


def too_long(name: str, number: int, limit: int) -> HistoryWarning:
    """The warning for a line over ``limit`` bytes, after which a reader stops."""
    return HistoryWarning(
        name, number, f"line longer than {limit} bytes; it and the rest of the file not read"
    )


def bounded_lines(
    fh: IO[bytes],
    name: str,
    sink: list[HistoryWarning],
    first: int = 1,
    limit: int | None = None,
) -> Iterator[bytes]:
    """The raw lines of ``fh`` from where it stands, ``first`` being the first one's
    number, each at most ``limit`` bytes (MAX_LINE_BYTES); at a longer one a too_long
    warning goes to ``sink`` and the reading stops."""
    cap = MAX_LINE_BYTES if limit is None else limit
    readline = fh.readline
    number = first
    while raw := readline(cap + 1):
        if len(raw) > cap and not raw.endswith(b"\n"):
            sink.append(too_long(name, number, cap))
            return
        yield raw
        number += 1


def read_line(
    name: str,
    number: int,
    raw: bytes,
    decode: Callable[[bytes], T],
    sink: list[HistoryWarning],
) -> T | dict[str, Any] | None:
    """scan_with's reading of one raw line (newline included, if it has one): the
    decoded line, or None for a line it skips (with its warning in ``sink``)."""
    rec: Any
    if raw.endswith(b"}\n"):
        try:
            rec = decode(raw)
        except ValueError as exc:
            sink.append(HistoryWarning(name, number, f"malformed line skipped: {exc}"))
            return None
    else:
        text = raw.strip()
        if not text:
            return None
        try:
            rec = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            torn = not raw.endswith(b"\n")
            what = "torn last line (no newline at end)" if torn else "malformed line"
            sink.append(HistoryWarning(name, number, f"{what} skipped: {exc}"))
            return None
        if not isinstance(rec, dict):
            rec = {"type": type(rec).__name__}
    if type(rec) is dict:
        kind = rec.get("type")
        if kind not in RECORD_TYPES:
            sink.append(HistoryWarning(name, number, f"unknown record type {kind!r} skipped"))
            return None
        problem = attempt_problem(rec) if kind == "attempt" else header_problem(rec)
        if problem is not None:
            sink.append(HistoryWarning(name, number, f"{kind_word(kind)} skipped: {problem}"))
            return None
    return rec


def scan(
    path: str | os.PathLike[str],
    *,
    level: Level = "full",
    warnings: list[HistoryWarning] | None = None,
) -> Iterator[Entry]:
    """Every header and attempt of one file with its line number and byte offset.

    Unreadable lines are skipped; their warnings go to ``warnings`` when given.
    Raises OSError when the file itself cannot be opened.
    """
    for number, offset, rec in scan_with(path, DECODERS[level], warnings):
        yield Entry(number, offset, rec)


def unique_paths(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    warnings: list[HistoryWarning] | None = None,
) -> list[str]:
    """The paths, each file once: counting a file twice would double every rate's evidence."""
    seen: set[str] = set()
    out: list[str] = []
    for name in _as_paths(paths):
        real = os.path.realpath(name)
        if real in seen:
            if warnings is not None:
                warnings.append(HistoryWarning(name, 0, "file given twice; read once"))
            continue
        seen.add(real)
        out.append(name)
    return out


def _as_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def iter_records(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    level: Level = "full",
    warnings: list[HistoryWarning] | None = None,
) -> Iterator[dict[str, Any]]:
    """Headers and attempts of one or more files, in file order, each file once.

    Raises OSError for a file that cannot be opened.
    """
    for name in unique_paths(paths, warnings):
        for entry in scan(name, level=level, warnings=warnings):
            yield entry.record


def read_record(path: str | os.PathLike[str], offset: int) -> dict[str, Any]:
    """The whole record of the line starting at ``offset`` (e.g. after a summary scan)."""
    with open(os.fspath(path), "rb") as fh:
        fh.seek(offset)
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise ValueError(f"{os.fspath(path)}@{offset}: line longer than {MAX_LINE_BYTES} bytes")
        rec = orjson.loads(raw)
    if not isinstance(rec, dict):
        raise ValueError(f"{os.fspath(path)}@{offset}: not a JSON object")
    kind = rec.get("type")
    problem = attempt_problem(rec) if kind == "attempt" else None
    if problem is not None:  # never show a record no reader can use (the TUI's detail)
        raise ValueError(f"{os.fspath(path)}@{offset}: {problem}")
    return rec


@dataclass
class History:
    """Everything read from some files: headers, attempts and the warnings raised."""

    paths: list[str]
    headers: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[HistoryWarning] = field(default_factory=list)


def load(paths: str | Path | Iterable[str | os.PathLike[str]], *, level: Level = "full") -> History:
    """Read whole files into memory: for tests and small histories, not for 1M attempts."""
    names = _as_paths(paths)
    hist = History(paths=names)
    for rec in iter_records(names, level=level, warnings=hist.warnings):
        (hist.headers if rec["type"] == "run" else hist.attempts).append(rec)
    return hist
