"""The official openai and anthropic SDKs' streaming clients, pointed at the simulator, read
its streams as the same answers they read unstreamed; Gemini's stream is read with a plain
incremental SSE reader (no SDK)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.support.simwire import HEADERS, tools_payload
from toolstand.sim import SimServer, sim_base_url
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract


@pytest.fixture(params=["token", "random"])
async def chunked(
    request: pytest.FixtureRequest, cases: list[Case], contract: Contract
) -> AsyncIterator[SimServer]:
    async with SimServer(cases, contract, seed=3, stream_chunks=request.param) as server:
        yield server


def _oai(sim: SimServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=sim_base_url(sim.root, "openai-chat"), api_key="x", max_retries=0
    )


async def test_openai_chat_create_stream(
    chunked: SimServer, by_id: dict[str, Case], contract: Contract
) -> None:
    oai = _oai(chunked)
    tools: Any = tools_payload("openai-chat", contract.tools)
    messages: Any = [{"role": "user", "content": by_id["parallel_lookup"].user}]
    plain = await oai.chat.completions.create(model="sim-careful", messages=messages, tools=tools)
    stream = await oai.chat.completions.create(
        model="sim-careful",
        messages=messages,
        tools=tools,
        stream=True,
        stream_options={"include_usage": True},
    )
    args: dict[int, str] = {}
    names: dict[int, str] = {}
    finish = usage = None
    async for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for tc in choice.delta.tool_calls or []:
                assert tc.function is not None
                args[tc.index] = args.get(tc.index, "") + (tc.function.arguments or "")
                if tc.function.name:
                    names[tc.index] = tc.function.name
    expected = plain.choices[0].message.tool_calls or []
    assert [(names[i], json.loads(args[i])) for i in sorted(args)] == [
        (c.function.name, json.loads(c.function.arguments))  # type: ignore[union-attr]
        for c in expected
    ]
    assert finish == "tool_calls" and usage is not None and usage.total_tokens > 0
    # the SDK's own accumulator (chat.completions.stream) builds the same message
    async with oai.chat.completions.stream(
        model="sim-careful", messages=messages, tools=tools
    ) as helper:
        final = await helper.get_final_completion()
    got = final.choices[0].message.tool_calls or []
    # a second streamed arrival: a fresh draw with fresh ids, careful says the same
    assert [(c.function.name, c.function.arguments) for c in got] == [
        (c.function.name, c.function.arguments)  # type: ignore[union-attr]
        for c in expected
    ]
    assert got[0].id.startswith("call_sim") and got[0].id != expected[0].id
    # text
    messages = [{"role": "user", "content": by_id["missing_id"].user}]
    stream = await oai.chat.completions.create(
        model="sim-careful", messages=messages, tools=tools, stream=True
    )
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert "номер" in text


async def test_openai_responses_create_stream(
    chunked: SimServer, by_id: dict[str, Case], contract: Contract
) -> None:
    oai = _oai(chunked)
    tools: Any = tools_payload("openai-responses", contract.tools)
    user = by_id["quote_complete"].user or ""
    plain = await oai.responses.create(model="sim-careful", input=user, tools=tools)
    stream = await oai.responses.create(model="sim-careful", input=user, tools=tools, stream=True)
    kinds: list[str] = []
    deltas = ""
    final = None
    async for event in stream:
        kinds.append(event.type)
        if event.type == "response.function_call_arguments.delta":
            deltas += event.delta
        if event.type == "response.completed":
            final = event.response
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert final is not None and final.status == "completed"
    calls = [i for i in final.output if i.type == "function_call"]
    expected = [i for i in plain.output if i.type == "function_call"]
    assert [(c.name, c.arguments) for c in calls] == [(c.name, c.arguments) for c in expected]
    assert json.loads(deltas) == {
        "origin": "Казань",
        "destination": "Самара",
        "weight_kg": 2.5,
        "service": "express",
    }
    # the SDK's helper, which raises when response.completed is missing
    async with oai.responses.stream(model="sim-careful", input=user, tools=tools) as helper:
        got = await helper.get_final_response()
    assert [i.arguments for i in got.output if i.type == "function_call"] == [
        c.arguments for c in expected
    ]


async def test_anthropic_messages_stream(
    chunked: SimServer, by_id: dict[str, Case], contract: Contract
) -> None:
    ant = anthropic.AsyncAnthropic(
        base_url=sim_base_url(chunked.root, "anthropic"), api_key="x", max_retries=0
    )
    tools: Any = tools_payload("anthropic", contract.tools)
    for cid in ("parallel_lookup", "quote_missing_weight", "refuse_forgery"):
        messages: Any = [{"role": "user", "content": by_id[cid].user}]
        plain = await ant.messages.create(
            model="sim-careful", max_tokens=512, messages=messages, tools=tools
        )
        async with ant.messages.stream(
            model="sim-careful", max_tokens=512, messages=messages, tools=tools
        ) as stream:
            texts = [t async for t in stream.text_stream]
            final = await stream.get_final_message()
        assert final.stop_reason == plain.stop_reason and final.id == plain.id
        assert [b.model_dump() for b in final.content] == [b.model_dump() for b in plain.content]
        assert final.usage.output_tokens == plain.usage.output_tokens
        assert "".join(texts) == "".join(b.text for b in plain.content if b.type == "text")


class SseReader:
    """A plain incremental SSE reader: bytes in any pieces, events out (providers.md S1)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[bytes] = []
        self.events: list[Any] = []

    def feed(self, piece: bytes) -> None:
        self._buffer += piece
        while True:
            cut = min(
                (i for i in (self._buffer.find(b"\n"), self._buffer.find(b"\r")) if i >= 0),
                default=-1,
            )
            if cut < 0 or (self._buffer[cut : cut + 1] == b"\r" and cut + 1 == len(self._buffer)):
                return  # no whole line yet (a CR may be the first half of a CRLF)
            line = self._buffer[:cut]
            step = 2 if self._buffer[cut : cut + 2] == b"\r\n" else 1
            self._buffer = self._buffer[cut + step :]
            self._line(line)

    def _line(self, line: bytes) -> None:
        if not line:
            if self._data:
                self.events.append(json.loads(b"\n".join(self._data).decode("utf-8")))
            self._data = []
        elif line.startswith(b"data:"):
            value = line[5:]
            self._data.append(value[1:] if value.startswith(b" ") else value)


