"""The fake tool executor: data-driven results, never a real action.

The defaults reproduce the seed's ``fake_execute``; a case's ``followup.tool_results``
overrides them per tool. Failures are RFC 9457 problem objects with a machine code
for the orchestrator (``code``, ``retryable``, ``retry_after``,
``owner_action_required``) and a message meant for the model.
"""

from __future__ import annotations

import copy
from typing import Any

from toolstand.cases import Case
from toolstand.decision import ToolCall

_PROBLEM_BASE = "https://toolstand.dev/problems/"


def problem(
    code: str,
    title: str,
    *,
    status: int,
    retryable: bool,
    owner_action_required: bool,
    retry_after: int | None = None,
    detail: str | None = None,
) -> dict[str, Any]:
    """A failed tool result: {"ok": false, "error": <RFC 9457 problem object>}."""
    error: dict[str, Any] = {
        "type": _PROBLEM_BASE + code.lower().replace("_", "-"),
        "title": title,
        "status": status,
        "detail": detail or title,
        "code": code,
        "message": detail or title,
        "retryable": retryable,
        "retry_after": retry_after,
        "owner_action_required": owner_action_required,
    }
    return {"ok": False, "error": error}


KNOWN_ORDER = "ORD-123456"


def default_result(call: ToolCall) -> dict[str, Any]:
    """The seed's fake_execute, with its errors as problem objects."""
    args = call.arguments or {}
    if call.arguments is None:
        return problem(
            "INVALID_ARGUMENTS",
            "Аргументы не являются JSON-объектом",
            status=422,
            retryable=False,
            owner_action_required=False,
        )
    if call.name == "get_order":
        if args.get("order_id") == KNOWN_ORDER:
            return {"ok": True, "status": "in_transit", "city": "Самара"}
        return problem(
            "ORDER_NOT_FOUND",
            "Заказ с таким идентификатором не найден",
            status=404,
            retryable=False,
            owner_action_required=True,
        )
    if call.name == "quote_delivery":
        return problem(
            "ROUTE_UNAVAILABLE",
            "Маршрут временно недоступен",
            status=503,
            retryable=True,
            retry_after=60,
            owner_action_required=False,
        )
    if call.name == "cancel_order":
        return problem(
            "ALREADY_SHIPPED",
            "Отмена после передачи перевозчику запрещена",
            status=409,
            retryable=False,
            owner_action_required=False,
        )
    return problem(
        "UNKNOWN_TOOL",
        "Неизвестный инструмент",
        status=404,
        retryable=False,
        owner_action_required=False,
    )


def execute(call: ToolCall, case: Case | None = None) -> dict[str, Any]:
    """The result for one call: the case's override for that tool, else the default."""
    if case is not None and case.followup is not None and call.name in case.followup.tool_results:
        return copy.deepcopy(case.followup.tool_results[call.name])
    return default_result(call)


def canned_results() -> dict[str, dict[str, Any]]:
    """Named results the TUI offers for editing before a second turn."""
    return {
        "success: order in transit": {"ok": True, "status": "in_transit", "city": "Самара"},
        "problem: ORDER_NOT_FOUND": default_result(
            ToolCall("get_order", {"order_id": "ORD-000000"}, None)
        ),
        "problem: ROUTE_UNAVAILABLE (retryable)": default_result(
            ToolCall("quote_delivery", {}, None)
        ),
        "problem: ALREADY_SHIPPED (permanent)": default_result(ToolCall("cancel_order", {}, None)),
        "problem: UPSTREAM_TIMEOUT (retry after 30 s)": problem(
            "UPSTREAM_TIMEOUT",
            "Сервис не ответил вовремя",
            status=503,
            retryable=True,
            retry_after=30,
            owner_action_required=False,
        ),
    }
