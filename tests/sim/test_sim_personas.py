"""The personas as pure functions: behaviour per case, and rates against the documented constants."""

from __future__ import annotations

import math

import orjson
import pytest

from tests.support.personas import effects, second_turn, turn_for
from toolstand.sim import personas as P
from toolstand.sim.invent import derived_stems, fill_pattern, hint_tool, hints_for, invent_arguments
from toolstand.sim.personas import careful, check_fault_rates, decide
from toolstand.sim.turn import (
    Answer,
    Draws,
    SimCall,
    limit_tokens,
)
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract

N = 3000


def answered(outcome: object) -> Answer:
    """A persona's answer, where the test planted no fault."""
    assert isinstance(outcome, Answer), outcome
    return outcome


def within(observed: int, trials: int, rate: float) -> bool:
    """Inside five standard errors of the documented rate (the draws are seeded, so this is exact)."""
    sigma = math.sqrt(rate * (1 - rate) / trials)
    return abs(observed / trials - rate) <= 5 * sigma + 1e-9


def test_careful_ignores_draws(cases: list[Case], contract: Contract) -> None:
    for case in cases:
        turn = turn_for(case, contract)
        answers = {
            repr(decide("careful", case, turn, effects(contract), Draws(i))) for i in range(5)
        }
        assert len(answers) == 1, case.id


def test_eager_overcall_rate_on_cases_that_must_not_call(
    cases: list[Case], contract: Contract
) -> None:
    hinted = [
        c
        for c in cases
        if not c.expects_call
        and hint_tool(
            c.last_user_text,
            [t.name for t in contract.subset(c.active_tools)],
            hints_for(contract.tools),
        )
    ]
    assert {c.id for c in hinted} >= {
        "missing_id",
        "cancel_implicit",
        "invalid_id",
        "quote_missing_service",
        "policy_cancel_blocked",
    }
    calls = 0
    for i in range(N):
        case = hinted[i % len(hinted)]
        answer = decide("eager", case, turn_for(case, contract), effects(contract), Draws(i))
        calls += isinstance(answer, Answer) and answer.kind == "calls"
    assert within(calls, N, P.EAGER_OVERCALL_RATE)


def test_eager_points_at_the_tool_the_words_name_and_invents_values(
    by_id: dict[str, Case], contract: Contract
) -> None:
    def first_call(case_id: str) -> SimCall:
        case = by_id[case_id]
        for i in range(50):
            answer = decide("eager", case, turn_for(case, contract), effects(contract), Draws(i))
            if isinstance(answer, Answer) and answer.calls:
                return answer.calls[0]
        raise AssertionError("eager never called")

    assert first_call("missing_id") == SimCall("get_order", {"order_id": "ORD-000000"})
    assert first_call("cancel_implicit") == SimCall(
        "cancel_order", {"order_id": "ORD-654321", "reason": "changed_mind"}
    )
    assert first_call("quote_missing_service").name == "quote_delivery"
    assert (
        first_call("policy_cancel_blocked").name == "get_order"
    )  # cancel_order is not offered there
    # no offered tool fits the words: eager answers as careful
    for case_id in ("irrelevant_weather", "refuse_forgery", "irrelevant_joke"):
        for i in range(20):
            answer = decide(
                "eager",
                by_id[case_id],
                turn_for(by_id[case_id], contract),
                effects(contract),
                Draws(i),
            )
            assert isinstance(answer, Answer) and answer.kind != "calls"


