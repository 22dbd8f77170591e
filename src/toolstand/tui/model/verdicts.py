"""The last known verdict of each case, from the run histories (no Textual; called from a
thread worker). Only the summary head of each attempt line is decoded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolstand.history import (
    ODD,
    HistoryIndex,
    HistoryWarning,
    record_repair_ended,
    repair_ended,
    scan,
)

_REPAIR_AT = 9  # where a report kind (history.report_rows.facts) holds its repair
UNKNOWN = "?"  # a repair outcome the index cannot tell: read the record


@dataclass(frozen=True)
class LastVerdict:
    verdict: str  # pass | fail | a transport code
    where: str  # provider/model mode, for the tooltip-sized detail

    @property
    def mark(self) -> str:
        """Four columns: pass, fail, or a transport failure (no verdict)."""
        return {"pass": "pass", "fail": "FAIL"}.get(self.verdict, "err!")


@dataclass
class Verdicts:
    """The last verdict of each case per run and mode ("provider/model mode"): the case
    list shows one run and mode's, never whichever run happened to be the latest."""

    by_case: dict[str, dict[str, LastVerdict]] = field(default_factory=dict)
    latest: str | None = None  # the run and mode of the newest attempt seen

    def add(self, case_id: str, verdict: LastVerdict) -> None:
        self.by_case.setdefault(case_id, {})[verdict.where] = verdict
        self.latest = verdict.where

    def of(self, case_id: str, where: str | None) -> LastVerdict | None:
        return self.by_case.get(case_id, {}).get(where or "")

    def wheres(self) -> list[str]:
        """Every run and mode with a verdict, sorted."""
        return sorted({w for per in self.by_case.values() for w in per})

    def over(self, older: Verdicts) -> Verdicts:
        """These verdicts laid over ``older`` ones (a session's live runs over the scan)."""
        out = Verdicts({c: dict(per) for c, per in older.by_case.items()}, older.latest)
        for case_id, per in self.by_case.items():
            out.by_case.setdefault(case_id, {}).update(per)
        out.latest = self.latest or older.latest
        return out

    def __contains__(self, case_id: object) -> bool:
        return case_id in self.by_case


def verdict_of(rec: Mapping[str, Any]) -> LastVerdict | None:
    if rec.get("type") != "attempt" or "case_id" not in rec:
        return None
    error = rec.get("transport_error")
    if error:
        verdict = str(error.get("code", "transport_error"))
    else:
        verdict = str((rec.get("judgement") or {}).get("verdict", "?"))
    return LastVerdict(verdict, f"{rec.get('provider')}/{rec.get('model')} {rec.get('mode')}")


def last_verdicts(runs_dir: Path) -> tuple[Verdicts, list[HistoryWarning]]:
    """Each case's most recent attempt per run and mode across runs/*.jsonl (files by
    modification time)."""
    out = Verdicts()
    warnings: list[HistoryWarning] = []
    if not runs_dir.is_dir():
        return out, warnings
    files = sorted(runs_dir.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    for path in files:
        try:
            for entry in scan(path, level="metrics", warnings=warnings):
                v = verdict_of(entry.record)
                if v is not None:
                    out.add(str(entry.record["case_id"]), v)
        except OSError as exc:
            warnings.append(HistoryWarning(str(path), 0, f"cannot read: {exc.strerror}"))
    return out, warnings


def repair_outcome(ix: HistoryIndex, row: int) -> str | None:
    """How the repair turns of index row ``row`` ended: "pass" (a repair passed), "fail"
    (none did within the budget) or "err" (a transport error ended them); None when turn
    1 needed none or the run had no repair arm; UNKNOWN for a row the index's report
    columns do not stand for (a line read apart: a streamed attempt, an odd key order),
    whose record says it (``repair_of``).

    Turn 1's verdict is the attempt's, recorded and filtered on; this is only beside it."""
    if ix.value("feedback", row) is None:
        return None
    report = ix.report
    code = report.kind[row] if row < len(report.kind) else ODD
    kind = report.kinds[code]
    if kind is None:
        return UNKNOWN
    return repair_ended(kind[_REPAIR_AT])


def repair_of(rec: Mapping[str, Any]) -> str | None:
    """``repair_outcome`` read from an attempt record's repair summary."""
    return record_repair_ended(rec)


def has_repairs(ix: HistoryIndex) -> bool:
    """Whether ``ix`` holds a repair arm (the verdict column then says how they ended)."""
    return any(v is not None for v in ix.facets["feedback"].values)
