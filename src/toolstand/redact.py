"""Keeping API keys out of everything toolstand writes or shows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson

REDACTED = "***REDACTED***"
# headers that carry credentials, lower-case; they are dropped, not masked, so that no
# form of them (not even a prefix) reaches a record
SECRET_HEADERS: frozenset[str] = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cookie",
        "set-cookie",
    }
)
SECRET_PARAMS: frozenset[str] = frozenset({"key", "api_key", "api-key"})


def redact_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """The headers without any that carry credentials (names compared case-insensitively)."""
    if not headers:
        return {}
    return {k: v for k, v in headers.items() if k.lower() not in SECRET_HEADERS}


def redact_url(url: str) -> str:
    """The URL without a ``key=`` (or ``api_key=``) query parameter; the rest unchanged."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    kept = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in SECRET_PARAMS
    ]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def scrub(obj: Any, secrets: list[str]) -> Any:
    """``obj`` with every occurrence of each secret inside strings (values and keys, at
    any depth) replaced by ``***REDACTED***``: a copy when a secret occurs, else ``obj``
    itself. Empty secrets are ignored."""
    wanted = sorted({s for s in secrets if s}, key=len, reverse=True)
    if not wanted or (isinstance(obj, dict | list) and not _mentions(obj, wanted)):
        return obj
    return _scrub(obj, wanted)


def _mentions(obj: dict[Any, Any] | list[Any], secrets: list[str]) -> bool:
    """Whether a secret occurs anywhere in ``obj``: one orjson pass and a byte search,
    ~40x cheaper than walking a record, which almost never holds one. orjson escapes
    character by character, so the escaped secret is a substring of the escaped text."""
    try:
        blob = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # not JSON (a tuple key, a 65-bit int ...): walk it instead
        return True
    return any(orjson.dumps(s)[1:-1] in blob for s in secrets)


def _scrub(obj: Any, secrets: list[str]) -> Any:
    if isinstance(obj, str):
        for secret in secrets:
            if secret in obj:
                obj = obj.replace(secret, REDACTED)
        return obj
    if isinstance(obj, dict):
        return {_scrub(k, secrets): _scrub(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub(v, secrets) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_scrub(v, secrets) for v in obj)
    return obj
