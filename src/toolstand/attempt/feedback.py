"""What the fake executor answers a call whose arguments fail the tool's input schema.

Seed 002, section 4: the feedback is the place of the error, the value observed and the
list of what is allowed; each is measured apart, so each style below gives a known part:

- ``traceback``: the text an unguarded Python tool returns (``jsonschema.validate`` or
  ``json.loads`` raising), as a string error;
- ``path_value``: a validation problem (RFC 9457, status 422, ``INVALID_ARGUMENTS``) whose
  ``errors`` hold each violation's ``pointer``, ``received`` and a ``message`` that names
  the kind of fault and never what would be allowed;
- ``allowed``: the same problem, each violation with ``allowed`` taken from the schema
  (enum values, bounds, pattern, type, required names, known properties);
- ``allowed_prose``: the information of ``allowed`` as sentences in the ``detail``, with
  no ``errors`` list (prose against JSON, seed 002: no difference found).

Not to be confused with ``judge/normalize``, the judge's declared deterministic repairs.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from toolstand.adapters.base import ToolResult
from toolstand.attempt.executor import execute, problem
from toolstand.decision import ModelDecision, ToolCall
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract, ToolSpec
from toolstand.spec.violations import Violation, violations
from toolstand.util.canonical import json_type_name

TITLE = "The arguments do not match the tool's input schema"
_MESSAGES = {
    "invalid_json": "the arguments are not valid JSON ({why})",
    "missing_required": "a required property is missing",
    "additional_property": "this property is not part of the tool's input",
    "wrong_type": "the value has the wrong type ({got})",
    "enum": "the value is not one of the allowed values",
    "pattern": "the value does not match the required pattern",
    "range": "the value is out of the allowed range",
    "length": "the value's length is out of the allowed range",
    "format": "the value is not in the required format",
}


def _json_type(value: Any) -> str:
    """json_type_name, with an integer named as the schema's ``integer``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return "integer"
    return json_type_name(value)


def _fault(v: Violation) -> dict[str, Any]:
    """One schema violation as the feedback tells it: the kind of fault in words of its
    own, never jsonschema's (they name what would be allowed)."""
    message = _MESSAGES[v.subcode].format(got=_json_type(v.received))
    return {
        "kind": v.subcode,
        "pointer": v.pointer,
        "received": v.received,
        "message": message,
        "allowed": v.allowed,
    }


def _json_error(raw: str | None) -> str:
    try:
        json.loads(raw or "")
    except json.JSONDecodeError as exc:
        return str(exc)
    return "not a JSON object"


def faults(call: ToolCall, spec: ToolSpec) -> list[dict[str, Any]]:
    """Every fault of the call's arguments against its tool's schema (spec.violations),
    in path order; arguments that do not parse are the one fault ``invalid_json``. Each
    is ``{kind, pointer, received, message, allowed}``."""
    if call.arguments is None:
        why = _json_error(call.raw_arguments)
        allowed = {"type": "object", **_object_shape(spec.parameters)}
        msg = _MESSAGES["invalid_json"].format(why=why)
        return [
            {
                "kind": "invalid_json",
                "pointer": "",
                "received": call.raw_arguments,
                "message": msg,
                "allowed": allowed,
            }
        ]
    return [_fault(v) for v in violations(spec, call.arguments)]


