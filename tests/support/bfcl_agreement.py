"""Comparing toolstand's verdict_normalized with BFCL's checker on perturbed answers:
shared by tests/test_bfcl_agreement.py (the test's own files, and a sample of the real
data) and bench/bench_bfcl_agreement.py (every entry of the eleven categories).

Calls are made by perturbing BFCL's own answers (case, spacing, int for float, wrong
type, missing/extra/omitted parameter, wrong tool, parallel order, undecodable
arguments). The BFCL side is bfcl_rules, a transcription of its checker, or the real
``ast_checker`` loaded straight from the wheel (its ``model_config`` import, which pulls
every provider SDK, replaced by a stub). Every disagreement falls in a class the README
names, on purpose, or it is returned as unexplained.
"""

from __future__ import annotations

import copy
import itertools
import os
import sys
import types
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tests.support import bfcl as fx
from tests.support.bfcl_rules import bfcl_valid
from toolstand.decision import ModelDecision, ToolCall
from toolstand.importers.bfcl import PARALLEL, to_case
from toolstand.importers.bfcl_schema import wire_name
from toolstand.judge.normalize import normalize
from toolstand.judge.verdict import judge
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract, validator_for
from toolstand.types import Judgement

WHEEL_NAME = "bfcl_eval-2026.3.23-py3-none-any.whl"
CACHE = Path(__file__).resolve().parents[2] / ".cache" / "bfcl"
EMPTY = Contract(name="bfcl", version="test", tools=[])
Output = list[dict[str, Any]] | None  # None: arguments that do not decode
Entry = tuple[str, dict[str, Any], Any]  # category, BFCL entry, its ground truth
Checker = Callable[[str, dict[str, Any], Output, Any], bool]

# the classes of disagreement the README explains, by what toolstand says
ON_PURPOSE = {
    "outside_schema": "toolstand: invalid_arguments; the value is one BFCL's own answer lists, "
    "and it breaks the function's schema (BFCL compares values with its answer only)",
    "ambiguous_enum": "toolstand: invalid_arguments; under the parameter's normalizers the value "
    "equals several enum members, so none is picked (BFCL compares with its answer only)",
    "undeclared_parameter": "BFCL's answer names a parameter its function does not declare: BFCL "
    "refuses every call, toolstand takes the one the answer gives (the schema allows it)",
    "undecodable": "toolstand: a call with undecodable arguments is still a call; BFCL credits it "
    "on irrelevance",
    "greedy": "BFCL pairs parallel calls greedily in answer order; toolstand finds the best pairing",
}
SCHEMA_ONLY = {"invalid_arguments", "argument_mismatch"}


def wheel_path() -> Path | None:
    given = os.environ.get("TOOLSTAND_BFCL_WHEEL")
    path = Path(given) if given else CACHE / WHEEL_NAME
    return path if path.is_file() else None


# --- perturbations of BFCL's answers ---------------------------------------------------


def first_values(params: dict[str, list[Any]]) -> dict[str, Any]:
    return {
        p: next(v for v in vals if v != "")
        for p, vals in params.items()
        if any(v != "" for v in vals)
    }


def _concrete(value: Any) -> Any:
    """A nested answer's first concrete value (dict keys: the first non-"" choice)."""
    if isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
        return {k: _concrete(v[0]) for k, v in value.items() if v and v[0] != ""}
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [_concrete(v) for v in value]
    return value


