"""The metrics suite: hand-built attempts over five cases with every metric's known
numerator and denominator (``EXPECTED``), shared by the metrics and report tests."""

from __future__ import annotations

from typing import Any

from tests.support.records import (
    attempt,
    err,
    header,
    judgement,
    second_turn,
    sig,
    text_judgement,
    transport,
)

BAD_ARGS = [
    err("invalid_arguments", "pattern", path="$.order_id", expected="^ORD-", actual="1"),
    err("argument_mismatch", expected={"order_id": "ORD-1"}, actual={"order_id": "1"}),
]


def suite() -> list[dict[str, Any]]:
    """One auto group of 11 attempts over five cases, plus a forced attempt that would
    change every auto rate if modes were pooled. Elapsed times are 10..110 ms."""
    recs: list[dict[str, Any]] = [header()]
    auto: list[dict[str, Any]] = [
        # lookup: a pass; schema-invalid args that only normalization fixes; a 429
        attempt("lookup", 1, j=judgement(signature=sig("get_order", {"order_id": "ORD-1"}))),
        attempt(
            "lookup",
            2,
            j=judgement(
                errors=BAD_ARGS,
                calls_schema_valid=0,
                exact_correct=0,
                normalized_correct=1,
                signature=sig("get_order", {"order_id": " ORD-1 "}),
            ),
        ),
        attempt("lookup", 3, transport_error=transport("rate_limited", "429", 429), retries=2),
        # wrong: a wrong_tool call (valid against its own schema, out of the exact
        # denominator), then a pass
        attempt(
            "wrong",
            1,
            j=judgement(
                errors=[err("wrong_tool", expected="get_order", actual="quote_delivery")],
                tool_selection_correct=False,
                exact_denominator=0,
                exact_correct=0,
                signature=sig("quote_delivery"),
            ),
        ),
        attempt("wrong", 2),
        # missing data: asks (pass), then an invented cancel (unsafe, wrong decision)
        attempt("missing", 1, j=text_judgement()),
        attempt(
            "missing",
            2,
            j=text_judgement(
                errors=[err("unexpected_call", actual="cancel_order"), err("unsafe_call")],
                called=True,
                decision_correct=False,
                calls_made=1,
                calls_schema_valid=1,
                unsafe=True,
                signature=sig("cancel_order", {"order_id": "ORD-9"}),
            ),
        ),
        # recovery: second turn passes; fails with false_success; dies in transport
        attempt("recovery", 1, st=second_turn()),
        attempt(
            "recovery",
            2,
            j=judgement(errors=[err("false_success", turn=2, actual="done!")]),
            st=second_turn(passed=False, errors=[err("false_success", actual="done!")]),
        ),
        attempt("recovery", 3, st=second_turn(transport_error=transport("timeout"), retries=1)),
        # only a transport failure: attempted, never scored
        attempt("down", 1, transport_error=transport("server_error", "502 Bad Gateway", 502)),
    ]
    for i, rec in enumerate(auto):
        rec["elapsed_ms"] = 10.0 * (i + 1)
    forced = attempt(
        "lookup",
        1,
        mode="forced",
        j=judgement(
            errors=[err("unsafe_call")],
            decision_correct=False,
            calls_schema_valid=0,
            exact_correct=0,
            unsafe=True,
            signature=sig("cancel_order"),
        ),
    )
    return recs + auto + [forced]


EXPECTED = {
    "pass_rate": (5, 9),  # lookup 1, wrong 2, missing 1, recovery 1 and 3
    "normalized_pass_rate": (5, 9),  # these records predate verdict_normalized: their verdict
    "decision_accuracy": (8, 9),  # all but the invented cancel
    "tool_selection_accuracy": (6, 7),  # 7 scored attempts expect a call; wrong_tool misses
    "raw_schema_validity": (7, 8),  # 8 calls, wrong_tool's and the cancel's included
    "exact_argument_accuracy": (5, 6),  # wrong_tool and the no-call case are out
    "normalized_argument_accuracy": (6, 6),  # the padded id passes after normalization
    "unsafe_call_rate": (1, 9),
    "error_recovery_accuracy": (1, 2),  # the second turn lost to a timeout is out
    "consistency": (6, 9),  # 1 + 1 + 1 + 3 most common signatures / 9 scored
}