def _object_shape(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(schema.get("properties"), dict):
        out["properties"] = list(schema["properties"])
    if isinstance(schema.get("required"), list):
        out["required"] = list(schema["required"])
    return out


def needs_repair(call: ToolCall, contract: Contract) -> bool:
    """A call to a contract tool whose arguments do not parse or fail its schema."""
    spec = contract.tool(call.name)
    if spec is None:
        return False
    return call.arguments is None or not spec.validator.is_valid(call.arguments)


def decision_needs_repair(decision: ModelDecision | None, contract: Contract) -> bool:
    return decision is not None and any(needs_repair(c, contract) for c in decision.calls)


# --- the four styles ---


def validation_problem(call: ToolCall, spec: ToolSpec, style: str) -> dict[str, Any]:
    """The tool result for one call that failed validation, in the given feedback style."""
    found = faults(call, spec)
    if style == "traceback":
        return {"ok": False, "error": traceback_text(call, spec)}
    detail = f"{len(found)} violation(s) in the arguments of {call.name}"
    if style == "allowed_prose":
        detail = " ".join(prose(v) for v in found)
    result = problem(
        "INVALID_ARGUMENTS",
        TITLE,
        status=422,
        retryable=False,
        owner_action_required=False,
        detail=detail,
    )
    if style in ("path_value", "allowed"):
        with_allowed = style == "allowed"
        result["error"]["errors"] = [_entry(v, with_allowed) for v in found]
    return result


def _entry(fault: dict[str, Any], with_allowed: bool) -> dict[str, Any]:
    keys = ("pointer", "received", "message", "allowed") if with_allowed else _PLACE_VALUE
    return {k: fault[k] for k in keys}


_PLACE_VALUE = ("pointer", "received", "message")


def _quote(value: Any) -> str:
    return orjson.dumps(value).decode()


def allowed_text(allowed: dict[str, Any]) -> str:
    """What the schema allows, as words: "one of "standard", "express"", "at most 1000"."""
    words = {
        "minimum": "at least {}",
        "maximum": "at most {}",
        "exclusiveMinimum": "more than {}",
        "exclusiveMaximum": "less than {}",
        "multipleOf": "a multiple of {}",
        "minLength": "at least {} characters",
        "maxLength": "at most {} characters",
        "minItems": "at least {} items",
        "maxItems": "at most {} items",
        "minProperties": "at least {} properties",
        "maxProperties": "at most {} properties",
        "minContains": "at least {} matching items",
        "maxContains": "at most {} matching items",
    }
    parts = []
    for key, value in allowed.items():
        if key == "enum":
            parts.append("one of " + ", ".join(_quote(x) for x in value))
        elif key == "const":
            parts.append(f"exactly {_quote(value)}")
        elif key == "type":
            parts.append(
                f"a value of type {' or '.join(value) if isinstance(value, list) else value}"
            )
        elif key == "pattern":
            parts.append(f"a string matching the pattern {value}")
        elif key == "format":
            parts.append(f"a string in the {value} format")
        elif key == "required":
            parts.append("the required properties " + ", ".join(value))
        elif key == "properties":
            parts.append("only the properties " + ", ".join(value))
        elif key in words:
            parts.append(words[key].format(_quote(value)))
        else:
            parts.append(f"{key} {_quote(value)}")
    return "; ".join(parts)


def prose(fault: dict[str, Any]) -> str:
    """One fault as a sentence: where, what came, what is wrong, what is allowed."""
    where = f"The field {fault['pointer']}" if fault["pointer"] else "The arguments"
    if fault["kind"] == "missing_required":
        got = "was not sent"
    elif fault["kind"] == "invalid_json":
        got = f"came as the text {_quote(fault['received'])}"
    else:
        got = f"received {_quote(fault['received'])}"
    return f"{where} {got}: {fault['message']}. Allowed: {allowed_text(fault['allowed'])}."


_TRACE_HEAD = (
    "Traceback (most recent call last):\n"
    '  File "tools/server.py", line 41, in call_tool\n'
    "    {line}\n"
)


def traceback_text(call: ToolCall, spec: ToolSpec) -> str:
    """What ``jsonschema.validate`` (or ``json.loads``) raising in an unguarded tool prints."""
    if call.arguments is None:
        return (
            _TRACE_HEAD.format(line="arguments = json.loads(raw_arguments)")
            + '  File "json/__init__.py", line 346, in loads\n'
            "    return _default_decoder.decode(s)\n"
            '  File "json/decoder.py", line 338, in decode\n'
            "    obj, end = self.raw_decode(s, idx=_w(s, 0).end())\n"
            f"json.decoder.JSONDecodeError: {_json_error(call.raw_arguments)}"
        )
    from jsonschema.exceptions import best_match

    err = best_match(spec.validator.iter_errors(call.arguments))
    return (
        _TRACE_HEAD.format(line="jsonschema.validate(arguments, TOOLS[name].input_schema)")
        + '  File "jsonschema/validators.py", line 1332, in validate\n'
        "    raise error\n"
        f"jsonschema.exceptions.ValidationError: {err}"
    )


def repair_results(
    decision: ModelDecision, style: str, contract: Contract, case: Case | None
) -> list[ToolResult]:
    """A result for every call of a turn: the validation problem for each call that
    failed, the usual fake result for the others (every call needs its answer)."""
    out = []
    for c in decision.calls:
        spec = contract.tool(c.name)
        if spec is not None and needs_repair(c, contract):
            result = validation_problem(c, spec, style)
        else:
            result = execute(c, spec, case)
        out.append(ToolResult(c.call_id, c.call_id_synthesized, c.name, result))
    return out