def base_output(answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for answer in answers:
        ((name, params),) = answer.items()
        out.append({wire_name(name): {p: _concrete(v) for p, v in first_values(params).items()}})
    return out


def _props(entry: dict[str, Any], name: str) -> dict[str, Any]:
    fn = next(f for f in entry["function"] if wire_name(f["name"]) == name)
    return fn["parameters"]


def _edit(kind: str) -> Callable[[dict[str, Any], dict[str, Any], dict[str, list[Any]]], bool]:
    """An edit of one call's arguments in place; False when it does not apply."""

    def strings(args: dict[str, Any], schema: dict[str, Any]) -> list[str]:
        props = schema["properties"]
        return [
            p
            for p, v in args.items()
            if isinstance(v, str) and props.get(p, {}).get("type") == "string"
        ]

    def typed(args: dict[str, Any], schema: dict[str, Any], t: str, py: type) -> list[str]:
        props = schema["properties"]
        return [p for p, v in args.items() if type(v) is py and props.get(p, {}).get("type") == t]

    def edit(args: dict[str, Any], schema: dict[str, Any], possible: dict[str, list[Any]]) -> bool:
        s = strings(args, schema)
        if kind == "upper" and s:
            args[s[0]] = args[s[0]].upper()
        elif kind == "upper_all" and len(s) > 1:
            for p in s:
                args[p] = args[p].upper()
        elif kind == "spacing" and s:
            args[s[0]] = f" {args[s[0]]}. "
        elif kind == "squash" and s and " " in args[s[0]]:
            args[s[0]] = args[s[0]].replace(" ", "")
        elif kind == "int_for_str" and s:
            args[s[0]] = 7
        elif kind == "int_for_float" and (f := typed(args, schema, "float", float)):
            args[f[0]] = int(args[f[0]])
        elif kind == "float_for_int" and (i := typed(args, schema, "integer", int)):
            args[i[0]] = float(args[i[0]])
        elif kind == "str_for_int" and (i := typed(args, schema, "integer", int)):
            args[i[0]] = str(args[i[0]])
        elif kind == "bool_for_int" and (i := typed(args, schema, "integer", int)):
            args[i[0]] = True
        elif kind == "drop_required" and (
            r := [p for p in schema.get("required", []) if p in args]
        ):
            del args[r[0]]
        elif (
            kind == "drop_optional" and (o := [p for p in args if "" in possible.get(p, [])])
        ) or (
            kind == "drop_listed"
            and (
                o := [
                    p
                    for p in args
                    if "" not in possible.get(p, []) and p not in schema.get("required", [])
                ]
            )
        ):
            del args[o[0]]
        elif kind == "extra_unknown":
            args["zz_not_a_parameter"] = 1
        elif kind == "extra_known" and (
            k := [p for p in schema["properties"] if p not in possible]
        ):
            args[k[0]] = "x"
        elif kind == "second_value" and (
            two := [p for p in args if len([v for v in possible.get(p, []) if v != ""]) > 1]
        ):
            args[two[0]] = _concrete([v for v in possible[two[0]] if v != ""][1])
        else:
            return False
        return True

    return edit


EDITS = (
    "upper",
    "upper_all",
    "spacing",
    "squash",
    "int_for_str",
    "int_for_float",
    "float_for_int",
    "str_for_int",
    "bool_for_int",
    "drop_required",
    "drop_optional",
    "drop_listed",
    "extra_unknown",
    "extra_known",
    "second_value",
)


def perturbations(
    entry: dict[str, Any], answers: list[dict[str, Any]] | None
) -> Iterator[tuple[str, Output]]:
    """(label, output) pairs: the answer itself, then one change at a time."""
    names = [wire_name(f["name"]) for f in entry["function"]]
    yield "no_call", []
    yield "undecodable", None
    if not answers:  # irrelevance, relevance: any call of the first tool (if it has one)
        if names:
            yield "a_call", [{names[0]: {}}]
        return
    base = base_output(answers)
    yield "base", base
    for kind in EDITS:
        for index in range(len(base)):  # each call of a parallel answer in turn
            out = copy.deepcopy(base)
            ((name, args),) = out[index].items()
            ((_, possible),) = answers[index].items()
            if _edit(kind)(args, _props(entry, name), possible):
                yield f"{kind}@{index}", out
    yield "wrong_tool", [{"not_offered": next(iter(base[0].values()))}, *base[1:]]
    other = [n for n in names if n not in base[0]]
    if other:
        yield "other_tool", [{other[0]: next(iter(base[0].values()))}, *base[1:]]
    if len(base) > 1:
        yield "reversed", list(reversed(base))
        yield "one_call_short", base[:-1]
    yield "one_call_extra", [*base, base[0]]


# --- the two verdicts ------------------------------------------------------------------


def decision_for(case: Case, output: Output) -> ModelDecision:
    """The decision a model giving ``output`` would leave (None: undecodable arguments)."""
    if output is None:
        first = case.tools[0].name if case.tools else "f"
        call = ToolCall(name=first, arguments=None, raw_arguments='{"x": ', parse_error="cut")
        return ModelDecision(kind="tool_call", calls=[call])
    if not output:
        return ModelDecision(kind="text", text="I cannot help with that.")
    calls = [
        ToolCall(name=n, arguments=a, raw_arguments=orjson.dumps(a).decode(), call_id=f"c{i}")
        for i, item in enumerate(output)
        for n, a in item.items()
    ]
    return ModelDecision(kind="tool_call", calls=calls)


def toolstand_judgement(case: Case, output: Output) -> Judgement:
    return judge(case, decision_for(case, output), case.contract_for(EMPTY))


def toolstand_pass(case: Case, output: Output) -> tuple[bool, list[str]]:
    j = toolstand_judgement(case, output)
    return j["verdict_normalized"] == "pass", [e["code"] for e in j["errors"]]


def _at(value: Any, path: str) -> Any:
    """The value at a judge error's JSON path ($.a.b[0]) in the arguments."""
    for part in path.removeprefix("$").replace("[", ".").replace("]", "").split(".")[1:]:
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def _schema_at(schema: Any, path: str) -> Any:
    for part in path.removeprefix("$").replace("[", ".").replace("]", "").split(".")[1:]:
        if not isinstance(schema, dict):
            return None
        schema = (
            schema.get("items") if part.isdigit() else (schema.get("properties") or {}).get(part)
        )
    return schema


def _outside(value: Any, listed: list[Any], schema: Any) -> bool:
    """The value is one the answer lists (or an item of one), compared under the
    parameter's normalizers (a perturbed value of such an answer counts), and that
    listed value breaks the schema itself."""
    if not isinstance(schema, dict):
        return False
    check = validator_for(schema)
    got = orjson.dumps(normalize(value, schema))
    for option in listed:
        items = option if isinstance(option, list) else []
        for x in [option, *items]:
            if orjson.dumps(normalize(x, schema)) == got and not check.is_valid(x):
                return True
    return False


def schema_reason(
    case: Case, output: list[dict[str, Any]], answers: Any, j: Judgement
) -> str | None:
    """Why toolstand refuses a call BFCL takes: every violation is a value BFCL's answer
    lists (outside_schema), or an enum value several members equal under the normalizers."""
    tools = {t.name: t for t in case.tools or []}
    calls = [(n, a) for item in output for n, a in item.items()]
    truth = [p for item in answers or [] for p in item.values()]
    reasons = set()
    waived = {c["index"] for c in j["calls"] if c.get("normalized_valid")}
    for e in j["errors"]:
        if e["code"] != "invalid_arguments" or e["call_index"] in waived:
            continue
        name, arguments = calls[e["call_index"]]
        paired = j["calls"][e["call_index"]]["matched_expected"]
        path = e["path"]
        top = "$." + path.removeprefix("$.").split(".")[0].split("[")[0]
        listed = truth[paired].get(top.removeprefix("$."), []) if paired is not None else []
        params = tools[name].parameters if name in tools else {}
        schema, top_schema = _schema_at(params, path), _schema_at(params, top)
        value = _at(arguments, path)
        if _outside(value, listed, schema) or _outside(_at(arguments, top), listed, top_schema):
            reasons.add("outside_schema")
        elif e.get("subcode") == "enum" and isinstance(schema, dict):
            under = normalize(value, schema)
            members = [m for m in schema.get("enum") or [] if normalize(m, schema) == under]
            if len(members) != 1:  # one: the repair mends it; another fault fails the call
                reasons.add("ambiguous_enum" if members else "other")
        else:
            reasons.add("other")
    if reasons == {"outside_schema"}:
        return "outside_schema"
    return "ambiguous_enum" if reasons <= {"outside_schema", "ambiguous_enum"} and reasons else None


def _greedy(category: str, entry: dict[str, Any], output: Output, answers: Any) -> bool:
    """BFCL takes the same calls in another order: its greedy pairing missed them."""
    if category not in PARALLEL or not output or len(output) > 6:
        return False
    return any(
        bfcl_valid(category, entry["function"], list(order), answers)
        for order in itertools.permutations(output)
    )


def _undeclared(entry: dict[str, Any], output: Output) -> bool:
    """The call gives a parameter its BFCL function does not declare."""
    declared = {
        wire_name(f["name"]): set((f.get("parameters") or {}).get("properties") or {})
        for f in entry["function"]
    }
    return any(set(a) - declared.get(n, set(a)) for item in output or [] for n, a in item.items())


def classify(
    category: str, entry: dict[str, Any], answers: Any, label: str, case: Case, output: Output
) -> str | None:
    """The README's class of a disagreement, or None when it has none."""
    j = toolstand_judgement(case, output)
    codes = {e["code"] for e in j["errors"]}
    ours = j["verdict_normalized"] == "pass"
    if not ours and label == "undecodable" and "irrelevance" in category:
        return "undecodable"
    if not ours and output and "invalid_arguments" in codes and codes <= SCHEMA_ONLY:
        return schema_reason(case, output, answers, j)
    if ours and _greedy(category, entry, output, answers):
        return "greedy"
    if ours and _undeclared(entry, output):
        return "undeclared_parameter"
    return None


def entries_from_fixtures() -> Iterator[Entry]:
    answers = {a["id"]: a["ground_truth"] for cat in fx.ANSWERS.values() for a in cat}
    for category, entries in fx.QUESTIONS.items():
        for entry in entries:
            yield category, entry, answers.get(entry["id"])


@dataclass
class Comparison:
    """Calls compared, disagreements by class (with a first example each), those with
    no class, and calls where the transcription and the real checker differ."""

    total: int = 0
    classes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, tuple[str, str]] = field(default_factory=dict)
    unexplained: list[Any] = field(default_factory=list)
    transcription_off: list[Any] = field(default_factory=list)
    checked_by_ast: int = 0  # calls BFCL's ast_checker itself judged
    disagreed_by_ast: int = 0

    @property
    def agreed(self) -> int:
        return self.total - sum(self.classes.values()) - len(self.unexplained)


