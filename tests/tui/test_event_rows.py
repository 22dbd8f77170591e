"""Each API's events as the Events pane lists them: type and delta (providers.md S2-S5)."""

from __future__ import annotations

from toolstand.adapters.sse import SseEvent
from toolstand.tui.model.events import (
    EventRow,
    event_row,
    recorded_rows,
    stream_title,
    stream_titles,
)


def row(data: str, event: str = "message") -> tuple[str, str]:
    got = event_row(SseEvent(event, data), 1.0)
    return got.type, got.delta


def test_rows_name_the_type_and_the_delta_of_each_api() -> None:
    chat = '{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":'
    chat += '[{"index":0,"id":"call_1","function":{"name":"get_order","arguments":"{\\"o"}}]}}]}'
    assert row(chat) == ("chat.completion.chunk", 'get_order {"o')
    assert row("[DONE]") == ("[DONE]", "")
    anthropic = '{"type":"content_block_delta","index":0,'
    anthropic += '"delta":{"type":"input_json_delta","partial_json":"{\\"order_id\\""}}'
    assert row(anthropic, "content_block_delta") == ("content_block_delta", '{"order_id"')
    responses = '{"type":"response.output_text.delta","output_index":0,"delta":"Hel"}'
    assert row(responses, "response.output_text.delta") == ("response.output_text.delta", "Hel")
    gemini = '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":'
    gemini += '{"name":"get_order","args":{"order_id":"ORD-1"}}}]}}]}'
    assert row(gemini) == ("message", 'get_order({"order_id":"ORD-1"})')


def test_recorded_rows_pair_events_with_their_arrival() -> None:
    body = 'event: ping\ndata: {"type":"ping"}\n\n: keep-alive\n\ndata: [DONE]\n\n'
    response = {"status": 200, "body": body, "stream": {"events": 2, "event_ms": [3.5, 9.0]}}
    assert recorded_rows(response) == [EventRow(3.5, "ping", ""), EventRow(9.0, "[DONE]", "")]
    assert recorded_rows({"status": 200, "body": {"x": 1}}) is None  # not streamed
    stream = {"first_token_ms": 4.2, "first_call_ms": 7.9, "complete": False}
    assert stream_title(stream, 2) == "events · 2 · token 4 · call 8 ms · incomplete"
    # narrow, the first token gives way before the first call, and no figure is cut
    slow = {"first_token_ms": 1234.0, "first_call_ms": 5678.0}
    assert stream_titles(slow, 12) == (
        "events · 12 · token 1234 · call 5678 ms",
        "events · 12 · call 5678 ms",
        "events · 12",
    )
    assert stream_titles({"first_token_ms": 3.0}, 1) == ("events · 1 · token 3 ms", "events · 1")
    assert stream_titles(None, 0) == ("events · 0",)
    assert EventRow(12.5, "x", "a\nb").line() == "    12.5  x  a\\x0ab"  # one line each
