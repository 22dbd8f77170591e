"""What the stand reads from a history's records, whatever reader reads them (no Textual).

* the fields every attempt must hold (docs/records.md, "What every reader
  requires"): attempt_problem is the one check that report, compare, rejudge and the History
  index apply, each skipping such a line with a warning naming it;
* what the run headers say (RunMeta): hashes, versions, prices and the matrix of
  planned attempts, against which a report holds each group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolstand.spec.identity import HeaderRuns, run_identity
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
    return outcome_problem(rec.get("judgement"), rec.get("transport_error")) or type_problem(rec)


# optional numbers of a turn: absent or null, else a non-negative number (ints for counts)
TURN_NUMBERS = ("elapsed_ms", "cost_usd", "first_token_ms", "first_call_ms", "latency_ms")
_TURN_COUNTS = ("retries",)
_USAGE_COUNTS = ("input_tokens", "output_tokens")
_METRIC_COUNTS = (
    *("calls_made", "calls_unknown_tool", "calls_schema_valid"),
    *("exact_denominator", "exact_correct", "normalized_correct"),
)
_METRIC_FLAGS = ("expects_call", "called", "decision_correct", "tool_selection_correct", "unsafe")


COUNT_LIMIT = 1 << 32  # a count no attempt reaches: sums of them stay well inside 64 bits


def _number_problem(where: str, value: Any, count: bool) -> str | None:
    kind = type(value)
    if value is None or (kind is int and 0 <= value < COUNT_LIMIT):
        return None
    if not count and kind is float and 0 <= value < float("inf"):
        return None
    if kind is int and value >= COUNT_LIMIT:
        return f"field {where} is {value}, past {COUNT_LIMIT}"
    want = "a non-negative integer" if count else "a non-negative number"
    return f"field {where} is {_a(json_type_name(value))}, not {want}"


def _turn_problem(rec: Mapping[str, Any], prefix: str) -> str | None:
    """Why a turn's optional numbers and usage cannot be summed, or None."""
    for key in (*TURN_NUMBERS, *_TURN_COUNTS):
        if key in rec:
            problem = _number_problem(prefix + key, rec[key], key in _TURN_COUNTS)
            if problem is not None:
                return problem
    usage = rec.get("usage")
    if usage is None:
        return None
    if type(usage) is not dict:
        return f"field {prefix}usage is {_a(json_type_name(usage))}, not an object"
    return _counts_of(usage, _USAGE_COUNTS, f"{prefix}usage.")


def _counts_of(values: Mapping[str, Any], keys: Iterable[str], where: str) -> str | None:
    """The first of ``keys`` whose value is not a count (or null), named, or None."""
    for key in keys:
        problem = _number_problem(where + key, values.get(key), True)
        if problem is not None:
            return problem
    return None


# (part, whole): a count that can never exceed another (a missing one counts as 0)
_AT_MOST = (
    ("exact_correct", "exact_denominator"),
    ("normalized_correct", "exact_denominator"),
    ("calls_schema_valid", "calls_made"),
    ("calls_unknown_tool", "calls_made"),
)


def _counts_problem(metrics: Mapping[str, Any], where: str) -> str | None:
    """Why a judgement's counts cannot all be true (a part above its whole), or None."""
    for part, whole in _AT_MOST:
        if (metrics.get(part) or 0) > (metrics.get(whole) or 0):
            return f"field {where}{part} is more than {whole}"
    return None


def _judgement_problem(j: Any, prefix: str) -> str | None:
    """Why a judgement's metrics, errors or calls cannot be read, or None."""
    if j is None:
        return None
    if type(j) is not dict:
        return f"field {prefix}judgement is {_a(json_type_name(j))}, not an object"
    metrics = j.get("metrics")
    if metrics is not None:
        if type(metrics) is not dict:
            return f"field {prefix}judgement.metrics is not an object"
        problem = _counts_of(metrics, _METRIC_COUNTS, f"{prefix}judgement.metrics.")
        if problem is not None:
            return problem
        for key in _METRIC_FLAGS:
            if type(metrics.get(key)) not in (bool, type(None)):
                return f"field {prefix}judgement.metrics.{key} is not true, false or null"
        signature = metrics.get("signature")
        if signature is not None and type(signature) is not str:
            return f"field {prefix}judgement.metrics.signature is not a string"
        problem = _counts_problem(metrics, f"{prefix}judgement.metrics.")
        if problem is not None:
            return problem
    for key in ("errors", "calls"):
        items = j.get(key)
        if items is None:
            continue
        if type(items) is not list:
            return f"field {prefix}judgement.{key} is {_a(json_type_name(items))}, not an array"
        if not all(type(x) is dict for x in items):
            return f"field {prefix}judgement.{key} holds an item that is not an object"
    return None


def type_problem(rec: Mapping[str, Any]) -> str | None:
    """Why an attempt's optional fields have a type no reader can use, or None: numbers
    that are text, usage that is not an object, a second turn or its judgement that is
    not an object, errors or calls that are not arrays of objects."""
    problem = _judgement_problem(rec.get("judgement"), "")
    return problem or turn_types_problem(rec, rec.get("second_turn"))


