"""`toolstand rejudge`: re-parse and re-judge stored raw responses with the current code.

No request is sent. A fix to a validator or an adapter is checked on yesterday's data:
the new file holds the same attempts with fresh decisions and judgements, and the
attempts whose verdict changed are listed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from toolstand.adapters import get_adapter
from toolstand.cases import Case, load_cases
from toolstand.contract import Contract, load_contract
from toolstand.history_fields import attempt_problem, field_problem
from toolstand.history_keep import IndexedWriter
from toolstand.jsonl import iter_lines
from toolstand.judge import followup_applies, judge, judge_followup
from toolstand.printable import visible
from toolstand.problems import LoadError, Problem


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
    """The record with decision, judgement and transport_error recomputed from its raw bodies."""
    adapter = get_adapter(rec["api"])
    out = dict(rec)
    resp = rec.get("response") or {}
    status = resp.get("status")
    if status is None:  # nothing arrived (timeout, reset): nothing to re-parse
        return out
    err = adapter.classify_error(status, resp.get("headers") or {}, resp.get("body"))
    if err is not None:
        out["transport_error"] = {"code": err.code, "message": err.message, "status": status}
        out["decision"] = out["judgement"] = None
        return out
    decision = adapter.parse_decision(resp.get("body"))
    offered = rec.get("offered_tools")
    judgement = judge(case, decision, contract, offered_tools=offered, mode=rec.get("mode", "auto"))
    out["transport_error"] = None
    out["decision"] = decision.to_dict()
    second = rec.get("second_turn")
    if (
        second
        and followup_applies(case, judgement, rec.get("mode", "auto"))
        and case.followup is not None
    ):
        second = dict(second)
        sresp = second.get("response") or {}
        if sresp.get("status") is not None:
            serr = adapter.classify_error(
                sresp["status"], sresp.get("headers") or {}, sresp.get("body")
            )
            if serr is None:
                d2 = adapter.parse_decision(sresp.get("body"))
                results = [r.get("result") for r in second.get("tool_results") or []]
                sj = judge_followup(case.followup, d2, results)
                second.update(decision=d2.to_dict(), judgement=sj, transport_error=None)
                judgement = dict(judgement)
                judgement["errors"] = judgement["errors"] + sj["errors"]
                judgement["verdict"] = "fail" if judgement["errors"] else "pass"
            else:
                second.update(
                    decision=None,
                    judgement=None,
                    transport_error={
                        "code": serr.code,
                        "message": serr.message,
                        "status": sresp["status"],
                    },
                )
        out["second_turn"] = second
    out["judgement"] = judgement
    return out


def rejudge_file(
    source: Path,
    output: Path,
    *,
    tools: str | None = None,
    cases: str | None = None,
    warn: IO[str] | None = None,
) -> list[Change]:
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
    if output.exists() and output.stat().st_size:
        raise LoadError([Problem(str(output), None, "$", "output exists; choose a new file")])
    header = None
    for _, rec in iter_lines(source, warn):
        if rec.get("type") == "run":
            header = rec
            break
    if header is None:
        raise LoadError([Problem(str(source), 1, "$", "no run header: not a toolstand history")])
    contract = load_contract(tools or header["contract"]["path"])
    casefile = load_cases(cases or header["cases"]["path"])
    by_id = casefile.by_id()
    changes: list[Change] = []
    with IndexedWriter(output) as writer:
        for number, rec in iter_lines(source, warn):
            if rec.get("type") == "run":
                writer.write(
                    {
                        **rec,
                        "rejudged_from": str(source),
                        "contract": {**rec["contract"], "hash_now": contract.hash},
                    }
                )
                continue
            if rec.get("type") != "attempt":
                continue
            # re-parsing needs the wire API besides what every reader needs
            problem = attempt_problem(rec) or field_problem(rec, "api")
            if problem is not None:
                print(
                    f"warning: {source}:{number}: attempt skipped: {problem}; kept as is", file=warn
                )
                writer.write(rec)
                continue
            case = by_id.get(rec.get("case_id", ""))
            if case is None:
                print(
                    f"warning: {source}:{number}: case {rec.get('case_id')!r} is not in {casefile.path}; kept as is",
                    file=warn,
                )
                writer.write(rec)
                continue
            new = rejudge_record(rec, case, contract)
            writer.write(new)
            before, after = _verdict(rec), _verdict(new)
            if before != after:
                key = f"{rec['provider']}/{rec['model']} {rec['mode']} {rec['case_id']}#{rec['attempt']}"
                changes.append(Change(key, before[0], after[0], before[1], after[1]))
    return changes


def cmd_rejudge(
    source: str, output: str, *, tools: str | None = None, cases: str | None = None
) -> int:
    changes = rejudge_file(Path(source), Path(output), tools=tools, cases=cases)
    for ch in changes:
        print(visible(ch.line()))
    print(f"{len(changes)} attempts changed verdict; new file: {output}", file=sys.stderr)
    return 0
