"""Canonical JSON: the one byte form used for hashes and argument comparison; and the
JSON name of a value's type, for messages."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, values untouched: 2.5 and "2.5" stay different."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def canonical_equal(a: Any, b: Any) -> bool:
    """Equality of canonical forms; 1 and True differ, as do missing and empty."""
    return canonical_json(a) == canonical_json(b)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_hash(value: Any) -> str:
    """SHA-256 of the canonical JSON of a value."""
    return sha256_hex(canonical_json(value).encode())


def json_type_name(value: Any) -> str:
    """The JSON name of a decoded value's type: null, boolean, number, string, array, object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__
