"""What the stand reads from a history's records, whatever reader reads them (no Textual).

* the fields every attempt must hold (docs/records.md, "What every reader
  requires"): attempt_problem is the one check that report, compare, rejudge and the History
  index apply, each skipping such a line with a warning naming it;
* what the run headers say (RunMeta): hashes, versions, prices and the matrix of
  planned attempts, against which a report holds each group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolstand.util.canonical import json_type_name

# without one of these an attempt cannot be put in a group, a case or a row
TEXT_FIELDS: tuple[str, ...] = ("run_id", "provider", "model", "mode", "case_id")
VERDICT_VALUES = ("pass", "fail")


def field_problem(rec: Mapping[str, Any], key: str) -> str | None:
    """Why a required top-level field of an attempt cannot be used, or None.

    ``attempt`` must be a positive integer, every other required field a string.
    """
    if key not in rec:
        return f"missing field {key}"
    value = rec[key]
    if key == "attempt":
        if type(value) is int and value >= 1:
            return None
        want = "a positive integer"
    elif type(value) is str:
        return None
    else:
        want = "a string"
    return f"field {key} is {_a(json_type_name(value))}, not {want}"


def outcome_problem(judgement: Any, transport_error: Any) -> str | None:
    """Why an attempt's outcome cannot be counted, or None: a transport error with its
    code, else a judgement with a verdict (and, where the reader kept them, its errors
    as a list)."""
    if transport_error is not None:
        if not isinstance(transport_error, dict) or type(transport_error.get("code")) is not str:
            return "field transport_error has no code"
        return None
    if judgement is None:
        return "missing field judgement (and no transport_error)"
    if not isinstance(judgement, dict):
        return f"field judgement is {_a(json_type_name(judgement))}, not an object"
    if "verdict" not in judgement:
        return "missing field judgement.verdict"
    if judgement["verdict"] not in VERDICT_VALUES:
        return "field judgement.verdict is neither pass nor fail"
    if not isinstance(judgement.get("errors", []), list):
        return "field judgement.errors is not a list"
    return None


def _a(name: str) -> str:
    return name if name == "null" else f"an {name}" if name[0] in "aeiou" else f"a {name}"


def attempt_problem(rec: Mapping[str, Any]) -> str | None:
    """Why the stand cannot use this attempt record (the first field at fault), or None.

    The one validity check of every reader (report, compare, rejudge, the History index):
    such a record is skipped with a warning naming its line, never counted as a
    ``None / None`` group or shown as a row without a case.
    """
    for key in (*TEXT_FIELDS, "attempt"):
        problem = field_problem(rec, key)
        if problem is not None:
            return problem
    return outcome_problem(rec.get("judgement"), rec.get("transport_error"))


@dataclass
class RunMeta:
    """What the headers say, each list the distinct values in first-seen order."""

    run_ids: list[str] = field(default_factory=list)
    contract_hashes: list[str] = field(default_factory=list)
    contract_names: list[str] = field(default_factory=list)
    prompt_versions: list[str] = field(default_factory=list)
    prompt_hashes: list[str] = field(default_factory=list)
    cases_versions: list[str] = field(default_factory=list)
    cases_hashes: list[str] = field(default_factory=list)
    prices: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    simulated: dict[tuple[str, str], bool] = field(default_factory=dict)
    # run_id -> (provider, model, mode) -> attempts its matrix plans (cases × repetitions);
    # None once a header does not say (then no group can be held to a matrix)
    matrix: dict[Any, dict[tuple[str, str, str], int]] | None = field(default_factory=dict)
    headers: int = 0

    def slots(self, key: tuple[str, str, str]) -> int | None:
        """How many attempts the run headers plan for a provider × model × mode, summed
        over runs (a resumed run's second header is the same run); None when unknown."""
        if not self.matrix:
            return None
        return sum(plan.get(key, 0) for plan in self.matrix.values())

    def _add_matrix(self, h: Mapping[str, Any]) -> None:
        settings, cases = h.get("settings") or {}, h.get("cases") or {}
        reps, modes, count, runs = (
            settings.get("repetitions"),
            settings.get("modes"),
            cases.get("count"),
            h.get("runs"),
        )
        if self.matrix is None:
            return
        if not (type(reps) is int and type(count) is int and isinstance(modes, list)):
            self.matrix = None
            return
        plan: dict[tuple[str, str, str], int] = {}
        for run in runs if isinstance(runs, list) else []:
            for mode in modes:
                key = (str(run.get("provider")), str(run.get("model")), str(mode))
                plan[key] = plan.get(key, 0) + count * reps
        seen = self.matrix.setdefault(h.get("run_id"), {})
        for key, n in plan.items():  # a resume may plan more repetitions: keep the most
            seen[key] = max(seen.get(key, 0), n)

    def add_header(self, h: Mapping[str, Any]) -> None:
        self.headers += 1

        def put(values: list[str], value: Any) -> None:
            if value is not None and value not in values:
                values.append(value)

        put(self.run_ids, h.get("run_id"))
        contract, cases, prompt = (h.get(k) or {} for k in ("contract", "cases", "prompt"))
        put(self.contract_hashes, contract.get("hash"))
        if contract.get("name") is not None:
            put(
                self.contract_names, f"{contract.get('name')} {contract.get('version', '')}".strip()
            )
        put(self.prompt_versions, prompt.get("version"))
        put(self.prompt_hashes, prompt.get("hash"))
        put(self.cases_versions, cases.get("version") or cases.get("hash"))
        put(self.cases_hashes, cases.get("hash"))
        for run in h.get("runs") or []:
            key = (str(run.get("provider")), str(run.get("model")))
            if isinstance(run.get("prices"), dict):
                self.prices[key] = run["prices"]
            if run.get("simulated"):
                self.simulated[key] = True
        self._add_matrix(h)
