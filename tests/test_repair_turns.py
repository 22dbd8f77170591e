"""The repair loop on the wire, against a fake provider: a model that never mends its
call, a transport failure in a repair turn, and a huge received value."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import orjson

from toolstand.attempt.arms import run_attempt
from toolstand.attempt.plan import Target
from toolstand.spec.cases import Case
from toolstand.spec.config import Config
from toolstand.spec.contract import Contract, ToolSpec
from toolstand.transport import RetryPolicy, make_client

SHIP = ToolSpec(
    name="ship",
    description="Ship a parcel.",
    effect="prepare",
    parameters={
        "type": "object",
        "properties": {"service": {"type": "string", "enum": ["standard", "express"]}},
        "required": ["service"],
        "additionalProperties": False,
    },
)
CONTRACT = Contract(name="t", version="1", tools=[SHIP])
CASE = Case.model_validate(
    {
        "id": "ship",
        "user": "Ship it express",
        "expect": {"kind": "tool_call", "tool": "ship", "arguments": {"service": "express"}},
    }
)
BASE = "https://x.test/v1"


def _call(arguments: str, call_id: str) -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": "ship", "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"choices": [{"finish_reason": "tool_calls", "message": message}]}


def _attempt(
    answer: Callable[[int], httpx.Response], max_repairs: int = 3
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One attempt with repairs in the allowed style; ``answer(n)`` is the n-th response
    (0-based). The record and every request body sent."""
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(orjson.loads(request.content))
        return answer(len(sent) - 1)

    run = {"provider": "p", "model": "m", "api": "openai-chat", "base_url": BASE}
    cfg = Config.model_validate(
        {
            "runs": [run],
            "tools": "t.json",
            "cases": "c.jsonl",
            "repair": {"max_repairs": max_repairs, "feedback": ["allowed"]},
        }
    )

    async def go() -> dict[str, Any]:
        async with make_client(transport=httpx.MockTransport(handler)) as client:
            rec = await run_attempt(
                Target.make(cfg.runs[0], BASE, "k"),
                CASE,
                "auto",
                1,
                "r",
                contract=CONTRACT,
                config=cfg,
                system=None,
                client=client,
                policy=RetryPolicy(max_retries=0),
                feedback="allowed",
            )
        return dict(rec)

    return asyncio.run(go()), sent


def test_a_model_that_never_mends_its_call_gets_the_whole_budget_and_no_more() -> None:
    same = '{"service":"Express"}'
    rec, sent = _attempt(lambda n: httpx.Response(200, json=_call(same, f"c{n}")))
    assert len(sent) == 4  # turn 1 and three repair turns, then the loop stops
    assert rec["judgement"]["verdict"] == "fail"
    turns = rec["repair_turns"]
    assert [t["index"] for t in turns] == [1, 2, 3]
    assert all(not t["valid"] and t["judgement"]["verdict"] == "fail" for t in turns)
    # each turn answers the call just made, with the same feedback
    errors = [t["tool_results"][0]["result"]["error"]["errors"] for t in turns]
    assert errors[0] == errors[1] == errors[2]
    assert errors[0][0]["received"] == "Express"
    assert errors[0][0]["allowed"] == {"enum": ["standard", "express"]}
    assert [t["tool_results"][0]["call_id"] for t in turns] == ["c0", "c1", "c2"]
    summary = rec["repair"]
    assert summary["needed"] is True and summary["turns"] == 3
    assert summary["valid_after"] is None and summary["passed_after"] is None
    assert summary["transport_error"] is None


def test_a_transport_error_in_a_repair_turn_ends_the_loop_and_is_recorded() -> None:
    def answer(n: int) -> httpx.Response:
        if n == 0:
            return httpx.Response(200, json=_call('{"service":"Express"}', "c0"))
        return httpx.Response(500, json={"error": {"message": "boom"}})

    rec, sent = _attempt(answer)
    assert len(sent) == 2
    assert rec["transport_error"] is None and rec["judgement"]["verdict"] == "fail"
    (turn,) = rec["repair_turns"]
    assert turn["transport_error"]["code"] == "server_error"
    assert turn["decision"] is None and turn["judgement"] is None and turn["valid"] is False
    assert turn["usage"] == {"input_tokens": None, "output_tokens": None}
    assert rec["repair"]["transport_error"] == "server_error"
    assert rec["repair"]["turns"] == 1 and rec["repair"]["passed_after"] is None


def test_a_huge_received_value_is_sent_back_once_and_whole() -> None:
    """A 1 MB wrong value: the feedback names it in full (the model must see what it
    sent), once per violation, and the repair turn that mends it passes."""
    huge = "x" * 1_000_000 + "\x1b[2J\x9b"

    def answer(n: int) -> httpx.Response:
        arguments = orjson.dumps({"service": huge if n == 0 else "express"}).decode()
        return httpx.Response(200, json=_call(arguments, f"c{n}"))

    rec, sent = _attempt(answer)
    assert len(sent) == 2
    (turn,) = rec["repair_turns"]
    (entry,) = turn["tool_results"][0]["result"]["error"]["errors"]
    assert entry["received"] == huge and entry["pointer"] == "/service"
    body = orjson.dumps(sent[1]).decode()
    assert body.count("x" * 1_000_000) == 2  # turn 1's call, echoed, and the feedback
    assert turn["valid"] is True and rec["repair"]["passed_after"] == 1