def compare(entries: Iterator[Entry], checker: Checker | None = None) -> Comparison:
    """Every perturbation of every entry, judged both ways. ``checker`` is BFCL's real
    checker; without it the transcription stands for BFCL."""
    out = Comparison()
    for category, entry, answers in entries:
        case = Case.model_validate(to_case(category, entry, answers))
        for label, output in perturbations(entry, answers):
            ours, _ = toolstand_pass(case, output)
            if output is None:
                theirs = "irrelevance" in category
            else:
                theirs = bfcl_valid(category, entry["function"], output, answers)
            if checker is not None:
                real = checker(category, entry, output, answers)
                if real != theirs:
                    out.transcription_off.append((entry["id"], label))
                theirs = real
            out.total += 1
            by_ast = output is not None and "relevance" not in category
            out.checked_by_ast += by_ast
            if ours == theirs:
                continue
            out.disagreed_by_ast += by_ast
            why = classify(category, entry, answers, label, case, output)
            if why is None:
                out.unexplained.append((entry["id"], label, output, ours, theirs))
            else:
                out.classes[why] += 1
                out.examples.setdefault(why, (entry["id"], label))
    return out


# --- the real checker, from its wheel --------------------------------------------------


def load_ast_checker(wheel: Path) -> types.ModuleType:
    """bfcl_eval's ast_checker from the wheel, nothing installed; model_config stubbed."""
    stub = types.ModuleType("bfcl_eval.constants.model_config")

    class _Config:
        underscore_to_dot = True  # the FC models: "." sent as "_"

    stub.MODEL_CONFIG_MAPPING = {"stub": _Config()}  # type: ignore[attr-defined]
    sys.path.insert(0, str(wheel))
    sys.modules["bfcl_eval.constants.model_config"] = stub
    try:
        import importlib

        return importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
    finally:
        sys.path.remove(str(wheel))
        # leave no bfcl_eval importable behind (the "installed" source tests look for one)
        for name in [n for n in sys.modules if n == "bfcl_eval" or n.startswith("bfcl_eval.")]:
            del sys.modules[name]


