"""The fake tool executor: data-driven results, never a real action.

A tool's defaults are its contract's ``x-fake`` rules (the delivery example declares the
seed's ``fake_execute`` there); a case's ``followup.tool_results`` overrides them per tool. Failures are RFC 9457 problem objects with a machine code
for the orchestrator (``code``, ``retryable``, ``retry_after``,
``owner_action_required``) and a message meant for the model.
"""

from __future__ import annotations

import copy
from typing import Any

from toolstand.decision import ToolCall
from toolstand.spec.cases import Case
from toolstand.spec.contract import ToolSpec
from toolstand.util.canonical import canonical_equal

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


def default_result(call: ToolCall, tool: ToolSpec | None) -> dict[str, Any]:
    """The tool's first ``x-fake`` result whose ``when`` the arguments match; without
    one, ``{"ok": true}`` and the arguments echoed. Arguments that are not a JSON object
    and a tool the contract does not hold are problems whatever the contract says."""
    if call.arguments is None:
        return problem(
            "INVALID_ARGUMENTS",
            "Аргументы не являются JSON-объектом",
            status=422,
            retryable=False,
            owner_action_required=False,
        )
    if tool is None:
        return problem(
            "UNKNOWN_TOOL",
            "Неизвестный инструмент",
            status=404,
            retryable=False,
            owner_action_required=False,
        )
    for rule in tool.fake or ():
        if all(
            k in call.arguments and canonical_equal(call.arguments[k], v)
            for k, v in rule.when.items()
        ):
            return copy.deepcopy(rule.result)
    echoed = {k: v for k, v in call.arguments.items() if k != "ok"}
    return {"ok": True, **copy.deepcopy(echoed)}


def execute(call: ToolCall, tool: ToolSpec | None, case: Case | None = None) -> dict[str, Any]:
    """The result for one call of ``tool`` (None: not in the contract): the case's override
    for that tool, else the tool's default."""
    if case is not None and case.followup is not None and call.name in case.followup.tool_results:
        return copy.deepcopy(case.followup.tool_results[call.name])
    return default_result(call, tool)


def canned_results(tools: list[ToolSpec]) -> dict[str, dict[str, Any]]:
    """Named results the TUI offers for editing before a second turn: every ``x-fake``
    result of the contract, then a generic success and a generic retryable failure."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        for rule in tool.fake or ():
            out.setdefault(f"{tool.name}: {_label(rule.result)}", copy.deepcopy(rule.result))
    out["success: ok"] = {"ok": True}
    out["problem: UPSTREAM_TIMEOUT (retry after 30 s)"] = problem(
        "UPSTREAM_TIMEOUT",
        "Сервис не ответил вовремя",
        status=503,
        retryable=True,
        retry_after=30,
        owner_action_required=False,
    )
    return out


def _label(result: dict[str, Any]) -> str:
    error = result.get("error")
    if result.get("ok") is not False or not isinstance(error, dict):
        shown = ", ".join(f"{k}={v}" for k, v in result.items() if k != "ok")
        return f"success {shown}".strip()
    kind = "retryable" if error.get("retryable") else "permanent"
    return f"problem {error.get('code')} ({kind})"
