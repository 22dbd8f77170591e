"""JSON that is valid but that orjson cannot hold: a number beyond a double's range
(``1e400``) and a lone surrogate escape (``"\\ud800"``). Both are JSON (RFC 8259 sets
no number limit, and allows any ``\\uXXXX``), so a body holding one is still the API's
JSON, never "body is not JSON" (issue 31 M5). Each such value becomes text that can be
written and that no schema of its type accepts: the number as written (a string, so a
``number`` schema gives ``invalid_arguments``), the string with its surrogates shown as
``\\udXXX`` escapes."""

from __future__ import annotations

import json
import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def loads_lenient(text: str | bytes) -> Any:
    """Parse JSON that orjson refused, with the values it cannot hold made text.
    Raises ValueError (json.JSONDecodeError) when the text is not JSON at all."""
    # UTF-8 only (json.loads would guess UTF-16 from bytes); UnicodeDecodeError is a ValueError
    decoded = text.decode("utf-8") if isinstance(text, bytes) else text
    value = json.loads(decoded, parse_float=_number, parse_int=_integer, parse_constant=_refuse)
    return _writable(value)


def _number(text: str) -> float | str:
    number = float(text)
    return number if math.isfinite(number) else text


def _integer(text: str) -> int | str:
    # beyond 64 bits no JSON writer the stand uses can hold it: kept as written
    number = int(text)
    return number if -(2**63) <= number < 2**64 else text


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _writable(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    if isinstance(value, list):
        return [_writable(v) for v in value]
    if isinstance(value, dict):
        return {_writable(k): _writable(v) for k, v in value.items()}
    return value
