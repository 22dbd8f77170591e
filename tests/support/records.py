"""Hand-built history records following docs/records.md, for the report/metrics tests.

``attempt`` writes keys in the order the fast readers want (history/read.py, "Key order");
``lead_order`` rewrites a record in another order to prove the readers only get slower,
never wrong, on a line that does not follow it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from toolstand.util.canonical import canonical_json

SIG_TEXT = canonical_json(["text", [], []])


def sig(name: str, args: dict[str, Any] | None = None) -> str:
    return canonical_json(["tool_call", [name], [canonical_json(args or {})]])


def err(code: str, subcode: str | None = None, *, turn: int = 1, **kw: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"code": code}
    if subcode:
        e["subcode"] = subcode
    e.update(kw)
    e["turn"] = turn
    return e


def judgement(
    *,
    errors: list[dict[str, Any]] | None = None,
    expects_call: bool = True,
    called: bool = True,
    decision_correct: bool = True,
    tool_selection_correct: bool | None = True,
    calls_made: int = 1,
    calls_schema_valid: int = 1,
    exact_denominator: int = 1,
    exact_correct: int = 1,
    normalized_correct: int | None = None,
    unsafe: bool = False,
    signature: str | None = None,
) -> dict[str, Any]:
    errors = errors or []
    return {
        "verdict": "fail" if errors else "pass",
        "metrics": {
            "expects_call": expects_call,
            "called": called,
            "decision_correct": decision_correct,
            "tool_selection_correct": tool_selection_correct if expects_call else None,
            "calls_made": calls_made,
            "calls_schema_valid": calls_schema_valid,
            "exact_denominator": exact_denominator,
            "exact_correct": exact_correct,
            "normalized_correct": exact_correct
            if normalized_correct is None
            else normalized_correct,
            "unsafe": unsafe,
            "signature": signature if signature is not None else sig("get_order"),
        },
        "unsafe": unsafe,
        "flags": [],
        "errors": errors,
        "calls": [
            {
                "index": 0,
                "name": "get_order",
                "repaired_arguments": {"a": 1, "request": "x"},
                "exact": True,
            }
        ],
    }


def text_judgement(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "expects_call": False,
        "called": False,
        "calls_made": 0,
        "calls_schema_valid": 0,
        "exact_denominator": 0,
        "exact_correct": 0,
        "signature": SIG_TEXT,
    }
    base.update(kw)
    return judgement(**base)


def second_turn(
    *,
    passed: bool = True,
    transport_error: dict[str, Any] | None = None,
    errors: list[dict[str, Any]] | None = None,
    retries: int = 0,
) -> dict[str, Any]:
    j = None
    if transport_error is None:
        j = {"verdict": "pass" if passed else "fail", "errors": errors or [], "passed": passed}
    return {
        "transport_error": transport_error,
        "judgement": j,
        "elapsed_ms": 5.0,
        "retries": retries,
        "tool_results": [{"call_id": "c1", "name": "get_order", "result": {"ok": False}}],
        "request": {"body": {"messages": [{"role": "tool", "content": '{"request": 1}'}]}},
        "request_hash": "0" * 64,
        "tries": [],
        "response": {"status": 200, "body": {"errors": [], "second_turn": None}},
        "decision": {"kind": "text", "text": "Sorry, the order was not found.", "calls": []},
    }


def transport(code: str, message: str = "failed", status: int | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "status": status}


def attempt(
    case_id: str,
    n: int = 1,
    *,
    provider: str = "sim",
    model: str = "sim-careful",
    api: str = "openai-chat",
    mode: str = "auto",
    j: dict[str, Any] | None = None,
    transport_error: dict[str, Any] | None = None,
    st: dict[str, Any] | None = None,
    elapsed_ms: float = 10.0,
    usage: dict[str, Any] | None = None,
    retries: int = 0,
    cost_usd: float | None = None,
    simulated: bool = True,
    run_id: str = "run-1",
) -> dict[str, Any]:
    """One attempt; a judgement defaults to a pass unless a transport error is given."""
    if transport_error is None and j is None:
        j = judgement()
    if transport_error is not None:
        j = None
    if usage is None and transport_error is None:
        usage = {"input_tokens": 100, "output_tokens": 10}
    return {
        "type": "attempt",
        "provider": provider,
        "model": model,
        "api": api,
        "mode": mode,
        "case_id": case_id,
        "attempt": n,
        "simulated": simulated,
        "elapsed_ms": elapsed_ms,
        "retries": retries,
        "usage": usage,
        "cost_usd": cost_usd,
        "transport_error": transport_error,
        "second_turn": st,
        "judgement": j,
        "schema_version": 1,
        "run_id": run_id,
        "category": "positive",
        "started_at": "2026-11-29T19:00:00Z",
        "latency_ms": elapsed_ms,
        "adapter_version": "openai-chat/1",
        "offered_tools": ["get_order", "quote_delivery", "cancel_order"],
        "blocked_tools": [],
        "tool_choice": "auto",
        "request_hash": "1" * 64,
        "tries": [],
        # bulky tail; its keys echo the small ones to catch a slicer that cuts in it
        "request": {
            "method": "POST",
            "body": {"messages": [{"role": "user", "content": "x"}], "judgement": {}},
        },
        "response": {"status": 200, "body": {"errors": ["x"], "request": {"second_turn": 1}}},
        "decision": {"kind": "tool_call", "calls": [{"name": "get_order", "arguments": {}}]},
    }


def lead_order(rec: dict[str, Any]) -> dict[str, Any]:
    """The same record with decision and judgement before request and second_turn last."""
    front = [k for k in rec if k not in ("judgement", "second_turn", "request", "response")]
    out = {k: rec[k] for k in front}
    out["judgement"] = rec["judgement"]
    out["request"] = rec["request"]
    out["response"] = rec["response"]
    out["second_turn"] = rec["second_turn"]
    return out


def header(
    run_id: str = "run-1",
    *,
    contract_hash: str = "c" * 64,
    cases_hash: str = "d" * 64,
    prompt_hash: str = "e" * 64,
    prompt_version: str = "delivery-router-v1",
    cases_version: str = "delivery-v1",
    runs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "type": "run",
        "schema_version": 1,
        "run_id": run_id,
        "started_at": "2026-11-29T19:00:00Z",
        "toolstand_version": "0.1.0",
        "contract": {"name": "delivery_tools", "version": "1.0", "hash": contract_hash},
        "cases": {"path": "cases.jsonl", "hash": cases_hash, "version": cases_version},
        "prompt": {"version": prompt_version, "hash": prompt_hash},
        "settings": {"repetitions": 3, "modes": ["auto"]},
        "runs": runs
        if runs is not None
        else [{"provider": "sim", "model": "sim-careful", "api": "openai-chat", "simulated": True}],
    }


def write_jsonl(path: Path, records: list[dict[str, Any]], *, tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records) + tail)
    return path
