"""What OpenAI's two APIs share on the wire (their API reference): Bearer auth,
the ``{"error": {message, type, param, code}}`` envelope with retry-after(-ms), and the
tool_choice encodings."""

from __future__ import annotations

from typing import Any

from toolstand.sim.turn import Choice, ErrorKind, WireError

_TYPES: dict[ErrorKind, tuple[int, str, str | None]] = {
    "auth": (401, "invalid_request_error", None),
    "bad_request": (400, "invalid_request_error", None),
    "not_found": (404, "invalid_request_error", None),
    "model_not_found": (404, "invalid_request_error", "model_not_found"),
    "rate_limited": (429, "requests", "rate_limit_exceeded"),
    "server_error": (500, "server_error", None),
    "overloaded": (503, "server_error", None),
}

MISSING_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization "
    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
)


def bearer(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class OpenAIBase:
    request_id_header = "x-request-id"

    def authorize(self, headers: dict[str, str], query: dict[str, str]) -> dict[str, str]:
        if bearer(headers) is None:
            raise WireError("auth", MISSING_KEY)
        return {}

    def error(
        self,
        kind: ErrorKind,
        message: str,
        rid: str,
        retry_after_s: float = 0.0,
        param: str | None = None,
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, etype, code = _TYPES[kind]
        body = {"error": {"message": message, "type": etype, "param": param, "code": code}}
        headers = {}
        if kind == "rate_limited":
            headers = {
                "retry-after": f"{retry_after_s:g}",
                "retry-after-ms": str(round(retry_after_s * 1000)),
            }
        return status, body, headers


def tool_choice(
    raw: Any, names: list[str], *, nested: bool
) -> tuple[Choice, str | None, list[str] | None]:
    """(mode, forced name, allowed subset) from an OpenAI tool_choice value."""
    if raw is None:
        return ("auto" if names else "none"), None, None
    if raw == "auto" or raw == "none" or raw == "required":
        return raw, None, None
    if isinstance(raw, dict):
        if raw.get("type") == "function":
            fn = raw.get("function") if nested else raw
            name = fn.get("name") if isinstance(fn, dict) else None
            if not isinstance(name, str) or name not in names:
                raise WireError(
                    "bad_request",
                    f"Invalid value for 'tool_choice': no tool named {name!r} in 'tools'.",
                    "tool_choice",
                )
            return "forced", name, None
        if raw.get("type") == "allowed_tools":
            spec = raw.get("allowed_tools", {}) if nested else raw
            mode = spec.get("mode", "auto")
            picked = []
            for tool in spec.get("tools", []):
                fn = tool.get("function", {}) if nested else tool
                picked.append(fn.get("name"))
            return ("required" if mode == "required" else "auto"), None, picked
    raise WireError("bad_request", f"Invalid value for 'tool_choice': {raw!r}.", "tool_choice")


def token_limit(body: dict[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise WireError("bad_request", f"Invalid '{key}': expected an integer >= 1.", key)
    return value
