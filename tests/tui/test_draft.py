"""The form's model without Textual: values <-> case lines, and where problems go."""

from __future__ import annotations

import orjson
import pytest

from toolstand.spec.cases import CaseFile
from toolstand.spec.contract import Contract
from toolstand.tui.model.draft import check_draft, field_of, parse_conversation, values_from_case
from toolstand.tui.model.templates import NEGATIVE, TEMPLATES, from_template


def test_every_case_round_trips_through_the_form_unchanged(
    casefile: CaseFile, contract: Contract
) -> None:
    for line in casefile.lines:
        if line.case is None:
            continue
        data = orjson.loads(line.text)
        draft = check_draft(values_from_case(data), contract, casefile, line.number, data)
        assert draft.valid, (line.number, draft.reason)
        assert not draft.changed, line.number
        assert draft.text == line.text, line.number  # same bytes: the same compact style


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_templates_start_valid_and_unique(
    name: str, casefile: CaseFile, contract: Contract
) -> None:
    data = from_template(name, contract, set(casefile.by_id()))
    draft = check_draft(values_from_case(data), contract, casefile, None, None)
    assert draft.valid, draft.reason
    assert draft.changed  # a new case is unsaved work
    assert draft.data is not None
    assert draft.data.get("category") == (None if name == "blank" else name)


def test_negative_templates_never_expect_a_call(contract: Contract) -> None:
    for name in NEGATIVE:
        expect = from_template(name, contract, set())["expect"]
        assert (expect["kind"] == "tool_call") == (name == "boundary")


def test_problems_land_on_their_field(casefile: CaseFile, contract: Contract) -> None:
    data = orjson.loads(casefile.lines[0].text)  # direct_lookup
    values = values_from_case(data)
    values.id = "missing_id"  # taken by line 2
    values.arguments = '{"order_id": "ORD-1", "extra": 1}'
    draft = check_draft(values, contract, casefile, 1, data)
    assert not draft.valid
    assert draft.field_errors["id"] == ["id 'missing_id' is used on line 2"]
    assert draft.field_errors["arguments"] == [
        "invalid_arguments.additional_property at $.extra: Additional properties are not allowed ('extra' was unexpected)",
        "invalid_arguments.pattern at $.order_id: 'ORD-1' does not match '^ORD-[0-9]{6}$'",
    ]


def test_unparsable_json_is_reported_at_its_field_only(
    casefile: CaseFile, contract: Contract
) -> None:
    data = orjson.loads(casefile.lines[0].text)
    values = values_from_case(data)
    values.arguments = '{"order_id": '
    draft = check_draft(values, contract, casefile, 1, data)
    assert list(draft.field_errors) == ["arguments"]
    assert draft.field_errors["arguments"][0].startswith("invalid_json:")
    assert draft.text is None


def test_a_conversation_is_written_as_turns() -> None:
    messages, problem = parse_conversation(
        "user: hi\nassistant: which one?\nuser: the first\nplease"
    )
    assert problem is None
    assert messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "which one?"},
        {"role": "user", "content": "the first\nplease"},
    ]
    assert parse_conversation("user: a\nassistant: b")[1] == (
        "the conversation must end with the user's last message"
    )
    assert parse_conversation("hello")[1] == "line 1: start each turn with 'user:' or 'assistant:'"


def test_field_of_maps_paths_to_fields() -> None:
    assert field_of("$.expect.arguments.order_id") == "arguments"
    assert field_of("$.expect.calls[1].tool") == "calls"
    assert field_of("$.expect") == "kind"
    assert field_of("$.followup.tool_results.get_order") == "tool_results"
    assert field_of("$") is None


def test_a_bfcl_case_round_trips_with_its_own_tools_and_accept_lists(
    casefile: CaseFile, contract: Contract
) -> None:
    # the form has no field for a case's tools or accept lists: they are carried as they
    # were, in an edit and in a promoted (new) case alike, never dropped
    tool = {
        "name": "math_factorial",
        "description": "The factorial.",
        "parameters": {"type": "object", "properties": {"number": {"type": "integer"}}},
    }
    data = {
        "id": "simple_python_7",
        "category": "simple_python",
        "user": "5!?",
        "tools": [tool],
        "expect": {"kind": "tool_call", "tool": "math_factorial", "accept": {"number": [5]}},
    }
    for original in (data, None):
        values = values_from_case(data)
        if original is None:
            values.id = "simple_python_7_regression"
        draft = check_draft(values, contract, casefile, None, original)
        assert draft.valid, draft.reason
        assert draft.data is not None
        assert draft.data["tools"] == [tool] and draft.data["expect"] == data["expect"]
    # another tool chosen: its accept lists are not the old tool's
    values = values_from_case(data)
    values.tool = "get_order"
    draft = check_draft(values, contract, casefile, None, data)
    assert draft.data is not None and "accept" not in draft.data["expect"]
    values = values_from_case(data)
    values.tool = "get_order"
    draft = check_draft(values, contract, casefile, None, None)
    assert draft.data is not None and "accept" not in draft.data["expect"]
