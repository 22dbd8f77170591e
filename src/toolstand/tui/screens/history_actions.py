"""What the History screen does with one attempt: promote it to a regression case, rerun
it live, re-judge it with the current code, copy it as JSON.

A base of HistoryScreen, kept apart so the screen module stays about the list. Records
are read by the screen's thread worker (``load_record``); re-judging runs in a thread too.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson
from textual import work

from toolstand.run.rejudge import rejudge_record
from toolstand.spec.cases import CaseFile
from toolstand.tui.messages import PromoteToCase, RunCase
from toolstand.tui.model.templates import unique_id
from toolstand.tui.model.turns import verdict_line
from toolstand.tui.screens.base import ToolstandScreen
from toolstand.types import MODES
from toolstand.util.printable import visible

if TYPE_CHECKING:
    from toolstand.history import HistoryIndex


def promoted_case(
    rec: dict[str, Any], casefile: CaseFile, elsewhere: Callable[[str], str | None] | None = None
) -> tuple[dict[str, Any], str]:
    """A new regression case from an attempt: the case's conversation, tools and
    expectation under a fresh id, noting where it came from. Also says what was taken
    from where. ``elsewhere`` finds the line of a case kept in another file of the config."""
    cid = str(rec.get("case_id"))
    taken = set(casefile.by_id())
    line = next((ln for ln in casefile.lines if ln.case is not None and ln.case.id == cid), None)
    source = line.text if line is not None else elsewhere(cid) if elsewhere else None
    mode = rec.get("mode")
    where = (
        f"regression from {rec.get('provider')}/{rec.get('model')} in mode {mode} "
        f"(run it in {mode} to reproduce), attempt #{rec.get('attempt')} of run "
        f"{rec.get('run_id')}: {verdict_line(rec)}"
    )
    if source is None:
        data: dict[str, Any] = {"id": "", "user": rec.get("user") or "", "expect": {"kind": "text"}}
        said = f"case {cid} is not in {casefile.path}: expectation left for you to fill in"
    else:
        data = copy.deepcopy(orjson.loads(source))
        said = f"expectation copied from {cid}"
        if isinstance(rec.get("user"), str) and "user" in data and rec["user"] != data["user"]:
            data["user"] = rec["user"]  # the message as it was sent then
            said += "; user message as recorded"
    pinned = _sent_results(rec)
    if pinned and source is not None:
        followup = data.setdefault("followup", {})
        followup["tool_results"] = {**(followup.get("tool_results") or {}), **pinned}
        said += f"; the tool result(s) sent in the failed second turn pinned ({', '.join(pinned)})"
    data["id"] = unique_id(f"{cid}_regression", taken)
    data["note"] = where
    return data, said


def _sent_results(rec: dict[str, Any]) -> dict[str, Any]:
    """The tool results a failed second turn was sent, by tool name: pinned in the new
    case, the executor's defaults may change and the failure would not come back."""
    st = rec.get("second_turn")
    if not isinstance(st, dict):
        return {}
    errors = ((rec.get("judgement") or {}).get("errors")) or []
    second = st.get("judgement")
    second = second if isinstance(second, dict) else {}
    failed = any(isinstance(e, dict) and e.get("turn") == 2 for e in errors) or (
        second.get("passed") is False
    )
    if not failed:
        return {}
    return {
        str(r["name"]): r.get("result")
        for r in st.get("tool_results") or []
        if isinstance(r, dict) and r.get("name")
    }


class AttemptActions(ToolstandScreen):
    """Promote, rerun, re-judge and copy, for HistoryScreen."""

    index: HistoryIndex | None

    def load_record(self, row: int, then: Callable[[dict[str, Any]], None]) -> None:
        """Read one record of the open file, then call ``then`` with it (HistoryScreen's)."""
        raise NotImplementedError

    def promote_row(self, row: int) -> None:
        self.load_record(row, self._promote)

    def _promote(self, rec: dict[str, Any]) -> None:
        # the config's case files searched once: for the original's line and its file
        found = self.app.project.case_line(str(rec.get("case_id")))
        path, text = (None, None) if found is None else found
        data, said = promoted_case(rec, self.app.project.casefile, lambda _: text)
        self.post_message(PromoteToCase(data, said, path))

    def rerun_row(self, row: int) -> None:
        ix = self.index
        if ix is None:
            return
        case_id = str(ix.value("case", row))
        provider, model = str(ix.value("provider", row)), str(ix.value("model", row))
        recorded = str(ix.value("mode", row))
        mode = next((m for m in MODES if m == recorded), None)
        if mode is None:
            allowed = ", ".join(MODES)
            self.notify(
                visible(f"Mode {recorded} is not one toolstand runs ({allowed})."),
                severity="error",
                markup=False,
            )
            return
        project = self.app.project
        if case_id not in project.casefile.by_id():
            self.notify(
                visible(f"Case {case_id} is not in {project.cases_path.name}."),
                severity="error",
                markup=False,
            )
            return
        runs = project.config.runs if project.config is not None else []
        target = next(
            (i for i, r in enumerate(runs) if r.provider == provider and r.model == model), None
        )
        if target is None:
            self.notify(
                visible(f"{provider}/{model} is not a configured run."),
                severity="error",
                markup=False,
            )
            return
        self.post_message(RunCase(case_id, target, mode))

    def rejudge_row(self, row: int) -> None:
        self.load_record(row, lambda rec: self._rejudge(row, rec))

    def _rejudge(self, row: int, rec: dict[str, Any]) -> None:
        project = self.app.project
        case = project.casefile.by_id().get(str(rec.get("case_id")))
        if case is None:
            self.notify(
                visible(
                    f"Case {rec.get('case_id')} is not in {project.cases_path.name}: "
                    "cannot re-judge."
                ),
                severity="error",
                markup=False,
            )
            return
        self._rejudge_worker(row, rec, case, project.contract)

    @work(thread=True, group="rejudge", exit_on_error=False)
    def _rejudge_worker(self, row: int, rec: dict[str, Any], case: Any, contract: Any) -> None:
        try:
            new = rejudge_record(rec, case, contract)
        except Exception as exc:  # an adapter that cannot parse an old body: say so, go on
            self.app.call_from_thread(
                self.notify, visible(f"Re-judging failed: {exc}"), severity="error", markup=False
            )
            return
        self.app.call_from_thread(self._rejudged, row, rec, new)

    def _rejudged(self, row: int, rec: dict[str, Any], new: dict[str, Any]) -> None:
        before, after = verdict_line(rec), verdict_line(new)
        if before == after:
            self.notify(visible(f"Re-judged: verdict unchanged ({after})."), markup=False)
        else:
            note = visible(f"Re-judged: {before} → {after}")
            self.notify(note, severity="warning", markup=False)
        self.app.rejudged = (row, new)  # an open detail of that row watches this

    def copy_row(self, row: int) -> None:
        self.load_record(row, self._copy)

    def _copy(self, rec: dict[str, Any]) -> None:
        # records carry no API keys (the runner scrubs them); the text is the record as is
        text = orjson.dumps(rec, option=orjson.OPT_INDENT_2).decode()
        self.app.copy_to_clipboard(text)
        self.notify(
            visible(
                f"Copied {rec.get('case_id')} #{rec.get('attempt')} as JSON ({len(text):,} chars)."
            ),
            markup=False,
        )
