"""The judge on streamed answers (empty arguments) and the streaming config."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from toolstand.decision import ModelDecision, ToolCall
from toolstand.judge.verdict import judge
from toolstand.spec.cases import Case
from toolstand.spec.config import parse_config
from toolstand.spec.contract import Contract
from toolstand.util.problems import LoadError

CONTRACT = Contract.model_validate({"name": "t", "version": "1", "tools": [
    {"name": "list_all", "description": "d", "effect": "read",
     "parameters": {"type": "object", "properties": {"limit": {"type": "integer"}}}},
    {"name": "get_order", "description": "d", "effect": "read",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"]}},
]})  # fmt: skip


def case(tool: str) -> Case:
    return Case.model_validate({"id": "c", "user": "u", "category": "positive",
                                "expect": {"kind": "tool_call", "tool": tool}})  # fmt: skip


def empty(name: str) -> ModelDecision:
    call = ToolCall(name, None, "", "call_1", parse_error="not valid JSON: empty")
    return ModelDecision("tool_call", calls=[call])


def test_empty_arguments_is_invalid_json_flagged_and_repairable_without_required() -> None:
    j = judge(case("list_all"), empty("list_all"), CONTRACT)
    assert [e["code"] for e in j["errors"]] == ["invalid_json"]
    assert "empty_arguments" in j["flags"]
    row = j["calls"][0]
    assert row["repair"] == "repairable" and row["repaired_arguments"] == {}
    assert row["repairs"] == [{"path": "$", "rule": "empty_arguments", "from": "", "to": {}}]


def test_empty_arguments_for_a_tool_with_a_required_parameter_stays_invalid() -> None:
    j = judge(case("get_order"), empty("get_order"), CONTRACT)
    assert "empty_arguments" in j["flags"]
    assert j["calls"][0]["repair"] == "invalid" and j["calls"][0]["repaired_arguments"] is None


def base(run: Any = None, **extra: Any) -> bytes:
    spec = {"provider": "p", "model": "m", "base_url": "sim", **(run or {})}
    return orjson.dumps({"runs": [spec], "tools": "t.json", "cases": "c.jsonl", **extra})


def test_stream_config_top_level_and_per_run() -> None:
    c = parse_config(base())
    assert c.stream is False and c.stream_arms(c.runs[0]) == [False]
    assert c.stream_idle_timeout_s == 30 and c.max_response_bytes == 8 * 1024 * 1024
    assert c.timeouts.request_s == 300 and c.timeouts.attempt_s == 900
    c = parse_config(base(stream="both"))
    assert c.stream_arms(c.runs[0]) == [False, True]
    c = parse_config(base(stream="both", run={"stream": True}))
    assert c.stream_arms(c.runs[0]) == [True]
    c = parse_config(base(stream=True, run={"stream": False}))
    assert c.stream_arms(c.runs[0]) == [False]


@pytest.mark.parametrize(
    ("extra", "path"),
    [({"stream": "yes"}, "$.stream"), ({"stream_idle_timeout_s": 0}, "$.stream_idle_timeout_s"),
     ({"max_response_bytes": 10}, "$.max_response_bytes"), ({"run": {"stream": 1}}, "$.runs[0].stream")],
)  # fmt: skip
def test_bad_stream_settings_are_refused_with_their_path(
    extra: dict[str, object], path: str
) -> None:
    with pytest.raises(LoadError) as err:
        parse_config(base(**extra))
    assert path in str(err.value)
