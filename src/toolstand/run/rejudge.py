"""`toolstand rejudge`: re-parse and re-judge stored raw responses with the current code.

No request is sent. A fix to a validator or an adapter is checked on yesterday's data:
the new file holds the same attempts with fresh decisions and judgements, and the
attempts whose verdict changed are listed.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from toolstand.attempt.plan import plan_recorded
from toolstand.attempt.reading import (
    followup_applies,
    read_recorded,
    recorded_request,
    with_turn_errors,
)
from toolstand.attempt.repair_turns import rejudge_repairs
from toolstand.history import (
    HistoryLock,
    HistoryWriteError,
    IndexedWriter,
    attempt_problem,
    field_problem,
    iter_lines,
    os_error,
    sidecar_path,
)
from toolstand.spec.cases import Case, CaseFile, load_case_set
from toolstand.spec.contract import Contract, load_contract
from toolstand.util.printable import visible
from toolstand.util.problems import LoadError, Problem


@dataclass
class Change:
    key: str
    old_verdict: str | None
    new_verdict: str | None
    old_codes: list[str]
    new_codes: list[str]

    def line(self) -> str:
        return (
            f"{self.key}: {self.old_verdict} → {self.new_verdict}  "
            f"[{','.join(self.old_codes) or '-'}] → [{','.join(self.new_codes) or '-'}]"
        )


def _verdict(rec: dict[str, Any]) -> tuple[str | None, list[str]]:
    if rec.get("transport_error"):
        return "transport_error", [rec["transport_error"].get("code", "?")]
    j = rec.get("judgement") or {}
    return j.get("verdict"), [e.get("code", "?") for e in j.get("errors") or []]


def rejudge_record(rec: dict[str, Any], case: Case, contract: Contract) -> dict[str, Any]:
    """The record with decision, judgement and transport_error recomputed from its raw
    bodies, each read by ``read_recorded`` under the plan the attempt ran with."""
    out = dict(rec)
    resp = rec.get("response") or {}
    status = resp.get("status")
    if status is None:  # nothing arrived (timeout, reset): nothing to re-parse
        return out
    plan = plan_recorded(rec, case, contract)
    built = recorded_request(plan, rec.get("request"))
    first = read_recorded(plan, built, resp)
    if first.error is not None:
        out["transport_error"] = first.error
        out["decision"] = out["judgement"] = None
        return out
    assert first.decision is not None and first.judgement is not None
    judgement = first.judgement
    out["transport_error"] = None
    out["decision"] = first.decision.to_dict()
    second = rec.get("second_turn")
    if second and followup_applies(case, judgement, plan.mode) and case.followup is not None:
        second = dict(second)
        sresp = second.get("response") or {}
        if sresp.get("status") is not None:
            results = [r.get("result") for r in second.get("tool_results") or []]
            r2 = read_recorded(plan, built, sresp, results=results)
            decision = r2.decision.to_dict() if r2.decision is not None else None
            second.update(decision=decision, judgement=r2.followup, transport_error=r2.error)
            if r2.followup is not None:
                judgement = with_turn_errors(judgement, r2.followup["errors"])
        out["second_turn"] = second
    out["judgement"] = judgement
    out.update(rejudge_repairs(rec, plan, built, first))
    return out


def rejudge_file(
    source: Path,
    output: Path,
    *,
    tools: str | None = None,
    cases: str | None = None,
    warn: IO[str] | None = None,
) -> list[Change]:
    """Write the re-judged ``source`` to ``output`` and list the changed verdicts.

    The output is written to a temp file beside it and renamed into place only when
    complete, under the output's lock: a failure leaves no partial history behind."""
    warn = warn if warn is not None else sys.stderr
    if output.exists() and output.resolve() == source.resolve():
        raise LoadError(
            [
                Problem(
                    str(output),
                    None,
                    "$",
                    "--output must be a new file; the source is never overwritten",
                )
            ]
        )
    header = _first_header(source, warn)
    contract = load_contract(tools or _header_path(source, header, "contract", "--tools"))
    casefile = load_case_set(cases or _header_cases(source, header))
    with HistoryLock(output):
        if output.exists() and (output.is_dir() or output.stat().st_size):
            raise LoadError([Problem(str(output), None, "$", "output exists; choose a new file")])
        tmp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
        try:
            with IndexedWriter(tmp, lock=False) as writer:
                changes = _rejudge_into(writer, source, contract, casefile, warn)
            _move_history(tmp, output)
        except HistoryWriteError as exc:  # said of the file the user named
            raise HistoryWriteError(output, exc.os_error, "nothing was written") from None
        finally:
            _discard(tmp)
    return changes


