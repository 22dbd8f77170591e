"""Keeping API keys out of everything toolstand writes or shows.

Two means, for two kinds of place. Where the stand knows a key travels by name (the
auth headers, a ``key=`` query parameter, the userinfo of a URL), the value is dropped
or replaced whatever it is. Everywhere else a key can only be found by its text, so
``scrub`` replaces it inside string values: in headers, URLs, bodies, messages and
what was derived from them, and in the keys of objects that came from a provider (a
body, a call's arguments: a model can echo a key as a property name), never in the
fields the stand writes itself (provider, model, case id, the record's own keys),
which a short key could otherwise rewrite (a provider named ``ollama`` with the key
``ollama``). A key shorter than
``MIN_SECRET_LEN`` cannot be told from ordinary words and is not scrubbed from text
at all; the run header lists such keys (``short_keys``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson

REDACTED = "***REDACTED***"
# shorter keys match ordinary text ("ollama", "test", "x"): scrubbing them would
# rewrite words, ids and JSON, so they are kept out of files by name only
MIN_SECRET_LEN = 8
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
# the parts of an attempt record that hold what went to or came from a provider (and
# the case's user text): the only fields ``scrub_record`` looks into
# within those fields, the objects whose keys a provider chose (a body, a call's
# arguments and what the judge derived from them): their keys are scrubbed too
PROVIDER_OBJECTS: frozenset[str] = frozenset(
    {"body", "arguments", "repaired_arguments", "received", "args", "input", "actual"}
)
TRAVELLED_FIELDS: tuple[str, ...] = (
    "user",
    "request",
    "response",
    "tries",
    "transport_error",
    "decision",
    "judgement",
    "second_turn",
    # repair turns carry their own request and answer (held as received until written)
    "repair_turns",
    "feedback",
)


def redact_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """The headers without any that carry credentials (names compared case-insensitively)."""
    if not headers:
        return {}
    return {k: v for k, v in headers.items() if k.lower() not in SECRET_HEADERS}


def redact_userinfo(url: str) -> str:
    """The URL with any ``user:password@`` replaced by ``***REDACTED***@``. Works on text
    that does not parse as a URL too (an error message may quote a bad one): the
    authority runs from ``//`` to the first ``/``, ``?`` or ``#``, its userinfo up to
    its last ``@``, as in ``urllib.parse``."""
    start = url.find("//")
    if start < 0 or "@" not in url:
        return url
    start += 2
    end = len(url)
    for sep in "/?#":
        found = url.find(sep, start)
        if 0 <= found < end:
            end = found
    at = url.rfind("@", start, end)
    return url if at < 0 else url[:start] + REDACTED + url[at:]


def redact_url(url: str) -> str:
    """The URL without userinfo and without a ``key=`` (or ``api_key=``) query
    parameter; the rest unchanged."""
    url = redact_userinfo(url)
    if "?" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL: its query cannot be read apart, so none is kept
        return url.partition("?")[0]
    if not parts.query:
        return url
    kept = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in SECRET_PARAMS
    ]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def url_password(url: str) -> str | None:
    """The password in a URL's userinfo, if it has one (a secret like any key)."""
    try:
        return urlsplit(url).password
    except ValueError:
        return None


def url_secrets(url: str) -> list[str]:
    """Every secret a URL carries: its userinfo password and the values of its ``key=``
    (``api_key=``, ``api-key=``) query parameters, to be scrubbed wherever they echo."""
    out = [url_password(url)]
    if "?" in url:
        try:
            query = urlsplit(url).query
        except ValueError:
            query = ""
        out += [
            v for k, v in parse_qsl(query, keep_blank_values=True) if k.lower() in SECRET_PARAMS
        ]
    return [s for s in out if s]


def scrubbable(secrets: Iterable[str | None]) -> list[str]:
    """The secrets that can be told from ordinary text (``MIN_SECRET_LEN`` or more
    characters), each once, longest first so that a key holding another goes whole."""
    wanted = {s for s in secrets if s and len(s) >= MIN_SECRET_LEN}
    # this runs for every body and record: most runs have one key, nothing to sort
    return list(wanted) if len(wanted) < 2 else sorted(wanted, key=len, reverse=True)


def scrub(obj: Any, secrets: Iterable[str | None]) -> Any:
    """``obj``, something that came from a provider or goes to one, with every
    occurrence of each secret in its string values and object keys (at any depth)
    replaced by ``***REDACTED***``: a copy when a secret occurs, else ``obj`` itself.
    Short and empty secrets are ignored."""
    wanted = scrubbable(secrets)
    if not wanted or (isinstance(obj, dict | list) and not _mentions(obj, wanted)):
        return obj
    return _scrub(obj, wanted, keys=True)


def scrub_record(rec: dict[str, Any], secrets: Iterable[str | None]) -> dict[str, Any]:
    """An attempt record with the secrets scrubbed from ``TRAVELLED_FIELDS`` only: the
    stand's own fields (ids, names, codes) and keys are written as they are; the keys
    of ``PROVIDER_OBJECTS`` within them are scrubbed like values."""
    wanted = scrubbable(secrets)
    if not wanted or not _mentions(rec, wanted):
        return rec
    return {k: _scrub(v, wanted) if k in TRAVELLED_FIELDS else v for k, v in rec.items()}


def _mentions(obj: dict[Any, Any] | list[Any], secrets: list[str]) -> bool:
    """Whether a secret occurs anywhere in ``obj``: one orjson pass and a byte search,
    ~40x cheaper than walking a record, which almost never holds one. orjson escapes
    character by character, so the escaped secret is a substring of the escaped text."""
    try:
        blob = orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # not JSON (a tuple key, a 65-bit int ...): walk it instead
        return True
    return any(orjson.dumps(s)[1:-1] in blob for s in secrets)


def _scrub(obj: Any, secrets: list[str], *, keys: bool = False) -> Any:
    """``keys``: whether this object's keys came from a provider (then they are
    scrubbed, and so is everything below); else only ``PROVIDER_OBJECTS`` turn it on."""
    if isinstance(obj, str):
        return _scrub_text(obj, secrets)
    if isinstance(obj, dict):
        return {
            (_scrub_text(k, secrets) if keys and isinstance(k, str) else k): _scrub(
                v, secrets, keys=keys or k in PROVIDER_OBJECTS
            )
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_scrub(v, secrets, keys=keys) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_scrub(v, secrets, keys=keys) for v in obj)
    return obj


def _scrub_text(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
