"""The simulator's streams on the wire: each API's event shapes (providers.md section S), the
same answer as unstreamed, and the three ways of cutting a stream (sim.stream_chunks)."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from tests.support.simstream import assemble, streamed, terminal_response
from tests.support.simwire import Read, build, for_case, read, send
from toolstand.sim import SimServer
from toolstand.sim.stream import PIECE_MAX, TOKEN_SIZES
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract
from toolstand.types import APIS

MODES = ("token", "whole", "random")


def same(a: Read, b: Read) -> None:
    assert (a.kind, a.text) == (b.kind, b.text)
    assert [(c.name, c.arguments, c.raw if c.arguments is None else None) for c in a.calls] == [
        (c.name, c.arguments, c.raw if c.arguments is None else None) for c in b.calls
    ]


async def twins(
    client: httpx.AsyncClient, api: str, case: Case, contract: Contract
) -> tuple[dict[str, Any], list[Any]]:
    """sim-careful's unstreamed body for a case, and the events of its streamed twin."""
    body = for_case(api, "sim-careful", case, contract)
    plain = (await send(client, api, "sim-careful", body)).json()
    _, _, events = await streamed(client, api, "sim-careful", body)
    return plain, events


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
async def test_every_case_streams_the_answer_it_gives_unstreamed(
    api: str, mode: str, cases: list[Case], contract: Contract
) -> None:
    # sim-sloppy draws per call, so a streamed answer that got other draws would differ
    async with (
        SimServer(cases, contract, seed=11, stream_chunks=mode) as sim,  # type: ignore[arg-type]
        httpx.AsyncClient(base_url=sim.root, timeout=10) as client,
    ):
        # random mode writes a socket piece per few bytes: a quarter of the cases will do
        some = cases[::4] if mode == "random" else cases
        for model in ("sim-sloppy", "sim-eager"):
            for case in some:
                body = for_case(api, model, case, contract)
                plain = await send(client, api, model, body)
                _, _, events = await streamed(client, api, model, body)
                same(read(api, assemble(api, events)), read(api, plain.json()))
                if api == "openai-responses":
                    whole = terminal_response(events)
                    assert whole["output"] == plain.json()["output"]
                    same(read(api, whole), read(api, plain.json()))
        logged = [(r.streamed, r.outcome) for r in sim.request_log]
        assert logged[0::2] == [(False, o) for _, o in logged[1::2]]
        assert [s for s, _ in logged] == [False, True] * (2 * len(some))


