"""Strict mode: the schema each provider's strict mode needs, the notes of each rewrite,
the sent-schema check against the rewritten schema, and nulls read back as absent."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson

from tests.support.adapters import MESSAGES, SYSTEM, settings
from toolstand.adapters import get_adapter, tools_payload
from toolstand.adapters.strict import nullable, nulls_as_absent, rewrite_strict
from toolstand.attempt.arms import run_attempt
from toolstand.attempt.plan import Target
from toolstand.decision import ModelDecision, ToolCall
from toolstand.judge.verdict import judge
from toolstand.run.rejudge import rejudge_record
from toolstand.spec.cases import Case
from toolstand.spec.config import Config
from toolstand.spec.contract import Contract, ToolSpec
from toolstand.transport import RetryPolicy, make_client
from toolstand.types import Api

BOOK_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "when": {"$ref": "#/$defs/slot"},
        "stops": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "note": {"type": "string"}},
                "required": ["name"],
            },
        },
        "size": {"type": ["integer", "string"], "default": 1},
        "tag": {"type": ["string", "null"]},
    },
    "required": ["city"],
    "$defs": {"slot": {"type": "object", "properties": {"day": {"type": "string"}}}},
}
BOOK = ToolSpec(name="book", description="Book a trip.", effect="prepare", parameters=BOOK_PARAMS)


def test_openai_rewrite_requires_every_property_and_makes_optional_ones_nullable() -> None:
    done = rewrite_strict("book", BOOK_PARAMS, "openai")
    p = done.parameters
    assert p["required"] == ["city", "unit", "when", "stops", "size", "tag"]
    assert p["additionalProperties"] is False
    assert p["properties"]["city"] == {"type": "string"}  # required already: untouched
    assert p["properties"]["unit"] == {"type": ["string", "null"], "enum": ["c", "f", None]}
    assert p["properties"]["when"] == {"anyOf": [{"$ref": "#/$defs/slot"}, {"type": "null"}]}
    assert p["properties"]["size"]["type"] == ["integer", "string", "null"]
    assert p["properties"]["tag"] == {"type": ["string", "null"]}  # null was a value already
    item = p["properties"]["stops"]["items"]
    assert p["properties"]["stops"]["type"] == ["array", "null"]
    assert item["required"] == ["name", "note"] and item["additionalProperties"] is False
    assert item["properties"]["note"] == {"type": ["string", "null"]}
    slot = p["$defs"]["slot"]
    assert slot == {
        "type": "object",
        "properties": {"day": {"type": ["string", "null"]}},
        "additionalProperties": False,
        "required": ["day"],
    }
    assert BOOK_PARAMS["required"] == ["city"]  # the contract's schema is not touched
    assert done.nullable == [
        ("properties", "unit"),
        ("properties", "when"),
        ("properties", "stops"),
        ("properties", "size"),
        ("properties", "stops", "items", "properties", "note"),
        ("$defs", "slot", "properties", "day"),
    ]


def test_each_rewrite_is_noted_with_its_path_and_unsupported_keywords_are_reported() -> None:
    notes = {
        (n.path, n.action, n.keyword) for n in rewrite_strict("book", BOOK_PARAMS, "openai").notes
    }
    assert ("$", "rewritten", "additionalProperties") in notes
    assert ("$", "rewritten", "required") in notes
    assert ("$.properties.unit", "rewritten", "type") in notes
    assert ("$.properties.when", "rewritten", "anyOf") in notes
    assert ("$.properties.stops.items", "rewritten", "required") in notes
    assert ("$.properties.size", "unsupported", "default") in notes
    assert ("$.properties.tag", "rewritten", "type") not in notes


def test_nullable_forms() -> None:
    assert nullable({"const": "x"}) == ({"anyOf": [{"const": "x"}, {"type": "null"}]}, "anyOf")
    assert nullable({"anyOf": [{"type": "null"}, {"type": "string"}]})[1] == ""
    assert nullable({"type": "number", "minimum": 1}) == (
        {"type": ["number", "null"], "minimum": 1},
        "type",
    )


def test_anthropic_strict_closes_objects_keeps_optional_and_reports_limits() -> None:
    done = rewrite_strict("book", {**BOOK_PARAMS, "minProperties": 1}, "anthropic")
    assert done.parameters["required"] == ["city"] and done.nullable == []
    assert done.parameters["additionalProperties"] is False
    assert done.parameters["$defs"]["slot"]["additionalProperties"] is False
    assert done.optional == 7 and done.unions == 2  # 5 + note + day; size and tag
    spec = ToolSpec(
        name="n",
        description="d",
        effect="read",
        parameters={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
    )
    notes = rewrite_strict("n", spec.parameters, "anthropic").notes
    assert [(n.path, n.action, n.keyword) for n in notes if n.action == "unsupported"] == [
        ("$.properties.n", "unsupported", "minimum")
    ]
    many = [
        ToolSpec(name=f"t{i}", description="d", effect="read", parameters=BOOK_PARAMS)
        for i in range(4)
    ]
    built = get_adapter("anthropic").build_request(
        base_url="https://api.anthropic.com",
        model="m",
        system=None,
        messages=MESSAGES,
        tools=many,
        settings=settings(options={"strict": True}),
    )
    limits = [n for n in built.schema_notes if n.path == "" and n.action == "unsupported"]
    assert [(n.tool, n.keyword) for n in limits] == [("t3", "optional parameters")]


def _build(api: str, tools: list[ToolSpec], **options: Any) -> Any:
    return get_adapter(api).build_request(
        base_url="https://example.test/v1",
        model="m",
        system=SYSTEM,
        messages=MESSAGES,
        tools=tools,
        settings=settings(options=options),
    )


def test_strict_sends_the_rewritten_schema_and_the_check_compares_against_it() -> None:
    for api, read in (
        ("openai-chat", lambda b: b["tools"][0]["function"]),
        ("openai-responses", lambda b: b["tools"][0]),
    ):
        built = _build(api, [BOOK], strict=True)
        tool = read(built.http.body)
        assert tool["strict"] is True
        assert tool["parameters"] == rewrite_strict("book", BOOK_PARAMS, "openai").parameters
        # the rewrite is noted, nothing is reported lost against the rewritten schema
        assert not [n for n in built.schema_notes if n.action == "lost"]
        assert any(n.path == "$.properties.unit" for n in built.schema_notes)
        assert built.nullable["book"][0] == ("properties", "unit")
        assert built.api_settings["strict"] is True
    plain = _build("openai-chat", [BOOK])
    assert plain.http.body["tools"][0]["function"]["parameters"] == BOOK_PARAMS
    assert plain.nullable == {} and "strict" not in plain.http.body["tools"][0]["function"]


def test_tools_payload_is_what_the_adapter_sends() -> None:
    cases: list[tuple[Api, dict[str, Any]]] = [
        ("openai-chat", {"strict": True}),
        ("openai-responses", {}),
        ("anthropic", {"strict": True}),
        ("gemini", {"gemini_schema": "parameters"}),
    ]
    for api, options in cases:
        assert (
            tools_payload(api, [BOOK], options) == _build(api, [BOOK], **options).http.body["tools"]
        )
    assert tools_payload("gemini", []) == []


def test_a_null_for_a_property_the_rewrite_made_nullable_is_judged_as_absent() -> None:
    built = _build("openai-chat", [BOOK], strict=True)
    raw = (
        '{"city":"Paris","unit":null,"when":null,"stops":[{"name":"a","note":null}],'
        '"size":null,"tag":null}'
    )
    sent = ModelDecision("tool_call", calls=[ToolCall("book", orjson.loads(raw), raw, "c1")])
    decision = nulls_as_absent(sent, built.nullable)
    assert decision.calls[0].arguments == {"city": "Paris", "stops": [{"name": "a"}], "tag": None}
    assert decision.calls[0].raw_arguments == raw  # what was sent stays as it was
    assert decision.notes == [
        "book: null read as absent (strict): $.unit, $.when, $.size, $.stops[0].note"
    ]
    # the judge rules against the contract's own schema: the nulls are gone, so it passes;
    # the same nulls without the mapping are type errors there
    contract = Contract(name="trip", version="1", tools=[BOOK])
    case = Case.model_validate(
        {
            "id": "trip",
            "user": "Book Paris",
            "expect": {
                "kind": "tool_call",
                "tool": "book",
                "arguments": {"city": "Paris", "stops": [{"name": "a"}], "tag": None},
            },
        }
    )
    got = judge(case, decision, contract)
    assert got["verdict"] == "pass", got["errors"]
    unmapped = judge(case, sent, contract)
    assert unmapped["verdict"] == "fail"
    assert [e["code"] for e in unmapped["errors"]].count("invalid_arguments") == 4 + 1
    # without strict there is nothing to map
    assert nulls_as_absent(sent, {}) is sent


def test_rejudging_a_strict_record_reads_its_nulls_as_the_live_run_did() -> None:
    built = _build("openai-chat", [BOOK], strict=True)
    raw = '{"city":"Paris","unit":null,"size":null}'
    body = {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "book", "arguments": raw},
                        }
                    ],
                },
            }
        ]
    }
    rec = {
        "api": "openai-chat",
        "mode": "auto",
        "offered_tools": ["book"],
        "request": {"body": built.http.body},
        "response": {"status": 200, "headers": {}, "body": body},
    }
    contract = Contract(name="trip", version="1", tools=[BOOK])
    case = Case.model_validate(
        {
            "id": "trip",
            "user": "Book Paris",
            "expect": {"kind": "tool_call", "tool": "book", "arguments": {"city": "Paris"}},
        }
    )
    out = rejudge_record(rec, case, contract)
    assert out["decision"]["calls"][0]["arguments"] == {"city": "Paris"}
    assert out["judgement"]["verdict"] == "pass"
    # the same answer to a request sent without strict keeps its nulls, and fails
    plain = {**rec, "request": {"body": _build("openai-chat", [BOOK]).http.body}}
    assert rejudge_record(plain, case, contract)["judgement"]["verdict"] == "fail"


def _chat_call(arguments: str, call_id: str) -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": "book", "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"choices": [{"finish_reason": "tool_calls", "message": message}]}


TRIP = Contract(name="trip", version="1", tools=[BOOK])
BOOK_PARIS = {
    "id": "trip",
    "user": "Book Paris",
    "expect": {"kind": "tool_call", "tool": "book", "arguments": {"city": "Paris", "tag": None}},
}


def _strict_repair_record(case: Case, contract: Contract) -> dict[str, Any]:
    """One strict attempt with repairs: turn 1 sends an invalid unit; the repair turn
    fixes it and, as strict mode asks, sends null for every optional property."""
    answers = [
        '{"city":"Paris","unit":"kelvin","when":null,"stops":null,"size":null,"tag":null}',
        '{"city":"Paris","unit":null,"when":null,"stops":null,"size":null,"tag":null}',
    ]
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(orjson.loads(request.content))
        return httpx.Response(200, json=_chat_call(answers[min(len(sent), 2) - 1], f"c{len(sent)}"))

    run = {"provider": "p", "model": "m", "api": "openai-chat", "base_url": "https://x.test/v1"}
    cfg = Config.model_validate(
        {
            "runs": [{**run, "options": {"strict": True}}],
            "tools": "t.json",
            "cases": "c.jsonl",
            "repair": {"max_repairs": 2, "feedback": ["allowed"]},
        }
    )

    async def go() -> dict[str, Any]:
        async with make_client(transport=httpx.MockTransport(handler)) as client:
            rec = await run_attempt(
                Target.make(cfg.runs[0], run["base_url"], "k"),
                case,
                "auto",
                1,
                "r",
                contract=contract,
                config=cfg,
                system=None,
                client=client,
                policy=RetryPolicy(max_retries=0),
                feedback="allowed",
            )
        return dict(rec)

    rec = asyncio.run(go())
    assert len(sent) == 2 and sent[0]["tools"][0]["function"]["strict"] is True
    return rec


def test_a_strict_repair_turn_reads_its_nulls_as_absent_as_turn_1_does() -> None:
    rec = _strict_repair_record(Case.model_validate(BOOK_PARIS), TRIP)
    assert rec["judgement"]["verdict"] == "fail"
    (turn,) = rec["repair_turns"]
    assert turn["decision"]["calls"][0]["arguments"] == {"city": "Paris", "tag": None}
    assert turn["valid"] is True and turn["judgement"]["verdict"] == "pass"
    assert rec["repair"]["valid_after"] == 1 and rec["repair"]["passed_after"] == 1


def test_rejudging_a_strict_repair_turn_reads_its_nulls_as_the_live_run_did() -> None:
    case = Case.model_validate(BOOK_PARIS)
    rec = _strict_repair_record(case, TRIP)
    again = rejudge_record(rec, case, TRIP)
    (turn,) = again["repair_turns"]
    assert turn["decision"] == rec["repair_turns"][0]["decision"]
    assert turn["valid"] is True and turn["judgement"]["verdict"] == "pass"
    assert again["repair"] == rec["repair"]


def test_rejudging_repair_turns_judges_them_on_the_case_s_own_tools() -> None:
    """A case with its own tools is judged on those in every turn, live and re-judged."""
    case = Case.model_validate({**BOOK_PARIS, "tools": [BOOK.model_dump()]})
    other = ToolSpec(name="other", description="Not this.", effect="read", parameters={})
    contract = Contract(name="trip", version="1", tools=[other])
    rec = _strict_repair_record(case, contract)
    assert rec["repair"]["needed"] is True and rec["repair"]["passed_after"] == 1
    again = rejudge_record(rec, case, contract)
    assert again["repair"] == rec["repair"]
    assert again["repair_turns"][0]["judgement"] == rec["repair_turns"][0]["judgement"]
