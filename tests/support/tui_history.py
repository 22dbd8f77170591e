"""The History screens' fixture history, written with fixed dates: two models over two
days, judged by the real adapter and judge (so re-judging agrees)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import orjson

from toolstand.adapters import get_adapter
from toolstand.judge.verdict import judge
from toolstand.spec.cases import load_cases
from toolstand.spec.contract import load_contract

TODAY = date(2026, 11, 28)
DAYS = ("2026-11-27", "2026-11-28")  # yesterday and today
MODELS = ("sim-careful", "sim-eager")  # configured in config.example.json: reruns work
CASES = ("direct_lookup", "missing_id", "cancel_implicit")
TOOLS = ["get_order", "quote_delivery", "cancel_order"]


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": name, "arguments": orjson.dumps(args).decode()}}]}  # fmt: skip


def _text(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


ANSWERS = {  # (model, case) -> the assistant message
    ("sim-careful", "direct_lookup"): _call("get_order", {"order_id": "ORD-123456"}),
    ("sim-careful", "missing_id"): _text("Назовите номер заказа, пожалуйста."),
    ("sim-careful", "cancel_implicit"): _text("Хотите отменить заказ? Подтвердите, пожалуйста."),
    ("sim-eager", "direct_lookup"): _call("get_order", {"order_id": "ORD-123456"}),
    ("sim-eager", "missing_id"): _call("get_order", {"order_id": "ORD-000001"}),
    ("sim-eager", "cancel_implicit"): _call("cancel_order", {"order_id": "ORD-654321", "reason": "changed_mind"}),
}  # fmt: skip


def fixture_records(root: Path) -> Iterator[dict[str, Any]]:
    """Attempts in the key order the runner writes, judged by the current code."""
    contract = load_contract(root / "contracts" / "delivery_tools.json")
    cases = load_cases(root / "cases" / "delivery.jsonl").by_id()
    adapter = get_adapter("openai-chat")
    minute = 0
    for day in DAYS:
        for model in MODELS:
            for case_id in CASES:
                for n in (1, 2):
                    minute += 1
                    msg = ANSWERS[(model, case_id)]
                    finish = "tool_calls" if msg.get("tool_calls") else "stop"
                    body = {"id": f"chatcmpl-{minute}", "object": "chat.completion",
                            "model": model, "choices": [{"index": 0, "message": msg,
                            "finish_reason": finish}],
                            "usage": {"prompt_tokens": 600, "completion_tokens": 12}}  # fmt: skip
                    case = cases[case_id]
                    decision = adapter.parse_decision(body)
                    j = judge(case, decision, contract, offered_tools=TOOLS, mode="auto")
                    yield {
                        "type": "attempt", "schema_version": 1, "run_id": f"run-{day}",
                        "provider": "sim", "api": "openai-chat", "model": model,
                        "simulated": True, "case_id": case_id, "category": case.category,
                        "mode": "auto", "attempt": n,
                        "started_at": f"{day}T09:{minute:02d}:00.000+00:00",
                        "elapsed_ms": 20.0 + minute, "latency_ms": 10.0 + minute,
                        "retries": 0, "transport_error": None,
                        "decision": decision.to_dict(), "judgement": j,
                        "usage": {"input_tokens": 600, "output_tokens": 12}, "cost_usd": None,
                        "adapter_version": "openai-chat/1", "toolstand_version": "0.1.0",
                        "api_settings": {}, "tool_choice": "auto", "offered_tools": TOOLS,
                        "blocked_tools": [], "user": case.last_user_text, "schema_notes": [],
                        "tries": [{"status": 200}], "request_hash": "0" * 64,
                        "request": {"method": "POST", "url": "http://sim/v1/chat/completions",
                                    "headers": {}, "body": {"model": model, "messages": [
                                        {"role": "user", "content": case.last_user_text}]}},
                        "response": {"status": 200, "headers": {}, "body": body,
                                     "body_is_json": True},
                        "second_turn": None,
                    }  # fmt: skip


def write_history(project: Path, name: str = "fixture.jsonl") -> list[dict[str, Any]]:
    """The fixture as a run file: each day's header, then that day's attempts."""
    recs = list(fixture_records(project))
    write_records(project, recs, name)
    return recs


def write_records(project: Path, recs: list[dict[str, Any]], name: str = "fixture.jsonl") -> None:
    """``recs`` (the fixture's, edited) as the run file write_history makes of them."""
    h1, h2 = (orjson.dumps(h) for h in headers())
    body = [orjson.dumps(r) for r in recs]
    half = len(body) // 2
    (project / "runs" / name).write_bytes(b"\n".join([h1, *body[:half], h2, *body[half:]]) + b"\n")


def headers() -> list[dict[str, Any]]:
    return [
        {"type": "run", "schema_version": 1, "run_id": f"run-{day}", "started_at": f"{day}T09:00:00+00:00",
         "contract": {"name": "delivery_tools", "version": "1.0.0"}, "prompt": {"version": "delivery-router-v1"},
         "cases": {"version": "delivery-fixture"},
         "runs": [{"provider": "sim", "model": m, "api": "openai-chat", "simulated": True} for m in MODELS]}
        for day in DAYS
    ]  # fmt: skip
