"""`toolstand rejudge`: stored raw responses re-parsed and re-judged with no request."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, err, header, judgement, write_jsonl
from toolstand.adapters import get_adapter
from toolstand.decision import ModelDecision
from toolstand.run.rejudge import rejudge_file
from toolstand.run.runner import load_inputs, run
from toolstand.spec.config import parse_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = {
        "runs": [
            {"provider": "sim", "model": "sim-careful", "api": "openai-chat", "base_url": "sim"},
            {"provider": "sim", "model": "sim-sloppy", "api": "gemini", "base_url": "sim"},
        ],
        "system_prompt": "prompts/delivery-router-v1.txt",
        "tools": "contracts/delivery_tools.json",
        "cases": "cases/delivery.jsonl",
        "repetitions": 2,
    }
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    out = tmp_path_factory.mktemp("rj") / "run.jsonl"
    asyncio.run(run(inputs, out, progress_out=None))
    return out


def attempts(path: Path) -> list[dict[str, Any]]:
    recs = [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    return [r for r in recs if r["type"] == "attempt"]


def test_unchanged_code_changes_nothing(history: Path, tmp_path: Path) -> None:
    out = tmp_path / "same.jsonl"
    assert rejudge_file(history, out, warn=io.StringIO()) == []
    old, new = attempts(history), attempts(out)
    assert len(old) == len(new)
    assert [a["judgement"] for a in old] == [a["judgement"] for a in new]


def test_planted_adapter_change_is_found(
    history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter = type(get_adapter("openai-chat"))
    real = adapter.parse_decision

    def lossy(self: Any, body: Any) -> ModelDecision:
        d = real(self, body)
        d.calls = d.calls[:1]  # a planted bug: the second parallel call is lost
        return d

    monkeypatch.setattr(adapter, "parse_decision", lossy)
    out = tmp_path / "new.jsonl"
    changes = rejudge_file(history, out, warn=io.StringIO())
    keys = {c.key for c in changes}
    assert keys == {
        "sim/sim-careful auto parallel_lookup#1",
        "sim/sim-careful auto parallel_lookup#2",
    }
    assert all(c.old_verdict == "pass" and c.new_verdict == "fail" for c in changes)
    assert all("call_count_mismatch" in c.new_codes for c in changes)
    # the source is never touched, and sending nothing is the point
    with pytest.raises(Exception, match="new file"):
        rejudge_file(history, history, warn=io.StringIO())


BODIES = ROOT / "tests" / "fixtures" / "bodies"
DIRECT = {"order_id": "ORD-123456"}


def _stored(
    case_id: str, api: str, mode: str, fixture: str | dict[str, Any], old_codes: list[str]
) -> dict[str, Any]:
    """An attempt as an older toolstand judged and wrote it: the raw body kept, the
    verdict given under the old rules."""
    body = (
        orjson.loads((BODIES / api / f"{fixture}.json").read_bytes())
        if isinstance(fixture, str)
        else fixture
    )
    rec = attempt(case_id, api=api, mode=mode, j=judgement(errors=[err(c) for c in old_codes]))
    rec["response"] = {"status": 200, "headers": {}, "body": body}
    if mode == "no_tools":
        rec["offered_tools"] = []
    return rec


def test_rejudge_brings_old_verdicts_to_the_new_rules(tmp_path: Path) -> None:
    """Issue 14 item 7 (the no_tools control) and issue 19 (real body shapes): a history
    judged under the old rules, re-judged with no request, gets the new verdicts."""
    text_answer = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Я не могу проверить заказ."},
                "finish_reason": "stop",
            }
        ]
    }
    records = [
        # no_tools: a call-expecting case answered with text was missing_call; now it passes
        _stored("direct_lookup", "openai-chat", "no_tools", text_answer, ["missing_call"]),
        # Gemini UNEXPECTED_TOOL_CALL was invalid_json; now a call to an unknown tool
        _stored("direct_lookup", "gemini", "auto", "f_unexpected_tool_call", ["invalid_json"]),
        # MODEL_ARMOR was invalid_json; now a refusal, which the refusal case expects
        _stored("refuse_forgery", "gemini", "auto", "d_refusal_model_armor", ["invalid_json"]),
        # hosted items beside a message lost the text; now it is read
        _stored(
            "irrelevant_joke",
            "openai-responses",
            "auto",
            "j_hosted_items_with_text",
            ["invalid_json"],
        ),
        # a queued response was judged; now it is a transport failure
        _stored("direct_lookup", "openai-responses", "auto", "i_status_queued", ["invalid_json"]),
    ]
    head = header()
    head["contract"]["path"] = str(ROOT / "contracts" / "delivery_tools.json")
    head["cases"]["path"] = str(ROOT / "cases" / "delivery.jsonl")
    source = write_jsonl(tmp_path / "old.jsonl", [head, *records])
    out = tmp_path / "new.jsonl"
    changes = rejudge_file(source, out, warn=io.StringIO())
    got = [(c.key, c.new_verdict, c.new_codes) for c in changes]
    assert got == [
        ("sim/sim-careful no_tools direct_lookup#1", "pass", []),
        ("sim/sim-careful auto direct_lookup#1", "fail", ["wrong_tool"]),
        ("sim/sim-careful auto refuse_forgery#1", "pass", []),
        ("sim/sim-careful auto irrelevant_joke#1", "pass", []),
        ("sim/sim-careful auto direct_lookup#1", "transport_error", ["malformed_response"]),
    ]
    new = attempts(out)
    assert new[0]["judgement"]["metrics"]["expects_call"] is False
    assert new[1]["decision"]["kind"] == "tool_call"
    assert new[1]["judgement"]["metrics"]["calls_unknown_tool"] == 1
    assert new[3]["decision"]["notes"] == [
        "output item 'image_generation_call' not read (kept in the raw body)"
    ]
    assert new[4]["decision"] is None and "queued" in new[4]["transport_error"]["message"]


def test_the_new_history_comes_with_its_own_sidecar_and_no_temp_file(
    history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolstand.history import sidecar as history_sidecar
    from toolstand.history.index import HistoryIndex

    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1)  # index even a small history
    out = tmp_path / "new.jsonl"
    rejudge_file(history, out, warn=io.StringIO())
    assert sorted(p.name for p in tmp_path.iterdir()) == [".index", "new.jsonl"]
    assert sorted(p.name for p in (tmp_path / ".index").iterdir()) == [
        ".gitignore",
        "new.jsonl.idx",
        "new.jsonl.lock",
    ]
    ix = HistoryIndex(out)
    assert (
        history_sidecar.load(ix) and ix.rows == len(attempts(out)) and ix.end == out.stat().st_size
    )