async def test_chat_stream_shape(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    plain, events = await twins(client, "openai-chat", by_id["parallel_lookup"], contract)
    assert events[-1].data == "[DONE]" and all(e.name is None for e in events)
    chunks = [e.json for e in events[:-1]]
    assert {(c["id"], c["object"], c["model"]) for c in chunks} == {
        (plain["id"], "chat.completion.chunk", "sim-careful")
    }
    first = chunks[0]["choices"][0]["delta"]
    assert first["role"] == "assistant" and first["content"] is None and first["refusal"] is None
    entries = [tc for c in chunks[:-2] for tc in c["choices"][0]["delta"]["tool_calls"]]
    openers = [e for e in entries if "id" in e]
    assert [(e["index"], e["type"], e["function"]["arguments"]) for e in openers] == [
        (0, "function", ""),
        (1, "function", ""),
    ]
    assert [e["id"] for e in openers] == [
        c["id"] for c in plain["choices"][0]["message"]["tool_calls"]
    ]
    rest = [e for e in entries if "id" not in e]
    assert all(
        set(e) == {"index", "function"} and set(e["function"]) == {"arguments"} for e in rest
    )
    assert [e["index"] for e in entries] == sorted(e["index"] for e in entries)  # never interleaved
    finish, usage = chunks[-2], chunks[-1]
    assert finish["choices"] == [
        {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}
    ]
    assert usage["choices"] == [] and usage["usage"] == plain["usage"]
    assert all(c["usage"] is None for c in chunks[:-1])
    # without include_usage: no usage key, no usage chunk
    body = for_case("openai-chat", "sim-careful", by_id["parallel_lookup"], contract)
    _, _, events = await streamed(client, "openai-chat", "sim-careful", body, usage=False)
    assert (
        all("usage" not in e.json for e in events[:-1])
        and events[-2].json["choices"][0]["finish_reason"]
    )


async def test_chat_text_and_refusal_deltas(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    for cid, key in (("missing_id", "content"), ("refuse_forgery", "refusal")):
        body = for_case("openai-chat", "sim-careful", by_id[cid], contract)
        _, _, events = await streamed(client, "openai-chat", "sim-careful", body)
        deltas = [e.json["choices"][0]["delta"] for e in events[:-3]]
        other = "refusal" if key == "content" else "content"
        assert deltas[0] == {"role": "assistant", key: "", other: None}
        assert len(deltas) > 3 and all(set(d) == {key} for d in deltas[1:])
        assert events[-3].json["choices"][0]["finish_reason"] == "stop"


async def test_responses_stream_shape(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    plain, events = await twins(client, "openai-responses", by_id["parallel_lookup"], contract)
    kinds = [e.json["type"] for e in events]
    assert [e.name for e in events] == kinds
    assert [e.json["sequence_number"] for e in events] == list(range(len(events)))
    call = [
        "response.output_item.added",
        *["response.function_call_arguments.delta"]
        * kinds.count("response.function_call_arguments.delta"),
    ]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-1] == "response.completed" and len(call) > 4
    assert (
        kinds.count("response.output_item.added") == kinds.count("response.output_item.done") == 2
    )
    created = events[0].json["response"]
    assert (
        created["status"] == "in_progress" and created["output"] == [] and created["usage"] is None
    )
    added = [e.json for e in events if e.json["type"] == "response.output_item.added"]
    assert [(a["item"]["arguments"], a["item"]["status"]) for a in added] == [
        ("", "in_progress")
    ] * 2
    dones = [e.json for e in events if e.json["type"] == "response.function_call_arguments.done"]
    assert [d["arguments"] for d in dones] == [i["arguments"] for i in plain["output"]]
    assert all("name" not in d for d in dones)  # as in all six recorded .done events
    final = events[-1].json["response"]
    assert final["output"] == plain["output"] and final["usage"] == plain["usage"]
    assert final["status"] == "completed" and "[DONE]" not in [e.data for e in events]


async def test_responses_text_parts(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    body = for_case("openai-responses", "sim-careful", by_id["missing_id"], contract)
    _, _, events = await streamed(client, "openai-responses", "sim-careful", body)
    kinds = [e.json["type"] for e in events]
    deltas = kinds.count("response.output_text.delta")
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * deltas,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    text = "".join(
        e.json["delta"] for e in events if e.json["type"] == "response.output_text.delta"
    )
    assert events[4 + deltas].json["text"] == text and "номер" in text


async def test_anthropic_stream_shape(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    plain, events = await twins(client, "anthropic", by_id["parallel_lookup"], contract)
    kinds = [e.json["type"] for e in events]
    assert [e.name for e in events] == kinds
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds[1:3] == ["content_block_start", "ping"]
    start = events[0].json["message"]
    assert (
        start["content"] == []
        and start["stop_reason"] is None
        and start["usage"]["output_tokens"] == 1
    )
    for index in (0, 1):
        mine = [e.json for e in events if e.json.get("index") == index]
        assert mine[0]["type"] == "content_block_start"
        assert mine[0]["content_block"]["input"] == {} and mine[-1]["type"] == "content_block_stop"
        partial = [m["delta"]["partial_json"] for m in mine[1:-1]]
        assert partial[0] == "" and len(partial) > 2
        assert orjson.loads("".join(partial)) == plain["content"][index]["input"]
    delta = events[-2].json
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"]["output_tokens"] == plain["usage"]["output_tokens"]


async def test_gemini_stream_shape(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    for cid in ("parallel_lookup", "missing_id"):
        body = for_case("gemini", "sim-careful", by_id[cid], contract)
        plain = (await send(client, "gemini", "sim-careful", body)).json()
        _, pieces, events = await streamed(client, "gemini", "sim-careful", body)
        blob = b"".join(pieces)
        assert blob.count(b"\r\n\r\n") == len(events) and b"\n\n" not in blob.replace(b"\r\n", b"")
        assert all(e.name is None for e in events) and len(events) >= 2
        chunks = [e.json for e in events]
        finishes = [c["candidates"][0].get("finishReason") for c in chunks]
        assert finishes == [None] * (len(chunks) - 1) + ["STOP"]
        counts = [c["usageMetadata"]["candidatesTokenCount"] for c in chunks]
        assert counts == sorted(counts) and chunks[-1]["usageMetadata"] == plain["usageMetadata"]
        assert {c["responseId"] for c in chunks} == {plain["responseId"]}
    # calls: all in one chunk, whole, with the signature on the first; then {"text": ""}
    assert chunks[-1]["candidates"][0]["content"]["parts"] != [{"text": ""}]
    body = for_case("gemini", "sim-careful", by_id["parallel_lookup"], contract)
    _, _, events = await streamed(client, "gemini", "sim-careful", body)
    parts = [e.json["candidates"][0]["content"]["parts"] for e in events]
    assert parts[-1] == [{"text": ""}] and len(parts) == 2
    assert [p["functionCall"]["args"] for p in parts[0]] == [
        {"order_id": "ORD-111111"},
        {"order_id": "ORD-222222"},
    ]
    assert "thoughtSignature" in parts[0][0] and "thoughtSignature" not in parts[0][1]


async def test_gemini_without_alt_sse_streams_one_json_array(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    body = for_case("gemini", "sim-careful", by_id["missing_id"], contract)
    _, _, events = await streamed(client, "gemini", "sim-careful", body)
    resp = await client.post(
        "/v1beta/models/sim-careful:streamGenerateContent",
        json=body,
        headers={"x-goog-api-key": "k"},
    )
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
    array = resp.json()
    assert isinstance(array, list) and len(array) == len(events)


@pytest.mark.parametrize("api", APIS)
async def test_whole_sends_one_event_per_part_and_token_a_few_characters(
    api: str, cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    fragments: dict[str, list[str]] = {}
    for mode in ("whole", "token"):
        async with (
            SimServer(cases, contract, stream_chunks=mode) as sim,
            httpx.AsyncClient(base_url=sim.root) as client,
        ):
            texts = []
            for cid in ("quote_complete", "missing_id"):
                body = for_case(api, "sim-careful", by_id[cid], contract)
                _, _, events = await streamed(client, api, "sim-careful", body)
                texts.append(_fragments(api, events))
            fragments[mode] = [f for t in texts for f in t]
            if mode == "whole":
                # Gemini's calls arrive whole in any mode: only its text is cut
                assert [len(t) for t in texts] == [0 if api == "gemini" else 1, 1], texts
    assert all(1 <= len(f) <= max(TOKEN_SIZES) for f in fragments["token"])
    assert "".join(fragments["token"]) == "".join(fragments["whole"])
    assert len(fragments["token"]) > 5 * len(fragments["whole"])


def _fragments(api: str, events: list[Any]) -> list[str]:
    """The argument or text fragments of a stream, in order."""
    out = []
    for e in events:
        if e.data == "[DONE]":
            continue
        d = e.json
        if api == "openai-chat":
            for c in d.get("choices") or []:
                delta = c["delta"]
                out += [
                    tc["function"]["arguments"]
                    for tc in delta.get("tool_calls", [])
                    if "id" not in tc
                ]
                out += [delta["content"]] if delta.get("content") else []
        elif api == "openai-responses" and d["type"].endswith(".delta"):
            out.append(d["delta"])
        elif api == "anthropic" and d["type"] == "content_block_delta":
            piece = d["delta"].get("partial_json", d["delta"].get("text"))
            out += [piece] if piece else []
        elif api == "gemini":
            out += [
                p["text"]
                for p in d["candidates"][0].get("content", {}).get("parts", [])
                if p.get("text")
            ]
    return out


async def test_token_mode_cuts_inside_every_escape(contract: Contract) -> None:
    case = Case.model_validate(
        {
            "id": "quoted",
            "user": 'Найди заказ "ORD-1\\2"',
            "tools": [
                {
                    "name": "find",
                    "description": "find",
                    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
                }
            ],
            "expect": {"kind": "tool_call", "tool": "find", "arguments": {"q": 'a "b" \\ c\nd'}},
        }
    )
    async with (
        SimServer([case], contract) as sim,
        httpx.AsyncClient(base_url=sim.root) as client,
    ):
        for api in ("openai-chat", "openai-responses", "anthropic"):
            body = build(api, "sim-careful", case.conversation, case.tools)
            _, _, events = await streamed(client, api, "sim-careful", body)
            pieces = _fragments(api, events)
            assert "".join(pieces) == orjson.dumps({"q": 'a "b" \\ c\nd'}).decode()
            ends = [p for p in pieces if p.endswith("\\")]
            assert len(ends) == 4, pieces  # \" \" \\ \n: each cut after its backslash


async def test_random_mode_writes_seeded_pieces_down_to_single_bytes(
    cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    sizes = []
    for _ in range(2):
        async with (
            SimServer(cases, contract, seed=5, stream_chunks="random") as sim,
            httpx.AsyncClient(base_url=sim.root) as client,
        ):
            results = []
            for api in APIS:
                body = for_case(api, "sim-careful", by_id["quote_complete"], contract)
                plain = await send(client, api, "sim-careful", body)
                _, pieces, events = await streamed(client, api, "sim-careful", body)
                assert max(len(p) for p in pieces) <= PIECE_MAX and min(len(p) for p in pieces) == 1
                assert any(_cut_utf8(p) for p in pieces)  # a Cyrillic letter cut in half
                same(read(api, assemble(api, events)), read(api, plain.json()))
                results.append([len(p) for p in pieces])
            sizes.append(results)
    assert sizes[0] == sizes[1]  # seeded: the same cuts again


def _cut_utf8(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


async def test_request_log_says_which_requests_streamed(
    client: httpx.AsyncClient, sim: SimServer, by_id: dict[str, Case], contract: Contract
) -> None:
    for api in APIS:
        body = for_case(api, "sim-careful", by_id["direct_lookup"], contract)
        await send(client, api, "sim-careful", body)
        await streamed(client, api, "sim-careful", body)
    await send(client, "openai-chat", "sim-careful", {"model": "sim-careful", "stream": 1})
    await send(client, "openai-chat", "sim-careful", {"model": "sim-careful", "stream": True})
    log = sim.request_log
    assert [(r.api, r.streamed, r.status, r.outcome) for r in log] == [
        (api, streamed_, 200, "calls") for api in APIS for streamed_ in (False, True)
    ] + [
        ("openai-chat", False, 400, "error:bad_request"),
        ("openai-chat", True, 400, "error:bad_request"),  # refused, but it asked for a stream
    ]
    assert sum(r.streamed for r in log) == 5 and sim.requests_total == len(log)


async def test_a_cut_answer_streams_as_its_api_cuts_it(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["quote_complete"]
    got: dict[str, list[Any]] = {}
    for api in APIS:
        body = for_case(api, "sim-careful", case, contract, max_tokens=3)
        plain = (await send(client, api, "sim-careful", body)).json()
        _, _, events = await streamed(client, api, "sim-careful", body)
        got[api] = [e.json for e in events if e.data != "[DONE]"]
        if api == "openai-chat":
            (call,) = assemble(api, events)["choices"][0]["message"]["tool_calls"]
            assert (
                call["function"]["arguments"]
                == plain["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            )
    chat = [c["choices"][0]["finish_reason"] for c in got["openai-chat"] if c["choices"]]
    assert chat[-1] == "length"
    assert got["openai-responses"][-1]["type"] == "response.incomplete"
    assert got["openai-responses"][-1]["response"]["incomplete_details"] == {
        "reason": "max_output_tokens"
    }
    kinds = [e["type"] for e in got["anthropic"]]
    assert "content_block_stop" not in kinds and kinds[-2:] == ["message_delta", "message_stop"]
    assert got["anthropic"][-2]["delta"]["stop_reason"] == "max_tokens"
    partial = "".join(
        e["delta"].get("partial_json", "")
        for e in got["anthropic"]
        if e["type"] == "content_block_delta"
    )
    assert partial and not partial.endswith("}")  # cut inside the JSON, as recorded (S4.6)
    assert [c["candidates"][0].get("finishReason") for c in got["gemini"]] == ["MAX_TOKENS"]


async def test_a_streamed_answer_can_be_continued_by_previous_response_id(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["recovery_not_found"]
    body = for_case("openai-responses", "sim-careful", case, contract)
    _, _, events = await streamed(client, "openai-responses", "sim-careful", body)
    final = events[-1].json["response"]
    (call,) = [i for i in final["output"] if i["type"] == "function_call"]
    follow = {
        "model": "sim-careful",
        "previous_response_id": final["id"],
        "input": [
            {
                "type": "function_call_output",
                "call_id": call["call_id"],
                "output": '{"ok": false, "error": {"code": "ORDER_NOT_FOUND", "title": "не найден"}}',
            }
        ],
    }
    _, _, events = await streamed(client, "openai-responses", "sim-careful", follow)
    text = "".join(
        e.json["delta"] for e in events if e.json["type"] == "response.output_text.delta"
    )
    assert "ORDER_NOT_FOUND" in text and "не найден" in text
