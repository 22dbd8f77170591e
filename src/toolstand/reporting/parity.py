"""Stream parity (design.md, Streaming): with ``stream: "both"`` each attempt ran once per
stream arm, and a correct stack reads the same tool calls from a stream as from a whole
body. The arms of one provider × model × mode (and feedback arm) pair per case and
repetition, on the outcomes the report counted (tally.GroupStats.reps):

* the paired comparison: pairs the non-streamed arm passed and the streamed did not, and
  the other way round, weighed by the exact two-sided McNemar test;
* the parity rate: pairs whose normalized signature is the same in both arms;
* the parity list: cases whose signature differs in most of their repetitions (more than
  half of the pairs), each with its first differing call, read from the two signatures
  (kind, sorted call names, canonical arguments) of its first differing repetition;
* the fault classes the server declared in its streams, if it did (declared_faults.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from toolstand.reporting import declared_faults
from toolstand.reporting.declared_faults import FaultRow
from toolstand.reporting.stats import Rate, mcnemar_exact
from toolstand.reporting.tally import METRICS, GroupStats, Report

Rep = tuple[bool, Any]  # (passed, normalized signature) of one attempt


@dataclass
class ParityCase:
    """A case whose signature differs between the arms in most repetitions."""

    case_id: str
    differing: int
    repetitions: int
    first_difference: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "differing": self.differing,
            "repetitions": self.repetitions,
            "first_difference": self.first_difference,
        }


@dataclass
class Parity:
    """The two stream arms of one provider × model × mode × feedback arm, paired."""

    provider: str
    model: str
    mode: str
    feedback: str | None
    plain: GroupStats
    streamed: GroupStats
    pairs: int = 0
    plain_only: int = 0  # pairs passed not streamed, failed streamed
    streamed_only: int = 0
    same: int = 0  # pairs with one signature in both arms
    per_case: dict[str, tuple[int, int]] = field(default_factory=dict)  # (same, pairs)
    cases: list[ParityCase] = field(default_factory=list)
    faults: list[FaultRow] = field(default_factory=list)  # the server's declared faults

    @property
    def p(self) -> float:
        return mcnemar_exact(self.plain_only, self.streamed_only, two_sided=True)

    @property
    def rate(self) -> Rate:
        return Rate(self.same, self.pairs)

    def label(self) -> str:
        fb = f" · feedback {self.feedback}" if self.feedback is not None else ""
        run = f" · {self.plain.run_label}" if self.plain.run_label else ""
        return f"{self.provider} / {self.model} · mode {self.mode}{fb}{run}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"provider": self.provider, "model": self.model, "mode": self.mode}
        if self.feedback is not None:
            out["feedback"] = self.feedback
        if self.plain.run_label:  # a run that reads like another: which one (compare pairs on it)
            out.update(run_identity=self.plain.identity, run=self.plain.run_label)
        out["paired"] = {
            "pairs": self.pairs,
            "passed_not_streamed_only": self.plain_only,
            "passed_streamed_only": self.streamed_only,
            "p": self.p,
        }
        out["parity"] = self.rate.to_dict()
        out["per_case"] = {cid: list(v) for cid, v in self.per_case.items()}
        out["cases"] = [c.to_dict() for c in self.cases]
        if self.faults:  # only where the server declared its stream faults
            out["declared_faults"] = [r.to_dict() for r in self.faults]
        return out


def first_difference(plain: Any, streamed: Any) -> dict[str, Any]:
    """Where two normalized signatures first differ: the answer's kind, else the first
    call (in sorted order) whose name or canonical arguments differ, with both sides
    (null where one arm made fewer calls)."""
    a, b = _parts(plain), _parts(streamed)
    if a is None or b is None:
        return {"part": "signature", "not_streamed": plain, "streamed": streamed}
    if a[0] != b[0]:
        return {"part": "kind", "not_streamed": a[0], "streamed": b[0]}
    for part, i in (("name", 1), ("arguments", 2)):
        xs, ys = a[i], b[i]
        for n in range(max(len(xs), len(ys))):
            x = xs[n] if n < len(xs) else None
            y = ys[n] if n < len(ys) else None
            if x != y:
                out = {"part": part, "call": n, "not_streamed": x, "streamed": y}
                return out | _argument(x, y) if part == "arguments" else out
    return {"part": "signature", "not_streamed": plain, "streamed": streamed}


def _argument(x: Any, y: Any) -> dict[str, Any]:
    """The first argument (by name) whose value differs, when both sides are objects."""
    try:
        a, b = orjson.loads(x), orjson.loads(y)
    except (orjson.JSONDecodeError, TypeError):
        return {}
    if not isinstance(a, dict) or not isinstance(b, dict):
        return {}
    missing = object()
    for key in sorted(a.keys() | b.keys()):
        if a.get(key, missing) != b.get(key, missing):
            return {"argument": key}
    return {}


def _parts(sig: Any) -> tuple[Any, list[Any], list[Any]] | None:
    try:
        value = orjson.loads(sig) if isinstance(sig, str) else None
    except orjson.JSONDecodeError:
        return None
    if not (isinstance(value, list) and len(value) == 3):
        return None
    kind, names, args = value
    if not isinstance(names, list) or not isinstance(args, list):
        return None
    return (kind, names, args)


def pair(plain: GroupStats, streamed: GroupStats) -> Parity:
    """The two arms' attempts paired per (case, repetition); cases in the order the
    non-streamed arm first met them, then any only the streamed arm has."""
    out = Parity(plain.provider, plain.model, plain.mode, plain.feedback, plain, streamed)
    a, b = plain.reps, streamed.reps
    keys = sorted(a.keys() & b.keys())
    by_case: dict[str, list[tuple[int, Rep, Rep]]] = {}
    for cid, number in keys:
        by_case.setdefault(cid, []).append((number, a[(cid, number)], b[(cid, number)]))
    order = [*plain.cases, *(c for c in streamed.cases if c not in plain.cases)]
    for cid in order:
        reps = by_case.get(cid)
        if not reps:
            continue
        differing = [(x, y) for _, x, y in reps if x[1] != y[1]]
        out.pairs += len(reps)
        out.same += len(reps) - len(differing)
        out.plain_only += sum(1 for _, x, y in reps if x[0] and not y[0])
        out.streamed_only += sum(1 for _, x, y in reps if y[0] and not x[0])
        out.per_case[cid] = (len(reps) - len(differing), len(reps))
        if 2 * len(differing) > len(reps):
            x, y = differing[0]
            out.cases.append(
                ParityCase(cid, len(differing), len(reps), first_difference(x[1], y[1]))
            )
    return out


def parities(report: Report) -> list[Parity]:
    """One Parity per provider × model × mode × feedback arm that has both stream arms."""
    arms: dict[tuple[Any, ...], dict[bool, GroupStats]] = {}
    for g in report.groups:
        arms.setdefault((*g.key, g.feedback, g.identity), {})[g.stream] = g
    found = [pair(two[False], two[True]) for two in arms.values() if len(two) == 2]
    declared = declared_faults.read(report.files) if found else {}
    if declared:
        for p in found:
            group = (p.provider, p.model, p.mode, p.feedback)
            p.faults = declared_faults.rows(
                declared, group, p.plain.identity, p.plain.reps, p.streamed.reps
            )
    return found


def to_json(report: Report) -> list[dict[str, Any]] | None:
    """The JSON report's top-level ``stream_parity``; None when no group has both arms
    and no header asked for them."""
    found = parities(report)
    return [p.to_json() for p in found] if found else None


def lines(report: Report, fmt: Callable[[Rate], str], visible: Callable[[str], str]) -> list[str]:
    """The text report's parity block: per group the arms side by side, the paired
    comparison, the parity rate and the parity list."""
    out: list[str] = []
    for p in parities(report):
        out += ["", f"stream parity · {visible(p.label())}"]
        out.append(f"  {'':<30} {'not streamed':<34} streamed")
        pm, sm = p.plain.metrics(), p.streamed.metrics()
        for name in METRICS:
            out.append(f"  {name:<30} {fmt(pm[name]):<34} {fmt(sm[name])}")
        out.append(
            f"  {p.pairs} pairs · passed only not streamed {p.plain_only}"
            f" · only streamed {p.streamed_only} · exact McNemar p {p.p:.2g}"
        )
        out.append(f"  {'same normalized signature':<30} {fmt(p.rate)}")
        if not p.cases:
            out.append("  parity list: no case differs in most repetitions")
        else:
            out.append(f"  parity list ({len(p.cases)} cases differ in most repetitions)")
            for c in p.cases:
                out.append(visible(_case_line(c))[:100])
        out += [visible(line) for line in declared_faults.lines(p.faults)]
    return out


def _case_line(c: ParityCase) -> str:
    d = c.first_difference
    where = d["part"] + (f" {d['call']}" if "call" in d else "")
    x, y = d["not_streamed"], d["streamed"]
    key = d.get("argument")
    if key is not None:  # both sides are objects: show the argument that differs
        a, b = orjson.loads(x), orjson.loads(y)
        where += f" {key}"
        x, y = (orjson.dumps(v[key]).decode() if key in v else "(absent)" for v in (a, b))
    return f"    {c.case_id} {c.differing}/{c.repetitions} · {where}: {_short(x)} → {_short(y)}"


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= 40 else text[:39] + "…"
