"""JSON Schema patterns are ECMA-262 regular expressions; Python's ``re`` lacks the
Unicode property classes that zod and npm servers write (``\\p{L}``: any letter). The
ones ``re`` can spell are translated for validation (the schema itself is kept and sent
as written); a pattern still unreadable after that stays a load error."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from jsonschema import FormatChecker, ValidationError
from jsonschema.validators import extend

# property classes with an exact spelling in Python's re (Unicode-aware by default)
_CLASSES = {
    r"\p{L}": r"[^\W\d_]",
    r"\p{Letter}": r"[^\W\d_]",
    r"\P{L}": r"[\W\d_]",
    r"\p{Nd}": r"\d",
    r"\P{Nd}": r"\D",
}
_CLASS = re.compile("|".join(re.escape(k) for k in _CLASSES))


@cache
def python_pattern(pattern: str) -> str:
    """``pattern`` as Python's re reads what ECMA-262 means by it."""
    return _CLASS.sub(lambda m: _CLASSES[m.group(0)], pattern)


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not re.search(python_pattern(patrn), instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _regex(value: object) -> bool:
    return not isinstance(value, str) or bool(re.compile(python_pattern(value)))


FORMATS = FormatChecker()
FORMATS.checks("regex", raises=re.error)(_regex)


@cache
def with_ecma_patterns(cls: Any) -> Any:
    """The validator class ``cls`` whose ``pattern`` reads ECMA property classes."""
    return extend(cls, {"pattern": _pattern})
