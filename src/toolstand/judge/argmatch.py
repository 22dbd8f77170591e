"""Whether a call's arguments are the expected ones: exactly, or after normalizing.

An expected call names its arguments one of two ways (design.md, Cases): ``arguments``,
the one exact object; or ``accept`` (per parameter the list of acceptable values) with
``may_omit`` (the parameters that may be left out) — a parameter in neither must be
absent. Exact accuracy compares canonical JSON; the normalized comparison first applies
the parameter's declared ``x-normalize`` rules to both sides, and is used only for the
normalized metric and verdict, never for the exact one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolstand.judge.normalize import normalize
from toolstand.spec.cases import ExpectedCall
from toolstand.util.canonical import canonical_equal, canonical_json

# (parameter name, value) -> the value compared
_Transform = Callable[[str, Any], Any]


def _same(_name: str, value: Any) -> Any:
    return value


def accept_match(
    arguments: dict[str, Any],
    accept: dict[str, list[Any]],
    may_omit: list[str],
    transform: _Transform = _same,
) -> bool:
    """Every given parameter has one of its acceptable values; every absent one may be omitted."""
    for name, value in arguments.items():
        allowed = accept.get(name)
        if allowed is None:
            return False
        got = canonical_json(transform(name, value))
        if not any(canonical_json(transform(name, a)) == got for a in allowed):
            return False
    omissible = set(may_omit)
    return all(name in arguments or name in omissible for name in accept)


def exact_match(arguments: dict[str, Any] | None, exp: ExpectedCall) -> bool:
    """The arguments are the expected ones, compared canonically (1 and 1.0 differ)."""
    if arguments is None:
        return False
    if exp.accept is not None:
        return accept_match(arguments, exp.accept, exp.may_omit or [])
    return exp.arguments is not None and canonical_equal(arguments, exp.arguments)


def normalized_match(
    arguments: dict[str, Any] | None, exp: ExpectedCall, schema: dict[str, Any] | None
) -> bool:
    """The same after each parameter's declared ``x-normalize`` rules, on both sides."""
    if arguments is None:
        return False
    if exp.accept is not None:
        props = (schema or {}).get("properties") or {}

        def transform(name: str, value: Any) -> Any:
            return normalize(value, props.get(name))

        return accept_match(arguments, exp.accept, exp.may_omit or [], transform)
    return exp.arguments is not None and canonical_equal(
        normalize(arguments, schema), normalize(exp.arguments, schema)
    )


def expected_repr(exp: ExpectedCall) -> dict[str, Any] | None:
    """The expected arguments as an error's ``expected`` shows them."""
    if exp.accept is not None:
        return {"accept": exp.accept, "may_omit": exp.may_omit or []}
    return exp.arguments