def real_entries(wheel: Path, per_category: int | None = None) -> Iterator[Entry]:
    with zipfile.ZipFile(wheel) as zf:
        for category in fx.QUESTIONS:
            name = f"bfcl_eval/data/BFCL_v4_{category}.json"
            lines = zf.read(name).splitlines()[:per_category]
            answers: dict[str, Any] = {}
            if "relevance" not in category:
                for line in zf.read(
                    f"bfcl_eval/data/possible_answer/BFCL_v4_{category}.json"
                ).splitlines():
                    a = orjson.loads(line)
                    answers[a["id"]] = a["ground_truth"]
            for line in lines:
                entry = orjson.loads(line)
                yield category, entry, answers.get(entry["id"])


def real_checker(wheel: Path) -> Checker:
    """BFCL's verdict on one output: its ast_checker where BFCL uses it; on the relevance
    categories and for undecodable arguments (where BFCL's runner decides before any
    checker) the transcription's rule."""
    module = load_ast_checker(wheel)
    language = module.Language.PYTHON

    def real(category: str, entry: dict[str, Any], output: Output, answers: Any) -> bool:
        if output is None:
            return "irrelevance" in category
        if "relevance" in category:
            return bfcl_valid(category, entry["function"], output, answers)
        try:
            result = module.ast_checker(
                entry["function"], output, answers, language, category, "stub"
            )
        except (KeyError, TypeError, AttributeError):  # BFCL itself trips on some outputs
            return False
        return bool(result["valid"])

    return real
