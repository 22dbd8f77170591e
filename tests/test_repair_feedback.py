"""The fake executor's validation feedback: one golden file per violation kind and style.

Regenerate after a deliberate change with TOOLSTAND_UPDATE_GOLDEN=1 and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from toolstand.attempt.feedback import (
    allowed_text,
    faults,
    needs_repair,
    repair_results,
    validation_problem,
)
from toolstand.decision import ModelDecision, ToolCall
from toolstand.spec.contract import Contract, parse_contract

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "repair_feedback"
STYLES = ("traceback", "path_value", "allowed", "allowed_prose")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
        "weight_kg": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000},
        "service": {"type": "string", "enum": ["standard", "express"]},
        "city": {"type": "string", "minLength": 2, "maxLength": 40},
    },
    "required": ["order_id", "service"],
    "additionalProperties": False,
}
VALID = {"order_id": "ORD-123456", "service": "standard"}
# one call per violation kind (design.md's sub-codes, plus invalid_json); no "format":
# the contract's validator checks no formats, so no call can fail one
CALLS: dict[str, ToolCall] = {
    "missing_required": ToolCall("ship", {"order_id": "ORD-123456"}, None),
    "additional_property": ToolCall("ship", {**VALID, "note": "asap"}, None),
    "wrong_type": ToolCall("ship", {**VALID, "weight_kg": "2,5"}, None),
    "enum": ToolCall("ship", {**VALID, "service": "Express"}, None),
    "pattern": ToolCall("ship", {**VALID, "order_id": "12345"}, None),
    "range": ToolCall("ship", {**VALID, "weight_kg": 1200}, None),
    "length": ToolCall("ship", {**VALID, "city": "M"}, None),
    "invalid_json": ToolCall("ship", None, '{"order_id": "ORD-12'),
}


@pytest.fixture(scope="module")
def ship() -> Contract:
    doc = {
        "name": "t",
        "version": "1.0.0",
        "tools": [{"name": "ship", "description": "Ship.", "parameters": SCHEMA}],
    }
    return parse_contract(orjson.dumps(doc), "t.json")


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("kind", list(CALLS))
def test_golden(kind: str, style: str, ship: Contract) -> None:
    spec = ship.tool("ship")
    assert spec is not None
    got = validation_problem(CALLS[kind], spec, style)
    path = GOLDEN / f"{kind}.{style}.json"
    text = orjson.dumps(got, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    if os.environ.get("TOOLSTAND_UPDATE_GOLDEN"):
        path.write_bytes(text)
    assert text.decode() == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", list(CALLS))
def test_each_kind_is_named_and_pointed(kind: str, ship: Contract) -> None:
    spec = ship.tool("ship")
    assert spec is not None
    found = faults(CALLS[kind], spec)
    assert [f["kind"] for f in found] == [kind]
    expected_pointer = {
        "missing_required": "/service",
        "additional_property": "/note",
        "wrong_type": "/weight_kg",
        "enum": "/service",
        "pattern": "/order_id",
        "range": "/weight_kg",
        "length": "/city",
        "invalid_json": "",
    }[kind]
    assert found[0]["pointer"] == expected_pointer


def test_styles_give_their_parts_only(ship: Contract) -> None:
    spec = ship.tool("ship")
    assert spec is not None
    call = CALLS["enum"]
    path_value = validation_problem(call, spec, "path_value")["error"]
    allowed = validation_problem(call, spec, "allowed")["error"]
    prose = validation_problem(call, spec, "allowed_prose")["error"]
    trace = validation_problem(call, spec, "traceback")
    for p in (path_value, allowed, prose):
        assert (p["status"], p["code"], p["retryable"]) == (422, "INVALID_ARGUMENTS", False)
    assert path_value["errors"] == [
        {
            "pointer": "/service",
            "received": "Express",
            "message": "the value is not one of the allowed values",
        }
    ]
    assert "standard" not in orjson.dumps(path_value).decode()  # no hint of what is allowed
    assert allowed["errors"][0]["allowed"] == {"enum": ["standard", "express"]}
    assert "errors" not in prose
    assert 'Allowed: one of "standard", "express".' in prose["detail"]
    assert trace["ok"] is False and isinstance(trace["error"], str)
    assert trace["error"].startswith("Traceback (most recent call last):")
    assert "jsonschema.exceptions.ValidationError: 'Express' is not one of" in trace["error"]


def test_allowed_text_words() -> None:
    assert allowed_text({"exclusiveMinimum": 0, "maximum": 1000}) == "more than 0; at most 1000"
    assert allowed_text({"required": ["a", "b"]}) == "the required properties a, b"


def test_results_answer_every_call(contract: Contract) -> None:
    bad = ToolCall("get_order", {"order_id": "ORD-1"}, None, "c1")
    good = ToolCall("get_order", {"order_id": "ORD-123456"}, None, "c2")
    assert needs_repair(bad, contract) and not needs_repair(good, contract)
    assert not needs_repair(ToolCall("no_such_tool", {}, None), contract)
    decision = ModelDecision(kind="tool_call", calls=[bad, good])
    results = repair_results(decision, "allowed", contract, None)
    assert [r.call_id for r in results] == ["c1", "c2"]
    assert results[0].result["error"]["code"] == "INVALID_ARGUMENTS"
    assert results[1].result == {"ok": True, "status": "in_transit", "city": "Самара"}


@pytest.mark.parametrize(
    ("sent", "got"),
    [
        (7, "integer"),
        (7.5, "number"),
        (True, "boolean"),
        (None, "null"),
        (["a"], "array"),
        ({"a": 1}, "object"),
    ],
)
def test_a_wrong_type_names_the_json_type_received(sent: Any, got: str, ship: Contract) -> None:
    spec = ship.tool("ship")
    assert spec is not None
    (f,) = faults(ToolCall("ship", {**VALID, "city": sent}, None), spec)
    assert f["kind"] == "wrong_type" and f["message"] == f"the value has the wrong type ({got})"