def _first_header(source: Path, warn: IO[str]) -> dict[str, Any]:
    """The history's first run header; a LoadError when there is none or it cannot be read."""
    for _, rec in _records(source, warn):
        if rec.get("type") == "run":
            return rec
    raise LoadError([Problem(str(source), 1, "$", "no run header: not a toolstand history")])


def _header_path(source: Path, header: dict[str, Any], key: str, flag: str) -> str:
    """The contract or case file the header names, or a LoadError asking for ``flag``."""
    part = header.get(key)
    path = part.get("path") if isinstance(part, dict) else None
    if not isinstance(path, str) or not path:
        raise LoadError(
            [
                Problem(
                    str(source), None, f"$.{key}.path", f"the run header names no file; give {flag}"
                )
            ]
        )
    return path


def _header_cases(source: Path, header: dict[str, Any]) -> str | list[str]:
    """The case file, or the files of a case set, that the header names."""
    part = header.get("cases")
    files = part.get("files") if isinstance(part, dict) else None
    if isinstance(files, list) and files and all(isinstance(f, str) for f in files):
        return list(files)
    return _header_path(source, header, "cases", "--cases")


def _records(source: Path, warn: IO[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """iter_lines, with a file that cannot be read (a folder, no permission) a LoadError."""
    try:
        yield from iter_lines(source, warn)
    except OSError as exc:
        raise LoadError(
            [Problem(str(source), None, "$", f"cannot read: {os_error(exc)}")]
        ) from None


def _rejudge_into(
    writer: IndexedWriter, source: Path, contract: Contract, casefile: CaseFile, warn: IO[str]
) -> list[Change]:
    by_id = casefile.by_id()
    changes: list[Change] = []
    for number, rec in _records(source, warn):
        if rec.get("type") == "run":
            was = rec.get("contract")
            was = was if isinstance(was, dict) else {}
            writer.write(
                {
                    **rec,
                    "rejudged_from": str(source),
                    "contract": {**was, "hash_now": contract.hash},
                }
            )
            continue
        if rec.get("type") != "attempt":
            continue
        # re-parsing needs the wire API besides what every reader needs
        problem = attempt_problem(rec) or field_problem(rec, "api")
        if problem is not None:
            print(f"warning: {source}:{number}: attempt skipped: {problem}; kept as is", file=warn)
            writer.write(rec)
            continue
        case = by_id.get(rec.get("case_id", ""))
        if case is None:
            print(
                f"warning: {source}:{number}: case {rec.get('case_id')!r} is not in "
                f"{casefile.path}; kept as is",
                file=warn,
            )
            writer.write(rec)
            continue
        try:
            new = rejudge_record(rec, case, contract)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            print(
                f"warning: {source}:{number}: an attempt toolstand cannot re-judge "
                f"({type(exc).__name__}: {visible(str(exc))}); kept as is",
                file=warn,
            )
            writer.write(rec)
            continue
        writer.write(new)
        before, after = _verdict(rec), _verdict(new)
        if before != after:
            key = (
                f"{rec['provider']}/{rec['model']} {rec['mode']} {rec['case_id']}#{rec['attempt']}"
            )
            changes.append(Change(key, before[0], after[0], before[1], after[1]))
    return changes


def _move_history(tmp: Path, output: Path) -> None:
    """Rename the finished temp history (and its sidecar index, if one was kept) into place."""
    try:
        os.replace(tmp, output)
    except OSError as exc:
        raise HistoryWriteError(output, exc, "nothing was written") from None
    index = sidecar_path(tmp)
    if index.exists():
        with contextlib.suppress(OSError):
            os.replace(index, sidecar_path(output))


def _discard(tmp: Path) -> None:
    """Remove what a rejudge that did not finish left (nothing, once it was renamed)."""
    for path in (tmp, sidecar_path(tmp)):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def cmd_rejudge(
    source: str, output: str, *, tools: str | None = None, cases: str | None = None
) -> int:
    changes = rejudge_file(Path(source), Path(output), tools=tools, cases=cases)
    for ch in changes:
        print(visible(ch.line()))
    print(f"{len(changes)} attempts changed verdict; new file: {output}", file=sys.stderr)
    return 0
