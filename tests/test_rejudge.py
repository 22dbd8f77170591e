"""`toolstand rejudge`: stored raw responses re-parsed and re-judged with no request."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from toolstand.adapters import get_adapter
from toolstand.config import parse_config
from toolstand.decision import ModelDecision
from toolstand.rejudge import rejudge_file
from toolstand.runner import load_inputs, run

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = {
        "runs": [
            {"provider": "sim", "model": "sim-careful", "api": "openai-chat", "base_url": "sim"},
            {"provider": "sim", "model": "sim-sloppy", "api": "gemini", "base_url": "sim"},
        ],
        "system_prompt": "prompts/delivery-router-v1.txt",
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


def test_the_new_history_comes_with_its_own_sidecar_and_no_temp_file(
    history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolstand import history_sidecar
    from toolstand.history_index import HistoryIndex

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