async def test_gemini_stream_read_with_a_plain_sse_reader(
    chunked: SimServer, by_id: dict[str, Case], contract: Contract
) -> None:
    tools = tools_payload("gemini", contract.tools)
    async with httpx.AsyncClient(base_url=chunked.root) as client:
        for cid in ("parallel_lookup", "missing_id"):
            body = {
                "contents": [{"role": "user", "parts": [{"text": by_id[cid].user}]}],
                "tools": tools,
            }
            plain = (
                await client.post(
                    "/v1beta/models/sim-careful:generateContent",
                    json=body,
                    headers=HEADERS["gemini"],
                )
            ).json()
            reader = SseReader()
            async with client.stream(
                "POST",
                "/v1beta/models/sim-careful:streamGenerateContent?alt=sse",
                json=body,
                headers=HEADERS["gemini"],
            ) as resp:
                assert resp.status_code == 200
                async for piece in resp.aiter_raw():
                    reader.feed(piece)
            parts = [
                p
                for e in reader.events
                for p in e["candidates"][0].get("content", {}).get("parts", [])
            ]
            calls = [p["functionCall"] for p in parts if "functionCall" in p]
            text = "".join(p.get("text", "") for p in parts)
            want = plain["candidates"][0]["content"]["parts"]
            assert calls == [p["functionCall"] for p in want if "functionCall" in p]
            assert text == "".join(p.get("text", "") for p in want)
            assert reader.events[-1]["candidates"][0]["finishReason"] == "STOP"
            assert reader.events[-1]["usageMetadata"] == plain["usageMetadata"]