def judgement_problem(j: Any) -> str | None:
    """Why a judgement's metrics, errors or calls have a type no reader can use, or None."""
    return _judgement_problem(j, "")


def turn_types_problem(rec: Mapping[str, Any], st: Any) -> str | None:
    """type_problem without the first turn's judgement: the numbers and usage of both
    turns and the second turn's shape (``st``, which a fast reader keeps apart)."""
    problem = _turn_problem(rec, "")
    if problem is not None:
        return problem
    for key in ("api", "run_identity"):  # a group's key parts besides TEXT_FIELDS and arms
        value = rec.get(key)
        if value is not None and type(value) is not str:
            return f"field {key} is {_a(json_type_name(value))}, not a string"
    problem = arms_problem(rec)
    if problem is not None:
        return problem
    te = rec.get("transport_error")
    if te is not None and type(te) is not dict:
        return "field transport_error is not an object"
    return second_turn_problem(st)


# the arms and the case's category (history.shape.ARMS): facets of the History index and
# parts of a report's group, so a name (or, for stream, true or false) when given
ARM_TYPES: dict[str, tuple[type, ...]] = {
    "stream": (bool, type(None)),
    "feedback": (str, type(None)),
    "category": (str, type(None)),
}


def arms_problem(rec: Mapping[str, Any]) -> str | None:
    """Why an attempt's stream, feedback or category cannot be a facet value, or None:
    stream must be true or false, feedback and category strings (each may be null)."""
    for key, kinds in ARM_TYPES.items():
        value = rec.get(key)
        if type(value) not in kinds:
            want = "true or false" if key == "stream" else "a string"
            return f"field {key} is {_a(json_type_name(value))}, not {want}"
    return None


def second_turn_problem(st: Any) -> str | None:
    """Why a second turn (or its small keys) has a type no reader can use, or None."""
    if st is None:
        return None
    if type(st) is not dict:
        return f"field second_turn is {_a(json_type_name(st))}, not an object"
    ste = st.get("transport_error")
    if ste is not None and (type(ste) is not dict or type(ste.get("code")) is not str):
        return "field second_turn.transport_error has no code"
    return _turn_problem(st, "second_turn.") or _judgement_problem(
        st.get("judgement"), "second_turn."
    )


# header fields that, when present and not empty, must be objects (or a list of them)
_HEADER_OBJECTS = ("contract", "cases", "prompt", "settings")
# their names, versions and hashes, which the report prints: strings when given
_HEADER_TEXT = {
    "contract": ("name", "version", "hash"),
    "cases": ("version", "hash"),
    "prompt": ("version", "hash"),
}


def header_problem(rec: Mapping[str, Any]) -> str | None:
    """Why the stand cannot use this run header, or None: run_id must be a string, runs
    an array of objects, contract, cases, prompt and settings objects when given."""
    problem = field_problem(rec, "run_id")
    if problem is not None:
        return problem
    for key in _HEADER_OBJECTS:
        value = rec.get(key)
        if value and type(value) is not dict:
            return f"field {key} is {_a(json_type_name(value))}, not an object"
        if not isinstance(value, dict):
            continue  # absent, or empty
        for sub in _HEADER_TEXT.get(key, ()):
            text = value.get(sub)
            if text is not None and type(text) is not str:
                return f"field {key}.{sub} is {_a(json_type_name(text))}, not a string"
    runs = rec.get("runs")
    if runs is not None:
        if type(runs) is not list:
            return f"field runs is {_a(json_type_name(runs))}, not an array"
        if not all(type(x) is dict for x in runs):
            return "field runs holds an item that is not an object"
    return None


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
    # run_id -> (provider, model, mode, run identity) -> attempts its matrix plans (cases
    # × repetitions); None once a header does not say (then no group can be held to a matrix)
    matrix: dict[Any, dict[tuple[str, str, str, str | None], int]] | None = field(
        default_factory=dict
    )
    headers: int = 0
    runs: HeaderRuns = field(default_factory=HeaderRuns)  # each header's runs, by run_id

    def slots(self, key: tuple[str, str, str], identity: str | None = None) -> int | None:
        """How many attempts the run headers plan for a provider × model × mode (of one
        run identity; None: of every run it names), summed over runs (a resumed run's
        second header is the same run); None when unknown."""
        if not self.matrix:
            return None
        return sum(
            n
            for plan in self.matrix.values()
            for (*k, ident), n in plan.items()
            if tuple(k) == key and (identity is None or ident == identity)
        )

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
        plan: dict[tuple[str, str, str, str | None], int] = {}
        for run in runs if isinstance(runs, list) else []:
            ident = run_identity(run, settings)
            for mode in modes:
                key = (str(run.get("provider")), str(run.get("model")), str(mode), ident)
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
        self.runs.add(h)


def kind_word(kind: Any) -> str:
    """How a skip warning names a record of this type."""
    return "attempt" if kind == "attempt" else "run header"