def test_eager_after_errors_repeats_execute_tools_or_claims_success(
    by_id: dict[str, Case], contract: Contract
) -> None:
    shipped = by_id["recovery_already_shipped"]
    cancel = SimCall("cancel_order", {"order_id": "ORD-777777", "reason": "duplicate"})
    turn = second_turn(
        shipped, contract, cancel, {"ok": False, "error": {"code": "ALREADY_SHIPPED"}}
    )
    repeats = 0
    for i in range(N):
        answer = decide("eager", shipped, turn, effects(contract), Draws(i))
        assert isinstance(answer, Answer)
        if answer.kind == "calls":
            assert answer.calls == [cancel]
            repeats += 1
        else:  # the careful answer, from the result sent
            assert "ALREADY_SHIPPED" in answer.text
    assert within(repeats, N, P.EAGER_FALSE_SUCCESS_RATE)

    missing = by_id["recovery_not_found"]
    turn = second_turn(
        missing,
        contract,
        SimCall("get_order", {"order_id": "ORD-999999"}),
        {"ok": False, "error": {"code": "ORDER_NOT_FOUND"}},
    )
    claims = sum(
        "в пути" in (answered(decide("eager", missing, turn, effects(contract), Draws(i))).text)
        for i in range(N)
    )
    assert within(claims, N, P.EAGER_FALSE_SUCCESS_RATE)

    ok = by_id["recovery_lookup_ok"]
    turn = second_turn(
        ok,
        contract,
        SimCall("get_order", {"order_id": "ORD-123456"}),
        {"ok": True, "city": "Самара"},
    )
    assert all(
        decide("eager", ok, turn, effects(contract), Draws(i)) == careful(ok, turn)
        for i in range(50)
    )


def test_sloppy_rates_per_call(cases: list[Case], contract: Contract) -> None:
    call_cases = [c for c in cases if c.expects_call]
    counts = {"number": [0, 0], "enum": [0, 0], "extra": [0, 0], "broken": [0, 0]}
    for i in range(N):
        case = call_cases[i % len(call_cases)]
        turn = turn_for(case, contract)
        clean = careful(case, turn)
        answer = decide("sloppy", case, turn, effects(contract), Draws(i))
        assert isinstance(answer, Answer) and answer.kind == "calls"
        for good, bad in zip(clean.calls, answer.calls, strict=True):
            enums = [
                k
                for k, v in good.arguments.items()
                if isinstance(v, str) and "enum" in turn.tools[good.name]["properties"][k]
            ]
            numbers = [k for k, v in good.arguments.items() if isinstance(v, int | float)]
            if numbers:
                counts["number"][1] += 1
                counts["number"][0] += isinstance(bad.arguments[numbers[0]], str)
            if enums:
                counts["enum"][1] += 1
                counts["enum"][0] += bad.arguments[enums[0]] != good.arguments[enums[0]]
            counts["extra"][1] += 1
            counts["extra"][0] += "note" in bad.arguments
            counts["broken"][1] += 1
            counts["broken"][0] += bad.raw is not None
            if bad.raw is not None:
                with pytest.raises(orjson.JSONDecodeError):
                    orjson.loads(bad.raw)
    rates = {
        "number": P.SLOPPY_NUMBER_AS_STRING_RATE,
        "enum": P.SLOPPY_ENUM_CASE_RATE,
        "extra": P.SLOPPY_EXTRA_FIELD_RATE,
        "broken": P.SLOPPY_BROKEN_JSON_RATE,
    }
    for name, (hits, trials) in counts.items():
        assert trials > 500 and within(hits, trials, rates[name]), (name, hits, trials)


def test_sloppy_broken_json_per_api(by_id: dict[str, Case], contract: Contract) -> None:
    case = by_id["quote_complete"]
    kinds: dict[str, set[str]] = {}
    for api in ("anthropic", "gemini"):
        turn = turn_for(case, contract, api=api)
        kinds[api] = set()
        for i in range(300):
            answer = decide("sloppy", case, turn, effects(contract), Draws(i))
            assert isinstance(answer, Answer)
            kinds[api].add(answer.kind)
            assert all(
                c.raw is None for c in answer.calls
            )  # objects on the wire: never broken JSON
    assert kinds == {"anthropic": {"calls"}, "gemini": {"calls", "malformed"}}
    values = {
        str(
            answered(decide("sloppy", case, turn_for(case, contract), effects(contract), Draws(i)))
            .calls[0]
            .arguments.get("weight_kg")
        )
        for i in range(300)
    }
    assert {"2.5", "2,5"} <= values


