"""A key written twice in one object of a model's argument JSON is ``invalid_json`` with
sub-code ``duplicate_key`` (issue 31 M11): a last-wins parser (the stand's) and a
first-wins one (the user's tool) read different calls, so neither reading is judged."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from toolstand.adapters.base import parse_json_object
from toolstand.adapters.openai_chat import OpenAIChatAdapter
from toolstand.decision import ToolCall
from toolstand.judge.verdict import judge
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract

LOOKUP = Case.model_validate(
    {
        "id": "direct_lookup",
        "user": "Где заказ ORD-123456?",
        "expect": {
            "kind": "tool_call",
            "tool": "get_order",
            "arguments": {"order_id": "ORD-123456"},
        },
    }
)
DUPLICATED = '{"order_id":"DROP TABLE","order_id":"ORD-123456"}'


def chat_body(arguments: str) -> dict[str, Any]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_order", "arguments": arguments},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
    }


def test_a_duplicated_argument_key_fails_as_invalid_json_duplicate_key(contract: Contract) -> None:
    decision = OpenAIChatAdapter().parse_decision(chat_body(DUPLICATED))
    (call,) = decision.calls
    assert call.arguments is None and call.raw_arguments == DUPLICATED
    verdict = judge(LOOKUP, decision, contract)
    assert verdict["verdict"] == "fail"
    (error,) = verdict["errors"]
    assert (error["code"], error.get("subcode"), error["actual"]) == (
        "invalid_json",
        "duplicate_key",
        DUPLICATED,
    )
    assert error["message"].startswith("duplicate key 'order_id' at $.order_id")
    assert verdict["metrics"]["calls_schema_valid"] == 0


def test_the_sub_code_survives_the_record(contract: Contract) -> None:
    """A rejudged history reads the call back from its record: same sub-code."""
    decision = OpenAIChatAdapter().parse_decision(chat_body(DUPLICATED))
    back = ToolCall.from_dict(orjson.loads(orjson.dumps(decision.calls[0].to_dict())))
    decision.calls = [back]
    (error,) = judge(LOOKUP, decision, contract)["errors"]
    assert error.get("subcode") == "duplicate_key"


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"a":{"b":1, "b" :2}}', "$.a.b"),
        ('{"a":[{"k":"x:y"},{"k":1,"k":1}]}', "$.a[1].k"),
    ],
)
def test_a_duplicate_anywhere_is_found_with_its_path(text: str, path: str) -> None:
    arguments, error = parse_json_object(text)
    assert arguments is None and error is not None
    assert error.startswith(f"duplicate key {path.rsplit('.', 1)[-1].split('[')[0]!r} at {path}:")


@pytest.mark.parametrize(
    "text",
    ['{"order_id":"ORD-123456"}', '{"t":"12:30","u":"a\\":b","n":{"k":[{"k":1}]}}', "{}"],
)
def test_distinct_keys_parse_as_before(text: str) -> None:
    assert parse_json_object(text) == (orjson.loads(text), None)
