"""The last known verdict of each case, from the run histories (no Textual; called from a
thread worker). Only the summary head of each attempt line is decoded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolstand.history import HistoryWarning, scan


@dataclass(frozen=True)
class LastVerdict:
    verdict: str  # pass | fail | a transport code
    where: str  # provider/model mode, for the tooltip-sized detail

    @property
    def mark(self) -> str:
        """Four columns: pass, fail, or a transport failure (no verdict)."""
        return {"pass": "pass", "fail": "FAIL"}.get(self.verdict, "err!")


def verdict_of(rec: dict[str, Any]) -> LastVerdict | None:
    if rec.get("type") != "attempt" or "case_id" not in rec:
        return None
    error = rec.get("transport_error")
    if error:
        verdict = str(error.get("code", "transport_error"))
    else:
        verdict = str((rec.get("judgement") or {}).get("verdict", "?"))
    return LastVerdict(verdict, f"{rec.get('provider')}/{rec.get('model')} {rec.get('mode')}")


def last_verdicts(runs_dir: Path) -> tuple[dict[str, LastVerdict], list[HistoryWarning]]:
    """Each case's most recent attempt across runs/*.jsonl (files by modification time)."""
    out: dict[str, LastVerdict] = {}
    warnings: list[HistoryWarning] = []
    if not runs_dir.is_dir():
        return out, warnings
    files = sorted(runs_dir.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    for path in files:
        try:
            for entry in scan(path, level="metrics", warnings=warnings):
                v = verdict_of(entry.record)
                if v is not None:
                    out[str(entry.record["case_id"])] = v
        except OSError as exc:
            warnings.append(HistoryWarning(str(path), 0, f"cannot read: {exc.strerror}"))
    return out, warnings
