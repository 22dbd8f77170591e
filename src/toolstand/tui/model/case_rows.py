"""Rows of the case list and its filters (no Textual)."""

from __future__ import annotations

from dataclasses import dataclass

from toolstand.spec.cases import CaseFile, CaseLine
from toolstand.tui.model.verdicts import Verdicts

BROKEN = "broken"  # the kind filter's value for lines that do not load


@dataclass(frozen=True)
class Row:
    line: int
    case_id: str
    category: str
    expected: str
    verdict: str
    problem: str = ""


def expected_of(line: CaseLine) -> str:
    case = line.case
    if case is None:
        return "?"
    e = case.expect
    if e.kind != "tool_call":
        return e.kind
    names = [c.tool for c in e.expected_calls]
    return names[0] if len(names) == 1 else f"{len(names)} calls"


def rows(
    casefile: CaseFile,
    verdicts: Verdicts,
    *,
    where: str | None = None,
    query: str = "",
    category: str | None = None,
    kind: str | None = None,
) -> list[Row]:
    """The case lines that pass the filters; broken lines too, with their problem; each
    with its last verdict in the run and mode ``where`` ("provider/model mode")."""
    problems = {p.line: p for p in casefile.problems}
    needle = query.casefold().strip()
    out = []
    for line in casefile.lines:
        case = line.case
        if case is None:
            problem = problems.get(line.number)
            if problem is None:
                continue  # blank or version line
            if kind not in (None, BROKEN) or category is not None:
                continue
            if needle and needle not in line.text.casefold():
                continue
            out.append(Row(line.number, f"line {line.number}", "!", "?", "", problem.message))
            continue
        if kind == BROKEN or (kind is not None and case.expect.kind != kind):
            continue
        if category is not None and case.category != category:
            continue
        if needle and needle not in f"{case.id}\n{line.text}".casefold():
            continue
        v = verdicts.of(case.id, where)
        out.append(
            Row(line.number, case.id, case.category or "", expected_of(line), v.mark if v else "")
        )
    return out
