"""Every adapter on mutations of recorded bodies: nothing raises, and what comes back is
a well-formed ModelDecision / ErrorClass that the judge, the second turn and the JSONL
writer can all take.

tests/adapters/test_adapter_registry.py fuzzes arbitrary JSON; these start from the
real shapes in tests/fixtures/bodies, so the mutations land deep inside the paths the
adapters actually read (a tool call whose ``input`` is a list, a ``details`` that is a
number, a ``finish_reason`` that is null ...).
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.support.mutation import ODD_VALUES, get_at, mutate, paths, set_at
from tests.support.runs import TRANSPORT_CODES
from toolstand.adapters import APIS, get_adapter
from toolstand.adapters.base import (
    ErrorClass,
    RequestSettings,
    ToolResult,
    Usage,
    status_error_code,
)
from toolstand.attempt.executor import execute
from toolstand.decision import DECISION_KINDS, ModelDecision, ToolCall
from toolstand.judge.verdict import judge, judge_followup
from toolstand.spec.cases import load_cases
from toolstand.spec.contract import load_contract
from toolstand.transport import decode_body

ROOT = Path(__file__).resolve().parents[2]
BODIES = ROOT / "tests" / "fixtures" / "bodies"
CONTRACT = load_contract(ROOT / "contracts" / "delivery_tools.json")
CASES = load_cases(ROOT / "cases" / "delivery.jsonl").cases
STATUSES = [200, 201, 204, 400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529]
HEADER_VALUES = st.sampled_from(
    ["0", "0.2", "1", "-1", "abc", "", "nan", "inf", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT"]
)
HEADERS = st.dictionaries(
    st.sampled_from(["retry-after", "Retry-After", "retry-after-ms", "x-should-retry"]),
    HEADER_VALUES | st.sampled_from(["true", "false", "maybe"]),
    max_size=3,
)


def _raw_fixtures() -> dict[str, list[tuple[str, bytes]]]:
    out: dict[str, list[tuple[str, bytes]]] = {}
    for api in APIS:
        files = sorted((BODIES / api).glob("*.json"))
        out[api] = [(f"{api}/{f.name}", f.read_bytes()) for f in files]
    return out


RAW = _raw_fixtures()
HTML = ("error_502.html", (BODIES / "error_502.html").read_bytes())
EVERY = [item for items in RAW.values() for item in items] + [HTML]
# raise for a deeper search: TOOLSTAND_FUZZ_EXAMPLES=5000 pytest tests/reliability
EXAMPLES = int(os.environ.get("TOOLSTAND_FUZZ_EXAMPLES", "120"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_every_api_has_fixtures() -> None:
    assert all(len(RAW[api]) >= 10 for api in APIS)


def check_call(call: Any) -> None:
    assert isinstance(call, ToolCall)
    assert isinstance(call.name, str) and call.name
    assert call.arguments is None or isinstance(call.arguments, dict)
    assert call.raw_arguments is None or isinstance(call.raw_arguments, str)
    # arguments that did not parse say why; parsed ones carry no error
    assert (call.arguments is None) == (call.parse_error is not None)
    assert isinstance(call.call_id, str) and call.call_id


def check_decision(decision: Any) -> None:
    assert isinstance(decision, ModelDecision)
    assert decision.kind in DECISION_KINDS
    assert "adapter_error" not in decision.flags  # the guard exists but is never needed
    assert decision.text is None or isinstance(decision.text, str)
    assert decision.refusal is None or isinstance(decision.refusal, str)
    assert decision.finish_reason is None or isinstance(decision.finish_reason, str)
    assert isinstance(decision.truncated, bool)
    assert all(isinstance(f, str) for f in decision.flags)
    for call in decision.calls + decision.partial_calls:
        check_call(call)
    # only a tool_call decision has calls, and it always has one
    assert bool(decision.calls) == (decision.kind == "tool_call")
    # the record holds it: it serializes and reads back unchanged
    as_dict = orjson.loads(orjson.dumps(decision.to_dict()))
    assert ModelDecision.from_dict(as_dict) == decision


def check_error(api: str, status: int, err: Any) -> None:
    if not 200 <= status < 300:
        assert err is not None, f"HTTP {status} classified as a usable answer"
    if err is None:
        return
    assert isinstance(err, ErrorClass)
    assert err.code in TRANSPORT_CODES
    implied = status_error_code(status)
    if implied is not None:
        # the status decides; only Gemini's API_KEY_INVALID turns a status into auth_error
        assert err.code == implied or (api == "gemini" and err.code == "auth_error")
    assert isinstance(err.message, str) and err.message
    assert err.retryable in (None, True, False)
    if err.retry_after_s is not None:
        assert math.isfinite(err.retry_after_s) and err.retry_after_s >= 0
    orjson.dumps({"code": err.code, "message": err.message, "retry": err.retry_after_s})


def check_usage(usage: Any) -> None:
    assert isinstance(usage, Usage)
    for n in (usage.input_tokens, usage.output_tokens):
        assert n is None or (isinstance(n, int) and not isinstance(n, bool))


def exercise(api: str, body: Any, status: int, headers: dict[str, str], data: Any) -> None:
    """What the runner does with one answer, every step checked."""
    adapter = get_adapter(api)
    decision = adapter.parse_decision(body)
    check_decision(decision)
    event(f"decision {decision.kind}")
    check_error(api, status, adapter.classify_error(status, dict(headers), body))
    check_usage(adapter.usage(body))
    # the judge takes every decision, against any case and mode
    case = data.draw(st.sampled_from(CASES), label="case")
    mode = data.draw(st.sampled_from(["auto", "forced", "no_tools", "reversed"]), label="mode")
    contract = CONTRACT
    names = [t.name for t in contract.subset(case.active_tools)]
    judgement = judge(case, decision, contract, offered_tools=names, mode=mode)
    assert judgement["verdict"] in ("pass", "fail")
    assert (judgement["verdict"] == "pass") == (not judgement["errors"])
    orjson.dumps(judgement)
    if decision.kind != "tool_call":
        return
    # the second turn: the results go back with the assistant's own message
    built = adapter.build_request(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        system="s",
        messages=case.conversation,
        tools=contract.subset(case.active_tools),
        settings=RequestSettings(),
    )
    before = orjson.dumps(built.http.body)
    results = [
        ToolResult(
            c.call_id, c.call_id_synthesized, c.name, execute(c, contract.tool(c.name), case)
        )
        for c in decision.calls
    ]
    second = adapter.append_tool_result(
        request_body=built.http.body, response_body=body, decision=decision, results=results
    )
    assert isinstance(second, dict)
    assert orjson.dumps(built.http.body) == before  # the first request is not touched
    orjson.dumps(second)
    if case.followup is not None:
        followup = judge_followup(case.followup, decision, [r.result for r in results])
        assert followup["passed"] == (not followup["errors"])


@pytest.mark.parametrize("api", APIS)
@FUZZ
@given(data=st.data())
def test_mutated_bodies_never_raise(api: str, data: Any) -> None:
    own = st.sampled_from(RAW[api])
    _, raw = data.draw(st.one_of(own, own, own, st.sampled_from(EVERY)), label="fixture")
    body, _ = decode_body(raw)
    body = mutate(data, body)
    status = data.draw(st.sampled_from(STATUSES), label="status")
    headers = data.draw(HEADERS, label="headers")
    exercise(api, body, status, headers, data)


@pytest.mark.parametrize("api", APIS)
@FUZZ
@given(data=st.data())
def test_bodies_cut_short_never_raise(api: str, data: Any) -> None:
    """A body cut at any byte, as a torn transfer or a proxy leaves it."""
    _, raw = data.draw(st.sampled_from(RAW[api]) | st.just(HTML), label="fixture")
    cut = data.draw(st.integers(0, len(raw)), label="cut")
    body, is_json = decode_body(raw[:cut])
    status = data.draw(st.sampled_from(STATUSES), label="status")
    exercise(api, body, status, {}, data)
    if 200 <= status < 300 and not is_json:
        # a 2xx that is not the API's JSON is malformed_response, never an answer
        err = get_adapter(api).classify_error(status, {}, body)
        assert err is not None and err.code == "malformed_response"
        assert get_adapter(api).parse_decision(body).kind == "invalid"


@pytest.mark.parametrize("api", APIS)
def test_error_fields_of_the_wrong_type(api: str) -> None:
    """Hand-picked shapes the mutations found or could miss: error details that are not
    lists, retry hints that are not finite."""
    adapter = get_adapter(api)
    bodies: list[Any] = [
        {"error": {"code": 429, "details": 5}},
        {"error": {"code": 429, "details": [{"violations": 3}]}},
        {"error": {"code": 429, "details": [{"violations": "PerDay"}]}},
        {
            "error": {
                "details": [
                    {
                        "@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": "9" * 400 + "s",
                    }
                ]
            }
        },
        {"error": ["x"]},
        {"error": None, "message": 5, "code": [1]},
    ]
    for body in bodies:
        for status in (200, 429, 500):
            err = adapter.classify_error(status, {"retry-after": "1e400"}, body)
            check_error(api, status, err)
            check_decision(adapter.parse_decision(body))


def single_mutations(body: Any) -> Iterator[Any]:
    """Every node of ``body`` deleted, nulled, nested in a list, or replaced by each odd
    value: the exhaustive sweep of one mutation at a time."""
    for path in paths(body):
        node = get_at(body, path)
        variants: list[Any] = [*ODD_VALUES, [node]]
        for value in variants:
            yield set_at(copy.deepcopy(body), path, copy.deepcopy(value))
        if path:
            root = copy.deepcopy(body)
            del get_at(root, path[:-1])[path[-1]]
            yield root


@pytest.mark.parametrize("api", APIS)
def test_every_single_mutation_of_every_fixture(api: str) -> None:
    adapter = get_adapter(api)
    n = 0
    for _, raw in RAW[api]:
        body, _ = decode_body(raw)
        for mutated in single_mutations(body):
            check_decision(adapter.parse_decision(mutated))
            for status in (200, 429, 500):
                check_error(api, status, adapter.classify_error(status, {}, mutated))
            check_usage(adapter.usage(mutated))
            n += 1
    assert n > 1000


# --- Issue 19: body shapes the adapters do not know are never invalid_json ----------------

# names no table knows: lower case for types and statuses, upper case for Gemini
UNKNOWN = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10).map(
    lambda s: "x_" + s
)
UNKNOWN_UPPER = UNKNOWN.map(str.upper)
CALL_NAMES = st.sampled_from(["get_order", "quote_delivery", "cancel_order", "list_files"])
GOOD_ARGS = st.sampled_from(
    [{}, {"order_id": "ORD-123456"}, {"order_id": 5}, {"origin": "Казань", "weight_kg": "2,5"}]
)
BROKEN_TEXT = st.sampled_from(['{"order_id": "ORD-12', "[1]", '"x"', "", "{'a': 1}", "null"])
BROKEN_VALUE = st.sampled_from([["ORD-123456"], "ORD-123456", 3, None, True])
PAYLOAD = st.dictionaries(
    st.sampled_from(["data", "status", "result", "query"]), st.text(max_size=4), max_size=2
)


@st.composite
def call_args(draw: Any, *, as_text: bool) -> tuple[Any, bool]:
    """Wire arguments and whether they are unparsable (exist, and are not a JSON object)."""
    if draw(st.booleans()):
        args = draw(GOOD_ARGS)
        return (orjson.dumps(args).decode() if as_text else args), False
    if as_text:
        return draw(BROKEN_TEXT), True
    value = draw(BROKEN_VALUE)
    return value, value is not None  # Anthropic and Gemini: an absent input is no input


@st.composite
def chat_body(draw: Any) -> tuple[Any, bool]:
    finish = draw(st.sampled_from(["stop", "tool_calls", "length", "function_call"]) | UNKNOWN)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": draw(st.none() | st.text(max_size=5)),
    }
    calls, broken = [], False
    for i in range(draw(st.integers(0, 2))):
        if draw(st.integers(0, 3)) == 0:  # a tool call of a type nobody declared
            calls.append({"id": f"call_{i}", "type": draw(UNKNOWN), **draw(PAYLOAD)})
            continue
        args, bad = draw(call_args(as_text=True))
        broken |= bad
        fn = {"name": draw(CALL_NAMES), "arguments": args}
        calls.append({"id": f"call_{i}", "type": "function", "function": fn})
    if calls:
        message["tool_calls"] = calls
    message.update({draw(UNKNOWN): draw(PAYLOAD) for _ in range(draw(st.integers(0, 1)))})
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}, broken


@st.composite
def responses_body(draw: Any) -> tuple[Any, bool]:
    status = draw(st.sampled_from(["completed", "incomplete", "cancelled", "failed"]) | UNKNOWN)
    items, broken = [], False
    for i in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["message", "function_call", "reasoning"]) | UNKNOWN)
        if kind == "message":
            part_type = draw(st.sampled_from(["output_text", "refusal"]) | UNKNOWN)
            part = {"type": part_type, "text": draw(st.text(max_size=5))}
            items.append({"type": "message", "status": "completed", "content": [part]})
        elif kind == "function_call":
            args, bad = draw(call_args(as_text=True))
            item_status = draw(st.sampled_from(["completed", "incomplete"]))
            broken |= bad and item_status == "completed"
            items.append(
                {
                    "type": "function_call",
                    "status": item_status,
                    "call_id": f"call_{i}",
                    "name": draw(CALL_NAMES),
                    "arguments": args,
                }
            )
        else:
            items.append({"type": kind, "id": f"it_{i}", **draw(PAYLOAD)})
    return {"status": status, "incomplete_details": None, "output": items}, broken


@st.composite
def anthropic_body(draw: Any) -> tuple[Any, bool]:
    stop = draw(st.sampled_from(["end_turn", "tool_use", "max_tokens", "pause_turn"]) | UNKNOWN)
    blocks, broken = [], False
    for i in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["text", "tool_use", "thinking", "server_tool_use"]) | UNKNOWN)
        if kind == "tool_use":
            args, bad = draw(call_args(as_text=False))
            broken |= bad
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{i}", "name": draw(CALL_NAMES), "input": args}
            )
        else:
            blocks.append({"type": kind, "text": draw(st.text(max_size=5)), **draw(PAYLOAD)})
    return {"type": "message", "role": "assistant", "content": blocks, "stop_reason": stop}, broken


@st.composite
def gemini_body(draw: Any) -> tuple[Any, bool]:
    known = ["STOP", "MAX_TOKENS", "OTHER", "UNEXPECTED_TOOL_CALL", "LANGUAGE", "MODEL_ARMOR"]
    finish = draw(st.sampled_from(known) | UNKNOWN_UPPER | st.none())
    parts: list[dict[str, Any]] = []
    broken = False
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["text", "functionCall", "thought"]) | UNKNOWN)
        if kind == "functionCall":
            args, bad = draw(call_args(as_text=False))
            broken |= bad
            parts.append({"functionCall": {"name": draw(CALL_NAMES), "args": args}})
        elif kind == "thought":
            parts.append({"text": draw(st.text(max_size=5)), "thought": True})
        elif kind == "text":
            parts.append({"text": draw(st.text(max_size=5))})
        else:
            parts.append({kind: draw(PAYLOAD)})
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}, broken


SHAPED = {
    "openai-chat": chat_body(),
    "openai-responses": responses_body(),
    "anthropic": anthropic_body(),
    "gemini": gemini_body(),
}


@pytest.mark.parametrize("api", APIS)
@FUZZ
@given(data=st.data())
def test_unknown_shapes_are_never_invalid_json(api: str, data: Any) -> None:
    """Bodies with unknown finish reasons, statuses and item types: the judge gives
    ``invalid_json`` only when the body holds a call whose arguments exist and do not
    parse to an object; what was not read is named in the decision's notes."""
    body, broken = data.draw(SHAPED[api], label="body")
    adapter = get_adapter(api)
    assert adapter.classify_error(200, {}, body) is None
    decision = adapter.parse_decision(body)
    check_decision(decision)
    names = {c.name for c in decision.calls}
    assert names <= {"get_order", "quote_delivery", "cancel_order", "list_files"}
    for case in CASES:
        for mode in ("auto", "no_tools"):
            offered = (
                [] if mode == "no_tools" else [t.name for t in CONTRACT.subset(case.active_tools)]
            )
            judgement = judge(case, decision, CONTRACT, offered_tools=offered, mode=mode)
            got = [e["code"] for e in judgement["errors"]]
            if "invalid_json" in got:
                assert broken, (case.id, mode, decision, got)
