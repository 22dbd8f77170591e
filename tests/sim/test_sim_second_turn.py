"""Second turns answer from the tool results actually sent, so an edited result changes
the answer, and the case's followup checks judge what the user edited."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.personas import effects, second_turn
from tests.support.simwire import FOLLOWUP_CASES
from toolstand.attempt.executor import execute
from toolstand.decision import ModelDecision, ToolCall
from toolstand.judge.verdict import judge_followup
from toolstand.sim.personas import careful, decide
from toolstand.sim.turn import Answer, Draws, SimCall
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract

LOOKUP = SimCall("get_order", {"order_id": "ORD-123456"})
ROUTE_UNAVAILABLE = {
    "ok": False,
    "error": {
        "title": "Маршрут временно недоступен",
        "code": "ROUTE_UNAVAILABLE",
        "retryable": True,
        "retry_after": 60,
        "owner_action_required": False,
    },
}


def codes(case: Case, answer: Answer, result: dict[str, Any]) -> list[str]:
    """The followup codes the judge gives this answer after this result."""
    assert case.followup is not None
    decision = ModelDecision("text", text=answer.text)
    return [e["code"] for e in judge_followup(case.followup, decision, [result])["errors"]]


def test_careful_reports_an_edited_failure_as_a_failure(
    by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["recovery_lookup_ok"]
    answer = careful(case, second_turn(case, contract, LOOKUP, ROUTE_UNAVAILABLE))
    assert answer.kind == "text"
    assert "Маршрут временно недоступен" in answer.text and "ROUTE_UNAVAILABLE" in answer.text
    assert "позже" in answer.text and "60" in answer.text  # retryable, after retry_after
    assert "Самар" not in answer.text  # the case's expected phrase is not parroted
    assert codes(case, answer, ROUTE_UNAVAILABLE) == ["recovery_mismatch"]


def test_careful_quotes_the_values_of_an_edited_success(
    by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["recovery_lookup_ok"]
    edited = {"city": "Kazan"}
    answer = careful(case, second_turn(case, contract, LOOKUP, edited))
    assert "city: Kazan" in answer.text and "Самар" not in answer.text
    assert codes(case, answer, edited) == ["recovery_mismatch"]
    shipped = {"ok": True, "status": "in_transit", "city": "Самара", "eta": {"days": 2}}
    answer = careful(case, second_turn(case, contract, LOOKUP, shipped))
    assert "status: in_transit" in answer.text and 'eta: {"days":2}' in answer.text
    assert codes(case, answer, shipped) == []


def test_careful_asks_the_user_only_when_the_owner_must_act(
    by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["recovery_not_found"]
    call = SimCall("get_order", {"order_id": "ORD-999999"})
    error = {"title": "Заказ не найден", "code": "ORDER_NOT_FOUND", "retryable": False}
    plain = careful(case, second_turn(case, contract, call, {"ok": False, "error": error}))
    asks = careful(
        case,
        second_turn(
            case, contract, call, {"ok": False, "error": {**error, "owner_action_required": True}}
        ),
    )
    assert "Проверьте" not in plain.text and "позже" not in plain.text
    assert "Проверьте" in asks.text and "ORDER_NOT_FOUND" in asks.text


def test_careful_answers_in_the_users_language(by_id: dict[str, Case], contract: Contract) -> None:
    case = by_id["recovery_lookup_ok"].model_copy(update={"user": "Where is order ORD-123456?"})
    failed = careful(case, second_turn(case, contract, LOOKUP, ROUTE_UNAVAILABLE))
    assert failed.text.startswith("Could not complete get_order: Маршрут временно недоступен")
    assert "try again later (in 60 s)" in failed.text
    empty = careful(case, second_turn(case, contract, LOOKUP, {"ok": True}))
    assert empty.text.startswith("get_order succeeded and returned no data")


@pytest.mark.parametrize(
    "case_id",
    FOLLOWUP_CASES,
)
def test_careful_passes_the_shipped_recovery_cases_on_the_executors_results(
    case_id: str, by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id[case_id]
    expected = case.expect.expected_calls[0]
    result = execute(
        ToolCall(expected.tool, expected.arguments, None), contract.tool(expected.tool), case
    )
    call = SimCall(expected.tool, dict(expected.arguments or {}))
    answer = careful(case, second_turn(case, contract, call, result))
    assert codes(case, answer, result) == []


def test_eager_claims_success_whatever_came_back(
    by_id: dict[str, Case], contract: Contract
) -> None:
    case = by_id["recovery_lookup_ok"]
    turn = second_turn(case, contract, LOOKUP, ROUTE_UNAVAILABLE)
    answers = [decide("eager", case, turn, effects(contract), Draws(i)) for i in range(40)]
    claims = [a for a in answers if isinstance(a, Answer) and "доставлен" in a.text]
    assert claims  # must_not_contain's first entry: a success the tool never reported
    assert codes(case, claims[0], ROUTE_UNAVAILABLE) == ["false_success", "recovery_mismatch"]
    truthful = [a for a in answers if a not in claims]
    assert truthful and all(
        isinstance(a, Answer) and "ROUTE_UNAVAILABLE" in a.text for a in truthful
    )
