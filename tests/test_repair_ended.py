"""How an attempt's repair turns ended, read from its record as the report reads it
(history.report_rows.record_repair_ended): History's list shows it beside turn 1's
verdict, so a summary the report would not count must not show an outcome either."""

from __future__ import annotations

from typing import Any

import pytest

from toolstand.history import record_repair_ended


@pytest.mark.parametrize(
    ("summary", "ended"),
    [
        ({"needed": True, "passed_after": 1, "input_tokens": 5, "output_tokens": 2}, "pass"),
        ({"needed": True, "passed_after": None, "valid_after": 2}, "fail"),
        ({"needed": True, "transport_error": "timeout"}, "err"),
        ({"needed": False, "passed_after": 1}, None),
        ({}, None),
        # hostile values: none reads as an outcome the report would not count
        ({"needed": True, "transport_error": {"code": "x"}}, None),
        ({"needed": True, "passed_after": True}, None),
        ({"needed": True, "passed_after": 1, "input_tokens": -1}, None),
        ({"needed": True, "passed_after": 1, "output_tokens": "2"}, None),
        ({"needed": True, "passed_after": "1"}, "fail"),
        ({"needed": True, "passed_after": 0}, "fail"),
        ({"needed": True, "transport_error": "\x00\x1b[2J" + "x" * 100_000}, "err"),
        ("needed", None),
        ([{"needed": True}], None),
        (None, None),
    ],
)
def test_a_repair_summary_ends_as_the_report_counts_it(summary: Any, ended: str | None) -> None:
    assert record_repair_ended({"repair": summary}) == ended


def test_a_record_without_a_repair_summary_ended_no_repair() -> None:
    assert record_repair_ended({"type": "attempt"}) is None
