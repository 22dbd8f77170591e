"""Shared test data for the adapter tests: a small contract and the fixture loader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from toolstand.adapters.base import RequestSettings
from toolstand.spec.contract import ToolSpec

BODIES = Path(__file__).resolve().parent.parent / "fixtures" / "bodies"

SYSTEM = "You route delivery requests to tools."
USER = "Где заказ ORD-123456?"
MESSAGES = [{"role": "user", "content": USER}]

GET_ORDER_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_id": {
            "type": "string",
            "pattern": "^ORD-[0-9]{6}$",
            "description": "An id like ORD-123456.",
        }
    },
    "required": ["order_id"],
    "additionalProperties": False,
}
GET_ORDER = ToolSpec(
    name="get_order",
    description="Get an order's state by its exact id.",
    effect="read",
    parameters=GET_ORDER_PARAMS,
)
QUOTE_DELIVERY = ToolSpec(
    name="quote_delivery",
    description="Quote a delivery between two cities.",
    effect="read",
    parameters={
        "type": "object",
        "properties": {
            "origin": {"type": "string", "minLength": 1, "x-normalize": ["strip", "casefold"]},
            "destination": {"type": "string", "minLength": 1, "x-normalize": ["strip"]},
            "weight_kg": {"type": "number", "exclusiveMinimum": 0, "maximum": 1000},
            "service": {"type": "string", "enum": ["standard", "express"]},
        },
        "required": ["origin", "destination", "weight_kg", "service"],
        "additionalProperties": False,
    },
)
CANCEL_ORDER = ToolSpec(
    name="cancel_order",
    description="Prepare an order cancellation. Only on an explicit request.",
    effect="execute",
    parameters={
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
            "reason": {"type": "string", "enum": ["duplicate", "changed_mind", "other"]},
        },
        "required": ["order_id", "reason"],
        "additionalProperties": False,
    },
)
TOOLS = [GET_ORDER, QUOTE_DELIVERY, CANCEL_ORDER]

PLANTED_KEY = "sk-PLANTED-123"


def body(api: str, name: str) -> Any:
    """A fixture body, parsed as the transport would parse it."""
    return orjson.loads((BODIES / api / f"{name}.json").read_bytes())


def html_502() -> str:
    return (BODIES / "error_502.html").read_text()


def settings(**kw: Any) -> RequestSettings:
    return RequestSettings(**kw)


def build(adapter: Any, tools: list[ToolSpec] | None = None, **kw: Any) -> Any:
    base_url = kw.pop("base_url", "https://api.example.test/v1")
    return adapter.build_request(
        base_url=base_url,
        model=kw.pop("model", "test-model"),
        system=kw.pop("system", SYSTEM),
        messages=kw.pop("messages", MESSAGES),
        tools=tools,
        settings=RequestSettings(**kw),
    )
