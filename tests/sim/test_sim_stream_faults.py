"""sim-streambug and the stream faults: one per server bug class of providers.md S6.2, each
seen on the wire where its API can show it; seeded, deterministic, only when streaming."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import httpx
import orjson
import pytest

from tests.support.simstream import Event, assemble, parse_sse, send_stream
from tests.support.simwire import build, for_case, read, send
from toolstand.sim import SimServer
from toolstand.sim.personas import STREAM_FAULTS
from toolstand.sim.stream_faults import STREAM_FAULTS as FAULT_APIS
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract
from toolstand.types import APIS

BUG = "sim-streambug"
NO_PARAMS = {"type": "object", "properties": {}}
ORDER = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


def own_case(cid: str, user: str, calls: list[tuple[str, dict[str, Any]]]) -> Case:
    tools = [
        {"name": "list_services", "description": "list the services", "parameters": NO_PARAMS},
        {"name": "get_order", "description": "get an order", "parameters": ORDER},
    ]
    expect = {"kind": "tool_call", "calls": [{"tool": t, "arguments": a} for t, a in calls]}
    return Case.model_validate({"id": cid, "user": user, "tools": tools, "expect": expect})


ZERO = own_case("zero", "Какие есть услуги?", [("list_services", {})])
ZERO_THEN = own_case(
    "zero_then",
    "Услуги и заказ ORD-111111?",
    [("list_services", {}), ("get_order", {"order_id": "ORD-111111"})],
)


@dataclass
class Got:
    events: list[Event]
    comments: list[str]
    raw: bytes
    faults: str
    plain: dict[str, Any]

    @property
    def data(self) -> list[Any]:
        return [e.json for e in self.events if e.data != "[DONE]"]

    @property
    def done(self) -> bool:
        return any(e.data == "[DONE]" for e in self.events)


# two-call cases: the faults that need two calls draw per case, so give them a few
PAIRS = [
    own_case(
        f"pair{n}",
        f"Заказы ORD-1{n:05} и ORD-2{n:05}?",
        [
            ("get_order", {"order_id": f"ORD-1{n:05}"}),
            ("get_order", {"order_id": f"ORD-2{n:05}"}),
        ],
    )
    for n in range(16)
]


@pytest.fixture
def cases_plus(cases: list[Case]) -> list[Case]:
    return [*cases, ZERO, ZERO_THEN, *PAIRS]


async def got(
    cases: list[Case], contract: Contract, fault: str, api: str, case: Case, **kw: Any
) -> Got:
    async with (
        SimServer(cases, contract, stream_faults={fault: 1.0}, **kw) as sim,
        httpx.AsyncClient(base_url=sim.root) as client,
    ):
        body = (
            build(api, BUG, case.conversation, case.tools)
            if case.tools
            else for_case(api, BUG, case, contract)
        )
        plain = (await send(client, api, BUG, body)).json()
        resp, pieces = await send_stream(client, api, BUG, body)
        assert resp.status_code == 200
        raw = b"".join(pieces)
        events, comments = parse_sse(raw)
        return Got(
            events, comments, raw, resp.headers.get("x-toolstand-sim-stream-faults", ""), plain
        )


def chat_entries(g: Got) -> list[dict[str, Any]]:
    return [
        tc
        for d in g.data
        for c in d.get("choices") or []
        for tc in (c.get("delta") or {}).get("tool_calls") or []
    ]


def finishes(g: Got) -> list[Any]:
    return [c.get("finish_reason", "absent") for d in g.data for c in d.get("choices") or []]


def args_deltas(g: Got) -> list[str]:
    return [d["delta"] for d in g.data if d["type"] == "response.function_call_arguments.delta"]


def partials(g: Got, index: int = 0) -> list[str]:
    return [
        d["delta"]["partial_json"]
        for d in g.data
        if d["type"] == "content_block_delta"
        and d["index"] == index
        and "partial_json" in d["delta"]
    ]


def chat_args(g: Got) -> list[str]:
    calls = assemble("openai-chat", g.events)["choices"][0]["message"].get("tool_calls") or []
    return [c["function"]["arguments"] for c in calls]


def test_every_bug_class_of_providers_md_has_a_fault() -> None:
    # providers.md S6.2, in its order
    assert list(FAULT_APIS) == [
        *("args_whole", "args_empty_zero_param", "args_lost", "call_lost", "value_coerced"),
        *("id_missing", "id_per_delta", "index_reuse", "index_duplicate", "name_repeated"),
        *("opener_with_args", "args_cumulative", "finish_wrong", "finish_missing"),
        *("finish_repeated", "finish_with_delta", "usage_elsewhere", "error_inband"),
        *("no_terminal", "done_extra", "comment_keepalive", "field_order", "json_padding"),
        "choices_null",
    ]
    assert set(STREAM_FAULTS["streambug"]) == set(FAULT_APIS)


async def test_args_empty_zero_param(cases_plus: list[Case], contract: Contract) -> None:
    g = await got(cases_plus, contract, "args_empty_zero_param", "openai-chat", ZERO)
    assert chat_args(g) == [""] and g.faults == "args_empty_zero_param"
    assert g.plain["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == "{}"
    g = await got(cases_plus, contract, "args_empty_zero_param", "openai-responses", ZERO)
    done = [d for d in g.data if d["type"] == "response.function_call_arguments.done"]
    assert "".join(args_deltas(g)) == "" and done[0]["arguments"] == ""
    assert g.data[-1]["response"]["output"][0]["arguments"] == ""
    g = await got(cases_plus, contract, "args_empty_zero_param", "anthropic", ZERO)
    assert partials(g) == [] and assemble("anthropic", g.events)["content"][0]["input"] == {}
    # a call with parameters is left alone
    g = await got(cases_plus, contract, "args_empty_zero_param", "openai-chat", ZERO_THEN)
    assert chat_args(g) == ["", '{"order_id":"ORD-111111"}']


async def test_args_lost(cases: list[Case], contract: Contract, by_id: dict[str, Case]) -> None:
    case = by_id["quote_complete"]
    whole = orjson.dumps(case.expect.expected_calls[0].arguments).decode()
    g = await got(cases, contract, "args_lost", "openai-chat", case)
    (args,) = chat_args(g)
    assert whole.startswith(args) and args != whole
    g = await got(cases, contract, "args_lost", "openai-responses", case)
    done = next(d for d in g.data if d["type"] == "response.function_call_arguments.done")
    assert whole.startswith("".join(args_deltas(g))) and "".join(args_deltas(g)) != whole
    assert (
        done["arguments"] == whole == g.data[-1]["response"]["output"][0]["arguments"]
    )  # mismatch
    g = await got(cases, contract, "args_lost", "anthropic", case)
    assert whole.startswith("".join(partials(g))) and "".join(partials(g)) != whole
    g = await got(cases, contract, "args_lost", "gemini", case)
    assert read("gemini", assemble("gemini", g.events)).calls[0].arguments == {}


@pytest.mark.parametrize("api", APIS)
async def test_call_lost(
    api: str, cases_plus: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    g = await got(cases_plus, contract, "call_lost", api, by_id["parallel_lookup"])
    streamed = read(api, assemble(api, g.events))
    assert [c.arguments for c in streamed.calls] == [{"order_id": "ORD-111111"}]
    assert len(read(api, g.plain).calls) == 2
    # after an empty call, every later call's arguments arrive as {}
    g = await got(cases_plus, contract, "call_lost", api, ZERO_THEN)
    streamed = read(api, assemble(api, g.events))
    assert [(c.name, c.arguments) for c in streamed.calls] == [
        ("list_services", {}),
        ("get_order", {}),
    ]


@pytest.mark.parametrize("api", APIS)
async def test_value_coerced(
    api: str, cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    g = await got(cases, contract, "value_coerced", api, by_id["quote_complete"])
    (call,) = read(api, assemble(api, g.events)).calls
    assert call.arguments is not None and call.arguments["weight_kg"] == "2.5"
    assert read(api, g.plain).calls[0].arguments == {**call.arguments, "weight_kg": 2.5}


async def test_chat_call_slot_faults(
    cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    two = by_id["parallel_lookup"]
    ids = [
        c["id"]
        for c in (await got(cases, contract, "args_whole", "openai-chat", two)).plain["choices"][0][
            "message"
        ]["tool_calls"]
    ]
    g = await got(cases, contract, "args_whole", "openai-chat", two)
    assert [
        len([e for e in chat_entries(g) if e["index"] == i and "id" not in e]) for i in (0, 1)
    ] == [1, 1]
    g = await got(cases, contract, "id_missing", "openai-chat", two)
    assert all("id" not in e for e in chat_entries(g)) and len(chat_entries(g)) > 4
    g = await got(cases, contract, "id_per_delta", "openai-chat", two)
    continued = [e["id"] for e in chat_entries(g)[1:] if e["index"] == 0 and "type" not in e]
    assert len(set(continued)) == len(continued) > 1 and ids[0] not in continued
    g = await got(cases, contract, "index_reuse", "openai-chat", two)
    entries = chat_entries(g)
    assert {e["index"] for e in entries} == {0} and [e["id"] for e in entries if "id" in e] == ids
    g = await got(cases, contract, "index_duplicate", "openai-chat", two)
    extra = [e for e in chat_entries(g) if e["index"] >= 2]
    assert [(e["index"], e["id"]) for e in extra] == [(2, ids[0]), (3, ids[1])]
    assert extra[0]["function"]["arguments"] == '{"order_id":"ORD-111111"}'
    g = await got(cases, contract, "name_repeated", "openai-chat", two)
    assert all(e["function"]["name"] == "get_order" and "id" in e for e in chat_entries(g))
    g = await got(cases, contract, "opener_with_args", "openai-chat", two)
    openers = [e for e in chat_entries(g) if "id" in e]
    assert all(o["function"]["arguments"] for o in openers)
    assert (
        read("openai-chat", assemble("openai-chat", g.events)).calls
        == read("openai-chat", g.plain).calls
    )


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic"])
async def test_args_cumulative(
    api: str, cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    case = by_id["quote_complete"]
    whole = orjson.dumps(case.expect.expected_calls[0].arguments).decode()
    g = await got(cases, contract, "args_cumulative", api, case)
    if api == "openai-chat":
        pieces = [e["function"]["arguments"] for e in chat_entries(g) if "id" not in e]
    elif api == "openai-responses":
        pieces = args_deltas(g)
        done = next(d for d in g.data if d["type"] == "response.function_call_arguments.done")
        assert done["arguments"] == whole  # the whole copy disagrees with the deltas
    else:
        pieces = partials(g)[1:]
    assert all(b.startswith(a) for a, b in pairwise(pieces))
    assert pieces[-1] == whole and "".join(pieces) != whole


async def test_chat_finish_and_usage_faults(
    cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    two, text = by_id["parallel_lookup"], by_id["missing_id"]
    g = await got(cases, contract, "finish_wrong", "openai-chat", two)
    assert [f for f in finishes(g) if f] == ["stop"]
    g = await got(cases, contract, "finish_wrong", "openai-chat", text)
    assert [f for f in finishes(g) if f] == ["tool_calls"]
    g = await got(cases, contract, "finish_missing", "openai-chat", text)
    assert set(finishes(g)) == {"absent"} and g.done
    deltas = [c["delta"] for d in g.data for c in d.get("choices") or []]
    assert all(d["tool_calls"] == [] for d in deltas if "content" in d)
    g = await got(cases, contract, "finish_repeated", "openai-chat", two)
    assert [f for f in finishes(g) if f] == ["tool_calls", "tool_calls"] and finishes(g)[-1] is None
    g = await got(cases, contract, "finish_with_delta", "openai-chat", two)
    last = [c for d in g.data for c in d.get("choices") or []][-1]
    assert last["finish_reason"] == "tool_calls" and last["delta"]["tool_calls"]
    g = await got(cases, contract, "usage_elsewhere", "openai-chat", two)
    assert all(d["choices"] for d in g.data)  # no usage chunk
    assert g.data[-1]["usage"] == g.plain["usage"] and g.data[-1]["choices"][0]["finish_reason"]
    g = await got(cases, contract, "choices_null", "openai-chat", two)
    assert [d["choices"] for d in g.data].count(None) == 1
    assert (
        read("openai-chat", assemble("openai-chat", g.events)).calls
        == read("openai-chat", g.plain).calls
    )


@pytest.mark.parametrize("api", APIS)
async def test_error_inband_and_no_terminal(
    api: str, cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    case = by_id["parallel_lookup"]
    g = await got(cases, contract, "error_inband", api, case)
    last = g.data[-1]
    if api == "openai-chat":
        assert last["error"]["type"] == "server_error" and not g.done
    elif api == "openai-responses":
        assert [d["type"] for d in g.data[-2:]] == ["error", "response.failed"]
        assert g.data[-1]["response"]["error"]["code"] == "server_error"
    elif api == "anthropic":
        assert last == {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
        }
        assert g.events[-1].name == "error"
    else:  # a data chunk, or a bare JSON tail that is no SSE event at all
        tail = g.raw[g.raw.rindex(b"\r\n\r\n") + 4 :]
        error = last if "error" in last else orjson.loads(tail)
        assert error["error"]["code"] == 503 and error["error"]["status"] == "UNAVAILABLE"
    g = await got(cases, contract, "no_terminal", api, case)
    kinds = [d.get("type") for d in g.data]
    if api == "openai-chat":
        assert not g.done and g.data[-1]["choices"] == []  # the usage chunk ends it
    elif api == "openai-responses":
        assert kinds[-1] == "response.output_item.done"
    elif api == "anthropic":
        assert kinds[-1] == "message_delta"
    else:
        assert all("finishReason" not in d["candidates"][0] for d in g.data)


@pytest.mark.parametrize("api", APIS)
async def test_framing_faults(
    api: str, cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    case = by_id["parallel_lookup"]
    clean = await got(cases, contract, "done_extra", "openai-chat", case)  # not Chat's: no-op
    assert clean.faults == ""
    g = await got(cases, contract, "comment_keepalive", api, case)
    assert g.comments and [e.json for e in g.events if e.data != "[DONE]"] == g.data
    g = await got(cases, contract, "json_padding", api, case)
    assert b" }" in g.raw and read(api, assemble(api, g.events)).calls == read(api, g.plain).calls
    if api in ("openai-responses", "anthropic"):
        g = await got(cases, contract, "field_order", api, case)
        first = g.raw.split(b"\n", 2)
        assert first[0].startswith(b"data: ") and first[1].startswith(b"event: ")
        assert all(e.name == e.json["type"] for e in g.events)
    if api == "openai-responses":
        g = await got(cases, contract, "done_extra", api, case)
        assert g.events[-1].data == "[DONE]" and g.data[-1]["type"] == "response.completed"


@pytest.fixture
async def streambug(cases_plus: list[Case], contract: Contract) -> AsyncIterator[SimServer]:
    async with SimServer(cases_plus, contract, seed=4) as server:
        yield server


async def test_streambug_is_careful_unstreamed_and_buggy_streamed(
    streambug: SimServer, cases_plus: list[Case], contract: Contract
) -> None:
    seen: Counter[str] = Counter()
    async with httpx.AsyncClient(base_url=streambug.root, timeout=10) as client:
        for api in APIS:
            for case in cases_plus:
                body = (
                    build(api, BUG, case.conversation, case.tools)
                    if case.tools
                    else for_case(api, BUG, case, contract)
                )
                careful = body | ({"model": "sim-careful"} if api != "gemini" else {})
                bug = read(api, (await send(client, api, BUG, body)).json())
                want = read(api, (await send(client, api, "sim-careful", careful)).json())
                assert (bug.kind, bug.text, [(c.name, c.raw) for c in bug.calls]) == (
                    want.kind,
                    want.text,
                    [(c.name, c.raw) for c in want.calls],
                )
                for _ in range(2):
                    resp, _ = await send_stream(client, api, BUG, body)
                    faults = resp.headers.get("x-toolstand-sim-stream-faults", "")
                    seen.update(f"{api}:{f}" for f in faults.split(",") if f)
    log = streambug.request_log
    assert all(not r.stream_faults for r in log if not r.streamed)
    assert sum(bool(r.stream_faults) for r in log if r.streamed) > len(log) // 4
    # every fault class shows, each on every API that can show it
    assert set(seen) == {f"{api}:{f}" for f, apis in FAULT_APIS.items() for api in apis}


async def test_stream_faults_are_seeded_and_stable_across_repetitions(
    cases: list[Case], contract: Contract
) -> None:
    runs = []
    for seed in (1, 1, 2):
        async with (
            SimServer(cases, contract, seed=seed) as sim,
            httpx.AsyncClient(base_url=sim.root) as client,
        ):
            for case in cases:
                body = for_case("openai-chat", BUG, case, contract)
                for _ in range(3):
                    await send_stream(client, "openai-chat", BUG, body)
            runs.append([r.stream_faults for r in sim.request_log])
    assert runs[0] == runs[1] and runs[0] != runs[2]
    stable = set(FAULT_APIS) - {"error_inband", "no_terminal"}
    for reps in zip(runs[0][0::3], runs[0][1::3], runs[0][2::3], strict=True):
        assert len({tuple(sorted(set(r) & stable)) for r in reps}) == 1  # the same bug each time


async def test_flaky_stream_stops_halfway(
    cases: list[Case], contract: Contract, by_id: dict[str, Case]
) -> None:
    body = for_case("anthropic", "sim-flaky", by_id["parallel_lookup"], contract)
    async with (
        SimServer(cases, contract, fault_rates={"torn_body": 1.0}) as sim,
        httpx.AsyncClient(base_url=sim.root) as client,
    ):
        with pytest.raises(httpx.RemoteProtocolError):
            await send_stream(client, "anthropic", "sim-flaky", body)
        assert sim.request_log[-1].streamed and sim.request_log[-1].outcome == "torn_body"
    async with (
        SimServer(cases, contract, fault_rates={"timeout": 1.0}) as sim,
        httpx.AsyncClient(base_url=sim.root, timeout=httpx.Timeout(5, read=0.5)) as client,
    ):
        request = client.build_request(
            "POST",
            "/v1/messages",
            json=body | {"stream": True},
            headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
        )
        resp = await client.send(request, stream=True)
        received = b""
        with pytest.raises(httpx.ReadTimeout):
            async for piece in resp.aiter_raw():
                received += piece
        await resp.aclose()
        events, _ = parse_sse(received)
        assert events[0].name == "message_start" and "message_stop" not in [e.name for e in events]


async def test_gemini_error_comes_as_a_chunk_or_as_a_bare_tail(
    cases: list[Case], contract: Contract
) -> None:
    forms = set()
    async with (
        SimServer(cases, contract, stream_faults={"error_inband": 1.0}) as sim,
        httpx.AsyncClient(base_url=sim.root) as client,
    ):
        for case in cases[:12]:
            _, pieces = await send_stream(
                client, "gemini", BUG, for_case("gemini", BUG, case, contract)
            )
            raw = b"".join(pieces)
            events, _ = parse_sse(raw)
            if "error" in events[-1].json:
                forms.add("chunk")
            else:
                tail = raw[raw.rindex(b"\r\n\r\n") + 4 :]
                assert tail.startswith(b"{") and b"\r\n  " in tail  # pretty-printed, CRLF
                assert orjson.loads(tail)["error"]["status"] == "UNAVAILABLE"
                forms.add("tail")
    assert forms == {"chunk", "tail"}