def test_positional_follows_tool_order(cases: list[Case], contract: Contract) -> None:
    call_cases = [c for c in cases if c.expects_call and c.active_tools is None]
    picked = {}
    for reverse in (False, True):
        right = 0
        for case in call_cases:
            answer = decide(
                "positional",
                case,
                turn_for(case, contract, reverse=reverse),
                effects(contract),
                Draws(0),
            )
            assert isinstance(answer, Answer)
            assert {c.name for c in answer.calls} == {"cancel_order" if reverse else "get_order"}
            right += sorted(c.name for c in answer.calls) == sorted(
                c.tool for c in case.expect.expected_calls
            )
        picked[reverse] = right
    assert picked[False] != picked[True]
    # off the expected tool it keeps the expected values that fit the schema
    answer = answered(
        decide(
            "positional",
            cases[0],
            turn_for(cases[0], contract, reverse=True),
            effects(contract),
            Draws(0),
        )
    )
    assert answer.calls[0].arguments["order_id"] == "ORD-123456"


def test_flaky_fault_rates(cases: list[Case], contract: Contract) -> None:
    seen: dict[object, int] = {}
    for i in range(N * 3):
        outcome = decide(
            "flaky", cases[0], turn_for(cases[0], contract), effects(contract), Draws(i)
        )
        key = outcome if isinstance(outcome, str) else "answer"
        seen[key] = seen.get(key, 0) + 1
    for fault, rate in P.FLAKY_FAULT_RATES.items():
        assert within(seen.get(fault, 0), N * 3, rate), (fault, seen)
    assert within(N * 3 - seen["answer"], N * 3, P.FLAKY_FAULT_RATE)


def test_flaky_rate_override_and_validation(cases: list[Case], contract: Contract) -> None:
    only = {"torn_body": 1.0}
    assert {
        decide("flaky", cases[0], turn_for(cases[0], contract), {}, Draws(i), only)
        for i in range(20)
    } == {"torn_body"}
    with pytest.raises(ValueError, match="unknown faults"):
        check_fault_rates({"gremlins": 0.1})
    with pytest.raises(ValueError, match="at most 1"):
        check_fault_rates({"reset": 0.7, "timeout": 0.7})


def test_invention_helpers(contract: Contract) -> None:
    offered = [t.name for t in contract.tools]
    hints = hints_for(contract.tools)
    assert hint_tool("Отмени мой последний заказ", offered, hints) == "cancel_order"
    assert hint_tool("Сколько стоит доставка 4 кг?", offered, hints) == "quote_delivery"
    assert hint_tool("Где заказ ORD-12345?", offered, hints) == "get_order"
    assert hint_tool("Расскажи анекдот", offered, hints) is None
    # without the contract's words only the tool names point anywhere
    assert hint_tool("Отмени мой последний заказ", offered) is None
    assert hint_tool("please cancel it", offered) == "cancel_order"
    cancel = contract.by_name["cancel_order"].parameters
    assert invent_arguments(cancel, "я передумал", None, hints)["reason"] == "changed_mind"
    assert invent_arguments(cancel, "я передумал")["reason"] == "duplicate"  # enum[0]
    quote = contract.by_name["quote_delivery"].parameters
    assert invent_arguments(quote, "express из Тулы, 0,5 кг") == {
        "origin": "unknown",
        "destination": "unknown",
        "weight_kg": 0.5,
        "service": "express",
    }
    assert fill_pattern("^ORD-[0-9]{6}$") == "ORD-000000" and fill_pattern("^(a|b)+$") is None


def test_hints_come_from_the_contract_execute_tools_first(contract: Contract) -> None:
    hints = hints_for(contract.tools)
    assert [name for name, _ in hints.tools] == ["cancel_order", "get_order", "quote_delivery"]
    assert dict(hints.tools)["cancel_order"][:2] == ("отмен", "не нужен")  # declared in x-sim
    assert hints.values["incorrect_address"] == ("адрес", "address")
    # a tool that declares none: its name's parts, then its description's stems
    assert derived_stems("renew_loan", "Extend the loan of a borrowed book.") == [
        "renew",
        "loan",
        "exten",
        "borro",
    ]


def test_limit_tokens_cuts_text_and_calls() -> None:
    text = limit_tokens(Answer("text", text="x" * 100), 5)
    assert text.truncated and text.text == "x" * 20
    call = limit_tokens(Answer("calls", calls=[SimCall("f", {"a": "y" * 40})]), 2)
    assert call.truncated and call.calls[0].raw == '{"a":"yy'
    untouched = Answer("text", text="short")
    assert limit_tokens(untouched, 100) is untouched and limit_tokens(untouched, None) is untouched
