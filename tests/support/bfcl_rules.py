"""A transcription of BFCL's AST checker (bfcl_eval/eval_checker/ast_eval/ast_checker.py,
2026.3.23) for Python, written from its published behaviour, to test toolstand's
``verdict_normalized`` against. Outputs and answers are BFCL's shapes: a list of
``{function name: {parameter: value}}``; answers list acceptable values per parameter.

Its quirks are kept on purpose: the parallel match is greedy in answer order; a value
whose type matches the answer's but not the schema's counts as a "variable"; strings
compare after standardize_string, one level into lists and dict values.
"""

from __future__ import annotations

import re
from typing import Any, cast

_STD = re.compile(r"[ ,./\-_*^]")
PY_TYPE: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}


def std(text: str) -> str:
    return _STD.sub("", text).lower().replace("'", '"')


def _answer_type(possible: list[Any]) -> type | None:
    return next((type(a) for a in possible if a != ""), None)


def _type_ok(
    value: Any, possible: list[Any], expected: type, nested: type | None
) -> tuple[bool, bool]:
    """(valid, is_variable) as BFCL's type_checker decides them."""
    answer_type = _answer_type(possible)
    is_variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if nested is None:
            return True, is_variable
        for item in possible:
            ok = True
            if isinstance(item, list):
                items = cast("list[Any]", value)  # type(value) is list here
                ok = all(_type_ok(v, item, nested, None)[0] for v in items)
            if ok:
                return True, is_variable
    if answer_type is not None and type(value) is answer_type:
        return True, True
    return False, False


def _std_any(value: Any) -> Any:
    return std(value) if type(value) is str else value


def _dict_ok(value: dict[str, Any], possibles: list[Any]) -> bool:
    for answer in possibles:
        if answer == "":
            continue
        ok = all(
            key in answer and _std_any(v) in [_std_any(a) for a in answer[key]]
            for key, v in value.items()
        )
        ok = ok and all(key in value or "" in vals for key, vals in answer.items())
        if ok:
            return True
    return False


def _list_dict_ok(value: list[Any], possibles: list[Any]) -> bool:
    for answer in possibles:
        if len(value) == len(answer) and all(
            _dict_ok(v, [a]) for v, a in zip(value, answer, strict=True)
        ):
            return True
    return False


def _list_ok(value: list[Any], possibles: list[Any]) -> bool:
    got = [_std_any(v) for v in value]
    return got in [[_std_any(a) for a in answer] for answer in possibles]


def simple_ok(function: dict[str, Any], output: dict[str, Any], answer: dict[str, Any]) -> bool:
    """One output call against one answer call (simple_function_checker)."""
    (possible,) = answer.values()
    name = function["name"].replace(".", "_")  # underscore_to_dot, as for FC models
    if name not in output:
        return False
    params = output[name]
    props = function["parameters"]["properties"]
    if any(r not in params for r in function["parameters"]["required"]):
        return False
    for param, value in params.items():
        if param not in props or param not in possible:
            return False
        kind = props[param]["type"]
        expected = PY_TYPE[kind]
        nested = PY_TYPE[props[param]["items"]["type"]] if kind in ("array", "tuple") else None
        if kind == "float" and type(value) is int:
            value = float(value)
        ok, is_variable = _type_ok(value, possible[param], expected, nested)
        if not ok:
            return False
        if not is_variable:
            if expected is dict:
                if not _dict_ok(value, possible[param]):
                    return False
                continue
            if expected is list and nested is dict:
                if not _list_dict_ok(value, possible[param]):
                    return False
                continue
            if expected is str:
                if std(value) not in [std(a) for a in possible[param] if type(a) is str]:
                    return False
                continue
            if expected is list:
                if not _list_ok(value, possible[param]):
                    return False
                continue
        if value not in possible[param]:
            return False
    return all(p in params or "" in vals for p, vals in possible.items())


def _describe(functions: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((f for f in functions if f["name"] == name), None)


def bfcl_valid(
    category: str, functions: list[dict[str, Any]], outputs: list[dict[str, Any]], answers: Any
) -> bool:
    """BFCL's verdict on one model output (ast_checker for calls; the relevance and
    irrelevance checks: no decodable call, at least one)."""
    if "irrelevance" in category:
        return not outputs
    if category == "live_relevance":
        return bool(outputs)
    if "parallel" in category:
        if len(outputs) != len(answers):
            return False
        used: list[int] = []
        for answer in answers:  # greedy, in answer order
            function = _describe(functions, next(iter(answer)))
            found = next(
                (
                    i
                    for i, out in enumerate(outputs)
                    if i not in used and function is not None and simple_ok(function, out, answer)
                ),
                None,
            )
            if found is None:
                return False
            used.append(found)
        return True
    if len(outputs) != 1:
        return False
    if "multiple" in category:
        function = _describe(functions, next(iter(answers[0])))
        return function is not None and simple_ok(function, outputs[0], answers[0])
    return simple_ok(functions[0], outputs[0], answers[0])
