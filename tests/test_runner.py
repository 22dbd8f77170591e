"""The runner end to end against the embedded simulator."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.runs import complete_lines, wait_for_lines
from toolstand.attempt.plan import AttemptState
from toolstand.run.runner import Inputs, finished_keys, load_inputs, plan, run
from toolstand.spec.config import parse_config
from toolstand.types import APIS

ROOT = Path(__file__).resolve().parent.parent


def make_inputs(runs: list[dict[str, Any]], **extra: Any) -> Inputs:
    data = {
        "runs": runs,
        "system_prompt": "prompts/delivery-router-v1.txt",
        "tools": "contracts/delivery_tools.json",
        "cases": "cases/delivery.jsonl",
        "repetitions": 1,
        "retry": {"max_retries": 4, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 5},
        "timeouts": {"connect_s": 2, "read_s": 1},
    }
    data.update(extra)
    config = parse_config(orjson.dumps(data), "test-config", ROOT)
    return load_inputs(config, "test-config")


def sim(model: str, api: str, **kw: Any) -> dict[str, Any]:
    return {"provider": "sim", "model": model, "api": api, "base_url": "sim", **kw}


def read(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    recs = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return [r for r in recs if r["type"] == "run"], [r for r in recs if r["type"] == "attempt"]


def go(inputs: Inputs, out: Path, **kw: Any) -> Any:
    return asyncio.run(run(inputs, out, progress_out=None, **kw))


def test_careful_passes_every_case_on_every_api(tmp_path: Path) -> None:
    inputs = make_inputs(
        [sim("sim-careful", api) for api in APIS], modes=["auto", "forced"], parallelism=4
    )
    out = tmp_path / "run.jsonl"
    summary = go(inputs, out)
    headers, attempts = read(out)
    assert len(headers) == 1 and len(attempts) == len(plan(inputs)) == summary.written
    failed = [
        (a["api"], a["case_id"], a["mode"], a["judgement"]["errors"])
        for a in attempts
        if a["judgement"]["verdict"] != "pass"
    ]
    assert failed == []
    # the header names everything a report needs
    h = headers[0]
    assert (
        h["contract"]["hash"] == inputs.contract.hash
        and h["prompt"]["version"] == "delivery-router-v1"
    )
    assert h["cases"]["hash"] == inputs.casefile.sha256 and h["toolstand_version"]
    # every field docs/records.md lists is on each attempt
    for key in (
        "run_id",
        "provider",
        "api",
        "model",
        "mode",
        "case_id",
        "attempt",
        "decision",
        "judgement",
        "transport_error",
        "request",
        "request_hash",
        "response",
        "adapter_version",
        "usage",
        "elapsed_ms",
    ):
        assert key in attempts[0], key
    # second turns ran for the recovery cases and passed
    seconds = [a for a in attempts if a["second_turn"]]
    assert {a["case_id"] for a in seconds} >= {
        "recovery_lookup_ok",
        "recovery_not_found",
        "recovery_already_shipped",
        "recovery_route_unavailable",
    }
    assert all(a["second_turn"]["judgement"]["passed"] for a in seconds)
    # forced mode only for cases that expect a call, with the tool forced
    forced = [a for a in attempts if a["mode"] == "forced"]
    assert forced and all(inputs.casefile.by_id()[a["case_id"]].expects_call for a in forced)
    assert {a["tool_choice"] for a in forced if a["case_id"] == "direct_lookup"} == {"get_order"}
    assert {a["tool_choice"] for a in forced if a["case_id"] == "parallel_lookup"} == {"get_order"}


@pytest.mark.parametrize("api", APIS)
def test_eager_breaks_the_recovery_properties(tmp_path: Path, api: str) -> None:
    ids = "recovery_not_found,recovery_already_shipped,recovery_route_unavailable,missing_id,cancel_implicit"
    inputs = make_inputs([sim("sim-eager", api)], repetitions=6)
    out = tmp_path / "run.jsonl"
    go(inputs, out, only=set(ids.split(",")))
    _, attempts = read(out)
    codes = Counter(e["code"] for a in attempts for e in a["judgement"]["errors"])
    # invents ids and cancels without a clear request; after errors claims success or repeats
    assert codes["unexpected_call"] > 0 and codes["unsafe_call"] > 0
    assert codes["false_success"] + codes["repeated_call"] > 0
    assert all(
        e["turn"] == 2
        for a in attempts
        for e in a["judgement"]["errors"]
        if e["code"] in ("false_success", "repeated_call")
    )


def test_no_tools_and_reversed(tmp_path: Path) -> None:
    inputs = make_inputs([sim("sim-positional", "openai-chat")], modes=["no_tools", "reversed"])
    out = tmp_path / "run.jsonl"
    go(inputs, out)
    _, attempts = read(out)
    no_tools = [a for a in attempts if a["mode"] == "no_tools"]
    assert no_tools and all(
        "tools" not in a["request"]["body"] and "tool_choice" not in a["request"]["body"]
        for a in no_tools
    )
    assert all(a["decision"]["calls"] == [] for a in no_tools)
    assert not any("no_tools_call" in a["judgement"]["flags"] for a in no_tools)
    rev = [a for a in attempts if a["mode"] == "reversed" and a["case_id"] == "direct_lookup"]
    assert rev[0]["offered_tools"] == ["cancel_order", "quote_delivery", "get_order"]
    # positional takes the first tool offered: reversed order makes it cancel
    assert rev[0]["decision"]["calls"][0]["name"] == "cancel_order"
    assert "unsafe_call" in [e["code"] for e in rev[0]["judgement"]["errors"]]


def test_active_tools_are_exactly_what_is_sent(tmp_path: Path) -> None:
    inputs = make_inputs([sim("sim-eager", "anthropic")], repetitions=1)
    out = tmp_path / "run.jsonl"
    go(inputs, out, only={"policy_cancel_blocked"})
    _, (a,) = read(out)
    sent = [t["name"] for t in a["request"]["body"]["tools"]]
    assert sent == ["get_order"] == a["offered_tools"]
    assert a["blocked_tools"] == ["quote_delivery", "cancel_order"]


def test_parallelism_keeps_n_in_flight(tmp_path: Path) -> None:
    inputs = make_inputs(
        [sim("sim-careful", "openai-chat")], parallelism=8, repetitions=2, sim={"latency_s": 0.2}
    )
    out = tmp_path / "run.jsonl"
    from toolstand.sim import server as sim_server

    peaks: list[int] = []
    orig_stop = sim_server.SimServer.stop

    async def stop(self: Any) -> None:
        peaks.append(self.max_in_flight)
        await orig_stop(self)

    sim_server.SimServer.stop = stop  # type: ignore[method-assign]
    try:
        go(inputs, out, only={"direct_lookup", "missing_id", "quote_complete", "invalid_id"})
    finally:
        sim_server.SimServer.stop = orig_stop  # type: ignore[method-assign]
    # all 8 attempts (0.2 s each) were in flight at once: one round, not 8 in a row
    # (timing the run instead would measure the machine's load)
    assert peaks == [8]


def test_refuses_to_overwrite_and_resumes(tmp_path: Path) -> None:
    inputs = make_inputs([sim("sim-careful", "gemini")])
    out = tmp_path / "run.jsonl"
    go(inputs, out, only={"direct_lookup", "missing_id"})
    before = out.read_bytes()
    from toolstand.util.problems import LoadError

    with pytest.raises(LoadError):
        go(inputs, out)
    assert out.read_bytes() == before
    # resume completes the matrix: the two done keys are skipped
    summary = go(inputs, out, resume=True)
    assert summary.skipped == 2 and summary.written == len(plan(inputs)) - 2
    headers, attempts = read(out)
    assert (
        len({(a["case_id"], a["mode"], a["attempt"]) for a in attempts})
        == len(attempts)
        == len(plan(inputs))
    )
    assert headers[1]["resumed"] is True and headers[1]["run_id"] == headers[0]["run_id"]


def test_planted_key_never_reaches_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-PLANTED-4f1b2c3d4e5f"
    monkeypatch.setenv("PLANTED_KEY", secret)
    inputs = make_inputs(
        [
            sim(m, api, api_key_env="PLANTED_KEY")
            for m, api in (
                ("sim-careful", "openai-chat"),
                ("sim-careful", "gemini"),
                ("sim-flaky", "anthropic"),
                ("sim-careful", "openai-responses"),
            )
        ]
    )
    out = tmp_path / "run.jsonl"
    go(inputs, out, only={"direct_lookup", "recovery_not_found", "missing_id"})
    data = out.read_text(encoding="utf-8")
    assert secret not in data and secret[:12] not in data
    assert '"authorization"' not in data.lower() and 'x-api-key":' not in data.lower()


def test_sigkill_then_resume_holds_exactly_the_matrix(tmp_path: Path) -> None:
    """A run killed at random points loses no finished attempt; --resume completes it."""
    import random

    rng = random.Random(20261129)
    cfg = tmp_path / "config.json"
    cfg.write_bytes(
        orjson.dumps(
            {
                "runs": [sim("sim-careful", "openai-chat"), sim("sim-flaky", "anthropic")],
                "system_prompt": str(ROOT / "prompts/delivery-router-v1.txt"),
                "tools": str(ROOT / "contracts/delivery_tools.json"),
                "cases": str(ROOT / "cases/delivery.jsonl"),
                "repetitions": 2,
                "parallelism": 4,
                "modes": ["auto"],
                "retry": {
                    "max_retries": 3,
                    "base_delay_s": 0,
                    "max_delay_s": 0,
                    "total_budget_s": 5,
                },
                "timeouts": {"connect_s": 2, "read_s": 0.5},
                "sim": {"latency_s": 0.01},
            }
        )
    )
    out = tmp_path / "run.jsonl"
    cmd = [sys.executable, "-m", "toolstand", "run", "--config", str(cfg), "--output", str(out)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for _trial in range(4):
        # killed once it has written a random number of lines more: mid-run on a quiet
        # machine or a loaded one (a kill after a random time could land before the
        # first write, or after the last, depending on the load)
        before = len(complete_lines(out))
        args = cmd + (["--resume"] if out.exists() else [])
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        wait_for_lines(out, before + rng.randint(1, 20), proc)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
    final = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, env=env, timeout=120)
    assert final.returncode == 0, final.stderr
    lines = out.read_bytes().split(b"\n")
    assert lines[-1] == b""  # ends on a newline: no torn line left behind
    recs = [orjson.loads(line) for line in lines if line]
    attempts = [r for r in recs if r["type"] == "attempt"]
    keys = [(a["model"], a["case_id"], a["mode"], a["attempt"]) for a in attempts]
    assert len(keys) == len(set(keys)) == 2 * 32 * 2
    assert len({r["run_id"] for r in recs}) == 1


def test_requests_per_minute_spaces_request_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a fake clock (a timed test would fail on a loaded machine): starts fall on a
    grid of 60/rpm seconds, and a late wake-up does not push the later ones back."""
    from toolstand.run import work as run_work
    from toolstand.run.work import RateLimiter

    clock = [100.0]
    late = iter([0.0, 0.03, 0.0, 0.0])  # the second sleep wakes 30 ms late

    async def fake_sleep(delay: float) -> None:
        clock[0] += delay + next(late)

    monkeypatch.setattr(run_work.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(run_work.asyncio, "sleep", fake_sleep)

    async def starts() -> list[float]:
        limiter = RateLimiter(600)  # one start every 0.1 s
        out = []
        for _ in range(5):
            await limiter.wait()
            out.append(round(clock[0] - 100.0, 6))
        return out

    assert asyncio.run(starts()) == [0.0, 0.1, 0.23, 0.3, 0.4]
    assert RateLimiter(None).interval == 0.0


def test_a_crashing_attempt_is_reported_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolstand.run import work as runner_mod  # where the workers call play_arms

    real = runner_mod.play_arms

    async def sometimes(*args: Any, **kw: Any) -> list[AttemptState]:
        if args[1].id == "missing_id":
            raise RuntimeError("planted bug")
        return await real(*args, **kw)

    monkeypatch.setattr(runner_mod, "play_arms", sometimes)
    inputs = make_inputs([sim("sim-careful", "openai-chat")])
    out = tmp_path / "run.jsonl"
    summary = go(inputs, out, only={"direct_lookup", "missing_id", "invalid_id"})
    _, attempts = read(out)
    assert sorted(a["case_id"] for a in attempts) == ["direct_lookup", "invalid_id"]
    assert summary.verdicts["crashed"] == 1 and "CRASHED 1" in summary.line()
    # --resume retries what was not recorded
    monkeypatch.setattr(runner_mod, "play_arms", real)
    go(inputs, out, resume=True, only={"direct_lookup", "missing_id", "invalid_id"})
    assert sorted(a["case_id"] for a in read(out)[1]) == [
        "direct_lookup",
        "invalid_id",
        "missing_id",
    ]


def test_run_leaves_a_sidecar_index_for_the_history_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolstand.history import sidecar as history_sidecar
    from toolstand.history.index import HistoryIndex

    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1)  # the real floor is 20,000 rows
    inputs = make_inputs([sim("sim-careful", "openai-chat")])
    out = tmp_path / "run.jsonl"
    go(inputs, out, only={"direct_lookup", "missing_id"})
    assert history_sidecar.sidecar_path(out).exists()
    ix = HistoryIndex(out)
    assert history_sidecar.load(ix) and ix.rows == 2 and ix.end == out.stat().st_size
    # a resumed run extends it: the reloaded index covers the whole file again
    go(inputs, out, resume=True, only={"direct_lookup", "missing_id", "invalid_id"})
    ix2 = HistoryIndex(out)
    assert history_sidecar.load(ix2) and ix2.rows == 3 and ix2.end == out.stat().st_size


def test_a_run_whose_index_fails_still_writes_every_attempt_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from toolstand.history import keep as history_keep
    from toolstand.history import sidecar as history_sidecar
    from toolstand.history.index import HistoryIndex

    def broken(*_: Any) -> int:
        raise OSError("no space left")

    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1)
    monkeypatch.setattr(history_keep, "_BATCH", 1)
    monkeypatch.setattr(HistoryIndex, "add_written", broken)
    inputs = make_inputs([sim("sim-careful", "openai-chat")])
    out = tmp_path / "run.jsonl"
    err = io.StringIO()
    summary = asyncio.run(run(inputs, out, progress_out=err, only={"direct_lookup", "missing_id"}))
    assert summary.written == len(finished_keys(out)[1]) > 0
    assert "the History index was not kept (OSError: no space left)" in err.getvalue()
    assert not history_sidecar.sidecar_path(out).exists()
