"""An attempt that crashed is not on disk: ``run`` never exits 0 then (issue 31 H4), and
the summary counts it apart, never as written (L8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.runs import config_data, go, make_inputs, read, sim
from toolstand import cli
from toolstand.attempt.plan import AttemptState
from toolstand.run import work as work_mod  # where the workers call play_arms

ONLY = {"direct_lookup", "missing_id", "invalid_id"}


@pytest.fixture
def crash_missing_id(monkeypatch: pytest.MonkeyPatch) -> None:
    real = work_mod.play_arms

    async def sometimes(*args: Any, **kw: Any) -> list[AttemptState]:
        if args[1].id == "missing_id":
            raise RuntimeError("planted bug")
        return await real(*args, **kw)

    monkeypatch.setattr(work_mod, "play_arms", sometimes)


@pytest.mark.usefixtures("crash_missing_id")
def test_the_summary_counts_crashed_attempts_apart(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    summary = go(make_inputs([sim("sim-careful", "openai-chat")], modes=["auto"]), out, only=ONLY)
    _, attempts = read(out)
    assert (len(attempts), summary.written, summary.crashed) == (2, 2, 1)
    assert summary.line().startswith(f"run {summary.run_id}: 2 attempts written to ")
    assert summary.line().endswith(", CRASHED 1 (not recorded)")


@pytest.mark.usefixtures("crash_missing_id")
def test_run_exits_1_when_an_attempt_crashed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    config.write_bytes(
        orjson.dumps(config_data([sim("sim-careful", "openai-chat")], modes=["auto"]))
    )
    out = tmp_path / "run.jsonl"
    argv = ["run", "--config", str(config), "--output", str(out), "--only", ",".join(sorted(ONLY))]
    assert cli.main(argv) == 1
    assert "CRASHED 1 (not recorded)" in capsys.readouterr().err


def test_a_clean_run_still_exits_0(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_bytes(
        orjson.dumps(config_data([sim("sim-careful", "openai-chat")], modes=["auto"]))
    )
    out = tmp_path / "run.jsonl"
    argv = ["run", "--config", str(config), "--output", str(out), "--only", "direct_lookup"]
    assert cli.main(argv) == 0
    assert len(read(out)[1]) == 1
