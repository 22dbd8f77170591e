"""The fake executor: results from the contract's x-fake, generic problems, case overrides."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolstand.attempt.executor import canned_results, default_result, execute
from toolstand.decision import ToolCall
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract, parse_contract
from toolstand.util.problems import LoadError

SHELF: dict[str, Any] = {
    "name": "shelf",
    "version": "1",
    "tools": [
        {
            "name": "find_book",
            "description": "Find a book by its catalogue number.",
            "parameters": {
                "type": "object",
                "properties": {"isbn": {"type": "string"}, "copies": {"type": "integer"}},
                "required": ["isbn"],
            },
            "x-fake": [
                {"when": {"isbn": "978-0", "copies": 2}, "result": {"ok": True, "shelf": "B2"}},
                {"when": {"isbn": "978-0"}, "result": {"ok": True, "shelf": "A1"}},
                {"result": {"ok": False, "error": {"code": "NO_SUCH_BOOK"}}},
            ],
        },
        {
            "name": "note",
            "description": "Write a note.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
    ],
}


@pytest.fixture
def shelf() -> Contract:
    return parse_contract(json.dumps(SHELF), "shelf.json")


def run(contract: Contract, name: str, arguments: dict | None) -> dict:
    return default_result(ToolCall(name, arguments, None), contract.tool(name))


def test_x_fake_rules_are_tried_in_order(shelf: Contract) -> None:
    assert run(shelf, "find_book", {"isbn": "978-0", "copies": 2}) == {"ok": True, "shelf": "B2"}
    assert run(shelf, "find_book", {"isbn": "978-0", "copies": 3}) == {"ok": True, "shelf": "A1"}
    assert run(shelf, "find_book", {"isbn": "978-0"}) == {"ok": True, "shelf": "A1"}
    # an argument that is absent matches nothing; the rule without `when` matches all
    assert run(shelf, "find_book", {"copies": 2})["error"]["code"] == "NO_SUCH_BOOK"
    # JSON equality, not Python's: "2" is not 2
    assert run(shelf, "find_book", {"isbn": "978-0", "copies": "2"})["shelf"] == "A1"


def test_results_are_copies(shelf: Contract) -> None:
    first = run(shelf, "find_book", {"isbn": "978-0"})
    first["shelf"] = "changed"
    assert run(shelf, "find_book", {"isbn": "978-0"})["shelf"] == "A1"


def test_a_tool_without_x_fake_echoes_its_arguments(shelf: Contract) -> None:
    assert run(shelf, "note", {"text": "hi"}) == {"ok": True, "text": "hi"}
    assert run(shelf, "note", {}) == {"ok": True}
    assert run(shelf, "note", {"ok": False, "text": "x"}) == {"ok": True, "text": "x"}


def test_generic_problems(shelf: Contract) -> None:
    invalid = run(shelf, "find_book", None)["error"]
    assert (invalid["code"], invalid["status"], invalid["retryable"]) == (
        "INVALID_ARGUMENTS",
        422,
        False,
    )
    unknown = run(shelf, "burn_book", {"isbn": "1"})["error"]
    assert (unknown["code"], unknown["status"]) == ("UNKNOWN_TOOL", 404)


def test_the_case_overrides_per_tool(shelf: Contract) -> None:
    case = Case.model_validate(
        {
            "id": "c",
            "user": "u",
            "expect": {"kind": "tool_call", "tool": "find_book"},
            "followup": {"tool_results": {"find_book": {"ok": True, "shelf": "Z9"}}},
        }
    )
    call = ToolCall("find_book", {"isbn": "978-0"}, None)
    assert execute(call, shelf.tool("find_book"), case) == {"ok": True, "shelf": "Z9"}
    assert execute(ToolCall("note", {}, None), shelf.tool("note"), case) == {"ok": True}


def test_the_delivery_contract_declares_the_seeds_results(contract: Contract) -> None:
    def error(name: str, arguments: dict) -> dict:
        result = run(contract, name, arguments)
        assert result["ok"] is False
        return result["error"]

    assert run(contract, "get_order", {"order_id": "ORD-123456"}) == {
        "ok": True,
        "status": "in_transit",
        "city": "Самара",
    }
    not_found = error("get_order", {"order_id": "ORD-000000"})
    assert (not_found["code"], not_found["status"], not_found["owner_action_required"]) == (
        "ORDER_NOT_FOUND",
        404,
        True,
    )
    route = error("quote_delivery", {})
    assert (route["code"], route["retryable"], route["retry_after"]) == (
        "ROUTE_UNAVAILABLE",
        True,
        60,
    )
    shipped = error("cancel_order", {"order_id": "ORD-123456", "reason": "other"})
    assert (shipped["code"], shipped["retryable"], shipped["status"]) == (
        "ALREADY_SHIPPED",
        False,
        409,
    )


def test_canned_results_come_from_the_contract(shelf: Contract) -> None:
    canned = canned_results(shelf.tools)
    assert canned["find_book: success shelf=B2"] == {"ok": True, "shelf": "B2"}
    assert canned["find_book: problem NO_SUCH_BOOK (permanent)"]["error"]["code"] == "NO_SUCH_BOOK"
    assert canned["success: ok"] == {"ok": True}
    assert "problem: UPSTREAM_TIMEOUT (retry after 30 s)" in canned
    assert not any("note" in label for label in canned)  # declares no results


def test_the_x_keys_are_hashed_only_when_present(contract: Contract) -> None:
    bare = {**SHELF, "tools": [dict(SHELF["tools"][1])]}
    with_fake = {**SHELF, "tools": [{**SHELF["tools"][1], "x-fake": [{"result": {"ok": True}}]}]}
    plain = parse_contract(json.dumps(bare))
    assert plain.hash == parse_contract(json.dumps(bare, indent=2)).hash
    assert plain.hash != parse_contract(json.dumps(with_fake)).hash
    # the delivery contract round-trips through its aliases
    delivery = contract
    again = parse_contract(json.dumps(delivery.model_dump(mode="json")))
    assert again == delivery and again.hash == delivery.hash


def _problems(tool_extra: dict) -> list[str]:
    tool = {**SHELF["tools"][0], **tool_extra}
    text = json.dumps({**SHELF, "tools": [tool]}, indent=2)
    with pytest.raises(LoadError) as err:
        parse_contract(text, "shelf.json")
    return [str(p) for p in err.value.problems]


@pytest.mark.parametrize(
    ("extra", "path", "words"),
    [
        ({"x-fake": {"result": {}}}, "$.tools[0].x-fake", "list"),
        ({"x-fake": [{"when": {"isbn": "1"}}]}, "$.tools[0].x-fake[0].result", "missing"),
        ({"x-fake": [{"result": {"ok": True}, "if": {}}]}, "$.tools[0].x-fake[0].if", "unknown"),
        (
            {"x-fake": [{"when": {"title": "x"}, "result": {"ok": True}}]},
            "$.tools[0].x-fake[0].when.title",
            "allowed: copies, isbn",
        ),
        ({"x-fake": [{"result": {"shelf": "A"}}]}, "$.tools[0].x-fake[0].result.ok", '"ok"'),
        (
            {"x-fake": [{"result": {"ok": False, "error": "gone"}}]},
            "$.tools[0].x-fake[0].result.error",
            '"code"',
        ),
        ({"x-sim": {"hints": [" "]}}, "$.tools[0].x-sim.hints[0]", "non-empty"),
        ({"x-sim": {"values": {"red": ["r"]}}}, "$.tools[0].x-sim.values.red", "enum value"),
        ({"x-sim": {"stems": []}}, "$.tools[0].x-sim.stems", "unknown"),
    ],
)
def test_x_fake_and_x_sim_are_validated_at_load(extra: dict, path: str, words: str) -> None:
    problems = _problems(extra)
    assert len(problems) == 1, problems
    assert problems[0].startswith("shelf.json:") and path in problems[0], problems
    assert words in problems[0]
