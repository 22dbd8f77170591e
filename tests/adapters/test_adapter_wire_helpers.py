"""The pure helpers the adapters share (toolstand.adapters.base)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from toolstand.adapters import get_adapter
from toolstand.adapters.base import (
    ErrorClass,
    parse_json_object,
    reserialize,
    retry_after_from_headers,
    retry_hint,
    tool_call_from_wire,
    unknown_finish,
    unread_item,
)

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "3"}, 3.0),
        ({"Retry-After": "1.25"}, 1.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "nan", "retry-after": "2"}, 2.0),
        ({"retry-after": "-1"}, None),
        ({"retry-after": "soon"}, None),
        (
            {"retry-after": format_datetime(datetime.fromtimestamp(NOW + 30, UTC), usegmt=True)},
            30.0,
        ),
        ({"retry-after": format_datetime(datetime.fromtimestamp(NOW - 30, UTC), usegmt=True)}, 0.0),
    ],
)
def test_retry_after_from_headers(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_from_headers(headers, now=NOW) == expected


def test_retry_hint_and_should_retry() -> None:
    assert retry_hint({"X-Should-Retry": "false"}) is False
    assert retry_hint({"x-should-retry": "true"}) is True
    assert retry_hint({}) is None
    assert ErrorClass("rate_limited", "m").should_retry is True
    assert ErrorClass("rate_limited", "m", retryable=False).should_retry is False
    assert ErrorClass("bad_request", "m").should_retry is False
    assert ErrorClass("bad_request", "m", retryable=True).should_retry is True


@pytest.mark.parametrize(
    ("text", "expected", "error_start"),
    [
        ('{"a": 1}', {"a": 1}, None),
        ('{"a": NaN}', None, "not valid JSON"),
        ("", None, "not valid JSON"),
        ('{"a": 1', None, "not valid JSON"),
        ("{'a': 1}", None, "not valid JSON"),
        ('"{}"', None, "arguments are a JSON string"),
        ("1", None, "arguments are a JSON number"),
    ],
)
def test_parse_json_object_is_strict_and_never_repairs(
    text: str, expected: object, error_start: str | None
) -> None:
    value, error = parse_json_object(text)
    assert value == expected
    assert (
        (error is None)
        if error_start is None
        else (error is not None and error.startswith(error_start))
    )


def test_reserialize_keeps_key_order_and_big_integers() -> None:
    assert reserialize({"b": 1, "a": "Казань"}) == '{"b":1,"a":"Казань"}'
    assert reserialize({"n": 2**70}) == '{"n":1180591620717411303424}'


def test_tool_call_from_wire() -> None:
    call = tool_call_from_wire("f", '{"x": 1}', "", "synth-0")
    assert (call.call_id, call.call_id_synthesized, call.raw_arguments, call.raw_reserialized) == (
        "synth-0",
        True,
        '{"x": 1}',
        False,
    )
    call = tool_call_from_wire("f", None, "id-1", "synth-0")
    assert (call.arguments, call.raw_arguments, call.parse_error) == (
        None,
        None,
        "arguments missing",
    )
    call = tool_call_from_wire("f", "text", "id-1", "s")
    assert call.arguments is None and call.raw_arguments == "text"


def test_parse_guarded_turns_a_parser_crash_into_an_invalid_decision() -> None:
    from toolstand.adapters.base import parse_guarded
    from toolstand.decision import ModelDecision

    def broken(body: object) -> ModelDecision:
        raise KeyError("choices")

    d = parse_guarded(broken, {"x": 1})
    assert (d.kind, d.flags, d.calls) == ("invalid", ["adapter_error"], [])
    assert parse_guarded(lambda b: ModelDecision("text", text="ok"), {}).text == "ok"


def test_notes_spell_control_characters_and_stay_short() -> None:
    """An item type or finish reason comes from the provider: a note shows it with its
    control characters spelled and a huge one cut, so no note can paint a terminal."""
    note = unread_item("output item", "web\x1b[2J\nsearch")
    assert "\x1b" not in note and "\n" not in note and "\\x1b" in note
    huge = unknown_finish("status", "x" * 10_000)
    assert len(huge) < 160 and "..." in huge
    assert unread_item("part", None) == "part None not read (kept in the raw body)"
    body = {"status": "completed", "output": [{"type": "a\x07" * 5000}, {"type": "a\x07" * 5000}]}
    d = get_adapter("openai-responses").parse_decision(body)
    assert d.kind == "invalid" and len(d.notes) == 1 and len(d.notes[0]) < 160
