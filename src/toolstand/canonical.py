"""Canonical JSON: the one byte form used for hashes and argument comparison."""

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
