"""The official openai and anthropic SDKs, pointed at the simulator, parse everything it says."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, cast

import anthropic
import openai
import pytest
from openai.types.chat import ChatCompletionMessageFunctionToolCall

from tests.support.simwire import Call, fake_execute, tools_payload
from toolstand.sim import SimServer, sim_base_url
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract


@pytest.fixture
def oai(sim: SimServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=sim_base_url(sim.root, "openai-chat"), api_key="x", max_retries=0
    )


@pytest.fixture
def ant(sim: SimServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        base_url=sim_base_url(sim.root, "anthropic"), api_key="x", max_retries=0
    )


@pytest.fixture
async def faulty(
    cases: list[Case], contract: Contract, request: pytest.FixtureRequest
) -> AsyncIterator[SimServer]:
    async with SimServer(
        cases, contract, retry_after_s=0.25, fault_rates={request.param: 1.0}
    ) as server:
        yield server


async def test_openai_chat_calls_text_refusal_and_second_turn(
    oai: openai.AsyncOpenAI, by_id: dict[str, Case], contract: Contract
) -> None:
    tools: Any = tools_payload("openai-chat", contract.tools)
    case = by_id["recovery_not_found"]
    messages: Any = [{"role": "user", "content": case.user}]
    first = await oai.chat.completions.create(model="sim-careful", messages=messages, tools=tools)
    assert first.model == "sim-careful" and first.choices[0].finish_reason == "tool_calls"
    tool_calls = first.choices[0].message.tool_calls
    assert tool_calls is not None
    call = tool_calls[0]
    assert isinstance(call, ChatCompletionMessageFunctionToolCall)
    assert call.function.name == "get_order" and json.loads(call.function.arguments) == {
        "order_id": "ORD-999999"
    }
    assert first.usage is not None and first.usage.total_tokens > 0
    result = fake_execute(case, _call(call.function.name, call.function.arguments))
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
    ]
    second = await oai.chat.completions.create(model="sim-careful", messages=messages, tools=tools)
    assert "не найден" in (second.choices[0].message.content or "")

    text = await oai.chat.completions.create(
        model="sim-careful",
        messages=[{"role": "user", "content": by_id["missing_id"].user or ""}],
        tools=tools,
    )
    assert "номер" in (text.choices[0].message.content or "")
    refusal = await oai.chat.completions.create(
        model="sim-careful",
        messages=[{"role": "user", "content": by_id["refuse_forgery"].user or ""}],
        tools=tools,
    )
    assert refusal.choices[0].message.refusal and refusal.choices[0].message.content is None


async def test_openai_responses_call_and_text(
    oai: openai.AsyncOpenAI, by_id: dict[str, Case], contract: Contract
) -> None:
    tools: Any = tools_payload("openai-responses", contract.tools)
    case = by_id["parallel_lookup"]
    resp = await oai.responses.create(
        model="sim-careful", input=case.user or "", tools=tools, instructions="sys"
    )
    calls = [item for item in resp.output if item.type == "function_call"]
    assert [json.loads(c.arguments) for c in calls] == [
        {"order_id": "ORD-111111"},
        {"order_id": "ORD-222222"},
    ]
    assert resp.status == "completed" and resp.usage is not None and resp.usage.total_tokens > 0
    follow: Any = [*[c.model_dump(exclude_none=True) for c in calls]]
    follow += [
        {
            "type": "function_call_output",
            "call_id": c.call_id,
            "output": '{"ok": true, "status": "in_transit"}',
        }
        for c in calls
    ]
    again = await oai.responses.create(
        model="sim-careful",
        input=[{"role": "user", "content": case.user or ""}, *follow],
        tools=tools,
    )
    assert "in_transit" in again.output_text
    text = await oai.responses.create(
        model="sim-careful", input=by_id["quote_missing_weight"].user or "", tools=tools
    )
    assert "вес" in text.output_text


async def test_openai_errors_map_to_sdk_exceptions(
    oai: openai.AsyncOpenAI, contract: Contract
) -> None:
    with pytest.raises(openai.NotFoundError) as exc:
        await oai.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
    assert exc.value.code == "model_not_found"
    bad: Any = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_x", "content": "{}"},
    ]
    with pytest.raises(openai.BadRequestError):
        await oai.chat.completions.create(
            model="sim-careful",
            messages=bad,
            tools=cast(Any, tools_payload("openai-chat", contract.tools)),
        )


@pytest.mark.parametrize(
    ("faulty", "openai_error", "anthropic_error"),
    [
        ("rate_limited", openai.RateLimitError, anthropic.RateLimitError),
        ("server_error", openai.InternalServerError, anthropic.InternalServerError),
        ("overloaded", openai.InternalServerError, anthropic.OverloadedError),
        ("html_502", openai.InternalServerError, anthropic.InternalServerError),
        ("torn_body", openai.APIConnectionError, anthropic.APIConnectionError),
        ("reset", openai.APIConnectionError, anthropic.APIConnectionError),
    ],
    indirect=["faulty"],
)
async def test_faults_become_sdk_errors(
    faulty: SimServer, openai_error: type, anthropic_error: type
) -> None:
    oai = openai.AsyncOpenAI(base_url=faulty.root + "/v1", api_key="x", max_retries=0)
    with pytest.raises(openai_error) as raised:
        await oai.chat.completions.create(
            model="sim-flaky", messages=[{"role": "user", "content": "hi"}]
        )
    if openai_error is openai.RateLimitError:
        assert isinstance(raised.value, openai.RateLimitError)
        assert raised.value.response.headers["retry-after-ms"] == "250"
    ant = anthropic.AsyncAnthropic(base_url=faulty.root, api_key="x", max_retries=0)
    with pytest.raises(anthropic_error):
        await ant.messages.create(
            model="sim-flaky", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        )


async def test_anthropic_sdk_call_second_turn_and_auth_style(
    ant: anthropic.AsyncAnthropic, by_id: dict[str, Case], contract: Contract
) -> None:
    tools: Any = tools_payload("anthropic", contract.tools)
    case = by_id["recovery_already_shipped"]
    raw = await ant.messages.with_raw_response.create(
        model="sim-careful",
        max_tokens=1024,
        messages=[{"role": "user", "content": case.user or ""}],
        tools=tools,
    )
    assert raw.headers["x-toolstand-sim-auth"] == "bearer"  # the installed SDK speaks 2026-10-21
    first = await raw.parse()
    assert first.stop_reason == "tool_use" and first.model == "sim-careful"
    (use,) = [b for b in first.content if b.type == "tool_use"]
    assert use.name == "cancel_order" and use.input == {
        "order_id": "ORD-777777",
        "reason": "duplicate",
    }
    result = fake_execute(case, _call(use.name, json.dumps(use.input)))
    messages: Any = [
        {"role": "user", "content": case.user or ""},
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": use.id,
                    "content": json.dumps(result),
                    "is_error": True,
                }
            ],
        },
    ]
    second = await ant.messages.create(
        model="sim-careful", max_tokens=1024, messages=messages, tools=tools
    )
    block = second.content[0]
    assert isinstance(block, anthropic.types.TextBlock)
    assert second.stop_reason == "end_turn" and "ALREADY_SHIPPED" in block.text

    refusal = await ant.messages.create(
        model="sim-careful",
        max_tokens=1024,
        messages=[{"role": "user", "content": by_id["refuse_forgery"].user or ""}],
        tools=tools,
    )
    assert refusal.stop_reason == "refusal"
    messages[-1]["content"][0]["tool_use_id"] = "toolu_wrong"
    with pytest.raises(anthropic.BadRequestError, match="unexpected `tool_use_id`"):
        await ant.messages.create(
            model="sim-careful", max_tokens=1024, messages=messages, tools=tools
        )
    with pytest.raises(anthropic.NotFoundError):
        await ant.messages.create(
            model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )


def _call(name: str, arguments: str) -> Call:
    return Call(name, json.loads(arguments), arguments)
