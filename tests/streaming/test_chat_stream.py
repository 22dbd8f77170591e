"""Chat Completions streams (providers.md S2) and each server bug class of S6.2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.streams import decide, sse

STREAMS = Path(__file__).parent.parent / "fixtures" / "streams"
API = "openai-chat"


def chunk(delta: Any, finish: str | None = None, **extra: Any) -> str:
    return sse({"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}], **extra})  # fmt: skip


def opener(index: int, ident: str | None, name: str | None, args: str = "") -> dict[str, Any]:
    fn: dict[str, Any] = {"arguments": args}
    if name is not None:
        fn["name"] = name
    entry: dict[str, Any] = {"index": index, "type": "function", "function": fn}
    if ident is not None:
        entry["id"] = ident
    return {"tool_calls": [entry]}


def frag(index: int, args: str, **extra: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, "function": {"arguments": args}, **extra}]}


DONE = sse("[DONE]")


def calls(raw: str) -> list[tuple[str, Any, str | None]]:
    reading, decision = decide(API, raw)
    assert decision is not None, reading.error
    return [
        (c.name, c.arguments if c.arguments is not None else c.raw_arguments, c.call_id)
        for c in decision.calls
    ]


def flags(raw: str) -> list[str]:
    _, decision = decide(API, raw)
    assert decision is not None
    return decision.flags


def test_recorded_single_and_parallel_calls() -> None:
    one = (STREAMS / "openai-chat-tool-call.sse").read_text()
    assert calls(one) == [
        ("get_weather", {"city": "Edinburgh", "unit": "celsius"}, "call_Qm3tVb8ZrW1kLp0sXy7nHd2F")
    ]
    two = (STREAMS / "openai-chat-parallel-tool-calls.sse").read_text()
    assert [c[0] for c in calls(two)] == ["get_weather", "get_stock_price"]
    reading, _ = decide(API, two)
    assert reading.body["usage"]["prompt_tokens"] == 152


def test_text_refusal_and_truncation() -> None:
    text = (
        chunk({"role": "assistant", "content": ""})
        + chunk({"content": "Hel"})
        + chunk({"content": "lo"})
        + chunk({}, "stop")
        + DONE
    )
    _, d = decide(API, text)
    assert d is not None and (d.kind, d.text) == ("text", "Hello")
    refusal = (
        chunk({"role": "assistant", "content": None, "refusal": ""})
        + chunk({"refusal": "I can't"})
        + chunk({}, "stop")
        + DONE
    )
    _, d = decide(API, refusal)
    assert d is not None and (d.kind, d.refusal) == ("refusal", "I can't")
    cut = (
        chunk(opener(0, "c1", "get_order")) + chunk(frag(0, '{"order')) + chunk({}, "length") + DONE
    )
    _, d = decide(API, cut)
    assert (
        d is not None
        and d.kind == "invalid"
        and d.truncated
        and d.partial_calls[0].raw_arguments == '{"order'
    )


def test_error_chunk_after_200_is_the_error_of_its_kind() -> None:
    raw = chunk(opener(0, "c1", "f")) + sse(
        {"error": {"message": "The server had an error", "type": "server_error"}}
    )
    reading, d = decide(API, raw)
    assert d is None and reading.error is not None and reading.error.code == "server_error"
    groq = sse({"error": {"message": "Tool call validation failed", "type": "invalid_request_error",
                          "code": "tool_use_failed", "status_code": 400}}, "error")  # fmt: skip
    reading, _ = decide(API, groq)
    assert reading.error is not None and reading.error.code == "bad_request"
    assert "Tool call validation failed" in reading.error.message


def test_no_done_is_interrupted() -> None:
    reading, d = decide(API, chunk(opener(0, "c1", "f", "{}")) + chunk({}, "tool_calls"))
    assert d is None and reading.error is not None and reading.error.code == "stream_interrupted"


def test_args_whole_and_opener_with_args() -> None:
    whole = (
        chunk(opener(0, "fc_1", "get_order", '{"order_id":"A"}')) + chunk({}, "tool_calls") + DONE
    )
    assert calls(whole) == [("get_order", {"order_id": "A"}, "fc_1")]
    assert "opener_with_args" in flags(whole)


def test_args_empty_zero_param_is_kept_as_received() -> None:
    raw = chunk(opener(0, "c1", "list_all")) + chunk({}, "tool_calls") + DONE
    _, d = decide(API, raw)
    assert d is not None and d.calls[0].raw_arguments == "" and d.calls[0].arguments is None


def test_args_cumulative_is_judged_as_received() -> None:
    raw = (
        chunk(opener(0, "c1", "f"))
        + chunk(frag(0, '{"a":'))
        + chunk(frag(0, '{"a":1}'))
        + chunk({}, "tool_calls")
        + DONE
    )
    _, d = decide(API, raw)
    assert (
        d is not None
        and d.calls[0].raw_arguments == '{"a":{"a":1}'
        and d.calls[0].arguments is None
    )


def test_value_coerced_and_args_lost_arrive_as_sent() -> None:
    coerced = chunk(opener(0, "c1", "f", '{"n": "123"}')) + chunk({}, "tool_calls") + DONE
    assert calls(coerced)[0][1] == {"n": "123"}
    lost = chunk(opener(0, "c1", "f", "{")) + chunk({}, "tool_calls") + DONE
    assert calls(lost)[0][1] == "{"


def test_call_lost_gives_fewer_calls() -> None:
    raw = chunk(opener(0, "c1", "a", "{}")) + chunk({}, "tool_calls") + DONE
    assert [c[0] for c in calls(raw)] == ["a"]


def test_id_missing_is_synthesized_and_flagged() -> None:
    raw = chunk(opener(0, None, "f", "{}")) + chunk({}, "tool_calls") + DONE
    assert calls(raw)[0][2] == "openai-chat-call-0"
    assert "id_missing" in flags(raw)


def test_id_per_delta_never_opens_a_call() -> None:
    raw = (
        chunk(opener(0, "c1", "f"))
        + chunk(frag(0, '{"a"', id="c2"))
        + chunk(frag(0, ":1}", id="c3"))
        + chunk({}, "tool_calls")
        + DONE
    )
    assert calls(raw) == [("f", {"a": 1}, "c1")]
    assert "id_per_delta" in flags(raw)


def test_index_reuse_opens_a_new_call_for_a_new_id() -> None:
    raw = (chunk(opener(0, "c1", "a", '{"x":1}')) + chunk(opener(0, "c2", "b", '{"y":2}'))
           + chunk({}, "tool_calls") + DONE)  # fmt: skip
    assert calls(raw) == [("a", {"x": 1}, "c1"), ("b", {"y": 2}, "c2")]
    assert "index_reuse" in flags(raw)


def test_index_duplicate_is_merged() -> None:
    raw = (chunk(opener(0, "c1", "a", '{"x":1}')) + chunk(opener(1, "c1", "a", '{"x":1}'))
           + chunk({}, "tool_calls") + DONE)  # fmt: skip
    assert calls(raw) == [("a", {"x": 1}, "c1")]
    assert "index_duplicate" in flags(raw)


def test_name_repeated_is_set_once() -> None:
    raw = (chunk(opener(0, "c1", "get_weather", '{"a"')) + chunk(opener(0, "c1", "get_weather", ":1}"))
           + chunk({}, "tool_calls") + DONE)  # fmt: skip
    assert calls(raw) == [("get_weather", {"a": 1}, "c1")]
    assert "name_repeated" in flags(raw)


def test_interleaved_parallel_calls_assemble_by_index() -> None:
    raw = (chunk(opener(0, "c0", "a")) + chunk(opener(1, "c1", "b")) + chunk(frag(1, '{"y"'))
           + chunk(frag(0, '{"x"')) + chunk(frag(0, ":1}")) + chunk(frag(1, ":2}")) + chunk({}, "tool_calls") + DONE)  # fmt: skip
    assert calls(raw) == [("a", {"x": 1}, "c0"), ("b", {"y": 2}, "c1")]


def test_finish_wrong_missing_repeated_with_delta() -> None:
    wrong = chunk(opener(0, "c1", "f", "{}")) + chunk({}, "stop") + DONE
    _, d = decide(API, wrong)
    assert d is not None and d.kind == "tool_call"
    missing = sse({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
        "content": "hi", "tool_calls": []}}]}) + DONE  # fmt: skip
    _, d = decide(API, missing)
    assert d is not None and d.kind == "text" and "finish_missing" in d.flags
    repeated = chunk({"content": "hi"}, "stop") + chunk({}, "stop") + chunk({}, None) + DONE
    _, d = decide(API, repeated)
    assert d is not None and d.finish_reason == "stop" and "finish_repeated" in d.flags
    with_delta = chunk(opener(0, "c1", "f", '{"a":')) + chunk(frag(0, "1}"), "tool_calls") + DONE
    assert calls(with_delta) == [("f", {"a": 1}, "c1")]


def test_usage_elsewhere_last_wins() -> None:
    raw = (chunk({"content": "a"}, usage={"prompt_tokens": 1, "completion_tokens": 1})
           + chunk({}, "stop", usage={"prompt_tokens": 9, "completion_tokens": 4}) + DONE)  # fmt: skip
    reading, _ = decide(API, raw)
    assert reading.body["usage"] == {"prompt_tokens": 9, "completion_tokens": 4}


def test_comment_keepalive_choices_null_and_azure_filter_chunks() -> None:
    raw = (": OPENROUTER PROCESSING\n\n" + sse({"object": "", "choices": [], "prompt_filter_results": []})
           + sse({"object": "chat.completion.chunk", "choices": None}) + chunk(None)
           + chunk({"content": "ok"}, "stop") + DONE)  # fmt: skip
    _, d = decide(API, raw)
    assert d is not None and d.text == "ok" and "choices_null" in d.flags


def test_reasoning_deltas_are_kept_apart() -> None:
    raw = chunk({"reasoning": "think"}) + chunk({"content": "answer"}, "stop") + DONE
    reading, d = decide(API, raw)
    assert d is not None and d.text == "answer" and "reasoning" in d.flags
    assert reading.body["choices"][0]["message"]["reasoning"] == "think"


def test_the_assembled_body_is_json_the_next_turn_can_send() -> None:
    reading, _ = decide(API, (STREAMS / "openai-chat-tool-call.sse").read_text())
    message = reading.body["choices"][0]["message"]
    assert message["tool_calls"][0] == {
        "id": "call_Qm3tVb8ZrW1kLp0sXy7nHd2F", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Edinburgh","unit":"celsius"}'},
    }  # fmt: skip
    json.dumps(reading.body)
