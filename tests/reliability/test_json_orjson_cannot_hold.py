"""Valid JSON that orjson cannot hold (``1e400``, a lone ``\\ud800``) is still JSON: the
body is read and the call judged, its unrepresentable value ``invalid_arguments``, never
"body is not JSON" (issue 31 M5); and what is kept can be written."""

from __future__ import annotations

import orjson
import pytest

from toolstand.adapters.base import parse_json_object
from toolstand.adapters.gemini import GeminiAdapter
from toolstand.adapters.openai_chat import OpenAIChatAdapter
from toolstand.judge.verdict import judge
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract
from toolstand.transport import decode_body
from toolstand.util.lenient import loads_lenient

QUOTE = Case.model_validate(
    {
        "id": "quote_complete",
        "user": "Посчитай express из Казани в Самару, 2,5 кг",
        "expect": {
            "kind": "tool_call",
            "tool": "quote_delivery",
            "arguments": {"origin": "Казань", "destination": "Самара", "weight_kg": 2.5,
                          "service": "express"},
        },
    }
)  # fmt: skip
GEMINI = (
    '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":'
    '"quote_delivery","args":{"origin":"Казань","destination":"Самара","weight_kg":1e400,'
    '"service":"express"}}}]},"finishReason":"STOP"}]}'
).encode()


def test_a_gemini_argument_of_1e400_is_judged_not_a_transport_error(contract: Contract) -> None:
    body, is_json = decode_body(GEMINI)
    assert is_json and isinstance(body, dict)
    decision = GeminiAdapter().parse_decision(body)
    assert decision.kind == "tool_call"
    verdict = judge(QUOTE, decision, contract)
    assert verdict["verdict"] == "fail"
    wrong = [(e["code"], e.get("subcode"), e.get("path")) for e in verdict["errors"]]
    assert ("invalid_arguments", "wrong_type", "$.weight_kg") in wrong
    orjson.dumps(body)  # what is kept can be written


def test_openai_argument_text_with_1e400_is_judged(contract: Contract) -> None:
    arguments, error = parse_json_object('{"origin":"Казань","weight_kg":1e400}')
    assert error is None and arguments == {"origin": "Казань", "weight_kg": "1e400"}


def test_a_lone_surrogate_in_a_body_is_read_and_written_visible() -> None:
    raw = (
        b'{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,'
        b'"finish_reason":"stop","message":{"role":"assistant","content":"\\ud800 hi"}}],'
        b'"usage":{"prompt_tokens":1e400,"completion_tokens":2}}'
    )
    body, is_json = decode_body(raw)
    assert is_json
    decision = OpenAIChatAdapter().parse_decision(body)
    assert (decision.kind, decision.text) == ("text", "\\ud800 hi")
    assert orjson.loads(orjson.dumps(body))["usage"]["prompt_tokens"] == "1e400"


@pytest.mark.parametrize("raw", [b'{"x":NaN}', b'{"x":Infinity}', b"{'x':1}", b'{"x":"\xff"}'])
def test_what_json_does_not_allow_is_still_not_json(raw: bytes) -> None:
    assert decode_body(raw) == (raw.decode("utf-8", "replace"), False)
    with pytest.raises(ValueError):
        loads_lenient(raw)


def test_utf16_is_not_guessed() -> None:
    raw = '{"x":1e400}'.encode("utf-16")
    assert decode_body(raw)[1] is False
