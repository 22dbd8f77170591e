"""Issue 19: body shapes seen in real recorded 200s, read from the wire to the verdict.

Each row is one shape a provider was seen to send: the adapter's
decision and the judge's codes on a case that expects a call (direct_lookup), one that
expects text (missing_id) and one that expects a refusal (refuse_forgery). None of them
is ``invalid_json``: that code is the model's argument JSON, never a body shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.support.adapters import body
from toolstand.adapters import APIS, get_adapter
from toolstand.judge.verdict import judge
from toolstand.spec.cases import CaseFile
from toolstand.spec.contract import Contract

SHAPES: list[tuple[str, str, str, list[str], list[str], list[str]]] = [
    # api, fixture, kind, codes for direct_lookup, for missing_id, for refuse_forgery
    (
        "gemini",
        "f_unexpected_tool_call",
        "tool_call",
        ["wrong_tool"],
        ["unexpected_call"],
        ["unexpected_call"],
    ),
    (
        "gemini",
        "d_refusal_model_armor",
        "refusal",
        ["unexpected_refusal"],
        ["unexpected_refusal"],
        [],
    ),
    (
        "gemini",
        "e_max_tokens_thinking_no_parts",
        "invalid",
        ["truncated"],
        ["truncated"],
        ["truncated"],
    ),
    (
        "gemini",
        "g_unknown_finish_reason",
        "text",
        ["missing_call"],
        [],  # its text names "ORD-", one of missing_id's contains_any
        ["text_mismatch"],
    ),
    (
        "openai-responses",
        "j_hosted_items_with_text",
        "text",
        ["missing_call"],
        ["text_mismatch"],
        ["text_mismatch"],
    ),
    (
        "openai-responses",
        "j_hosted_items_with_call",
        "tool_call",
        [],
        ["unexpected_call"],
        ["unexpected_call"],
    ),
    (
        "openai-responses",
        "j_hosted_items_only",
        "invalid",
        ["missing_call"],
        ["text_mismatch"],
        ["text_mismatch"],
    ),
    (
        "anthropic",
        "h_server_tool_blocks",
        "text",
        ["missing_call"],
        ["text_mismatch"],
        ["text_mismatch"],
    ),
    ("openai-chat", "h_unknown_finish_reason", "text", ["missing_call"], [], ["text_mismatch"]),
]


def codes(j: Mapping[str, Any]) -> list[str]:
    return [e["code"] for e in j["errors"]]


@pytest.mark.parametrize(("api", "fixture", "kind", "on_call", "on_text", "on_refusal"), SHAPES)
def test_shape_gives_the_stated_decision_and_codes(
    casefile: CaseFile,
    contract: Contract,
    api: str,
    fixture: str,
    kind: str,
    on_call: list[str],
    on_text: list[str],
    on_refusal: list[str],
) -> None:
    adapter = get_adapter(api)
    raw = body(api, fixture)
    assert adapter.classify_error(200, {}, raw) is None  # an answer, not a transport failure
    decision = adapter.parse_decision(raw)
    assert decision.kind == kind
    by_id = casefile.by_id()
    for case_id, want in (
        ("direct_lookup", on_call),
        ("missing_id", on_text),
        ("refuse_forgery", on_refusal),
    ):
        assert codes(judge(by_id[case_id], decision, contract)) == want, case_id


@pytest.mark.parametrize("status", ["queued", "in_progress"])
def test_responses_not_final_is_a_transport_error(status: str) -> None:
    err = get_adapter("openai-responses").classify_error(
        200, {}, body("openai-responses", f"i_status_{status}")
    )
    assert err is not None and err.code == "malformed_response"


def _undeclared(api: str) -> Any:
    """The API's one-call fixture with the call renamed to a tool nobody declared."""
    raw = body(api, "b_tool_call")
    if api == "openai-chat":
        raw["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = "list_files"
    elif api == "openai-responses":
        [item] = [i for i in raw["output"] if i["type"] == "function_call"]
        item["name"] = "list_files"
    elif api == "anthropic":
        [block] = [b for b in raw["content"] if b["type"] == "tool_use"]
        block["name"] = "list_files"
    else:
        raw["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] = "list_files"
    return raw


@pytest.mark.parametrize("api", APIS)
def test_a_call_to_an_undeclared_tool_is_a_call_on_every_api(
    casefile: CaseFile, contract: Contract, api: str
) -> None:
    decision = get_adapter(api).parse_decision(_undeclared(api))
    assert decision.kind == "tool_call" and [c.name for c in decision.calls] == ["list_files"]
    assert decision.calls[0].arguments is not None  # its arguments parse
    by_id = casefile.by_id()
    j = judge(by_id["direct_lookup"], decision, contract)
    assert codes(j) == ["wrong_tool"]
    assert (j["metrics"]["calls_made"], j["metrics"]["calls_unknown_tool"]) == (0, 1)
    assert codes(judge(by_id["missing_id"], decision, contract)) == ["unexpected_call"]
