"""Shared helpers for the reliability suite: configs for sim runs, reading a history
back, and the invariants every attempt record and every report must hold."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import subprocess
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest

from toolstand.adapters.base import RETRYABLE_CODES
from toolstand.history.write import attempt_key
from toolstand.run.runner import Inputs, RunSummary, load_inputs, plan, run
from toolstand.sim import SimServer
from toolstand.spec.config import parse_config
from toolstand.spec.identity import config_identity

ROOT = Path(__file__).resolve().parents[2]
TRANSPORT_CODES = frozenset(
    {
        "rate_limited",
        "overloaded",
        "timeout",
        "connect_error",
        "server_error",
        "auth_error",
        "bad_request",
        "malformed_response",
        "stream_interrupted",  # design.md, Streaming
        "response_too_large",  # issue 31 H1: a decoded body over max_response_bytes
        "redirect",  # issue 31 L3: a 3xx, recorded with its Location, never followed
    }
)


Server = TypeVar("Server", bound=ThreadingHTTPServer)


@contextlib.contextmanager
def serving(server: Server) -> Iterator[Server]:
    """A stdlib HTTP server answering on a thread of its own for the length of the block
    (polling for the stop every 20 ms: the stdlib's 0.5 s would be paid at every stop)."""
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def sim(model: str, api: str, **kw: Any) -> dict[str, Any]:
    return {"provider": "sim", "model": model, "api": api, "base_url": "sim", **kw}


def config_data(runs: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "runs": runs,
        "system_prompt": str(ROOT / "prompts" / "delivery-router-v1.txt"),
        "tools": str(ROOT / "contracts" / "delivery_tools.json"),
        "cases": str(ROOT / "cases" / "delivery.jsonl"),
        "repetitions": 1,
        "retry": {"max_retries": 2, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 5},
        # far above any answer's time on a loaded machine: a test that wants a timeout
        # sets its own (the simulator holds a "timeout" fault's connection open)
        "timeouts": {"connect_s": 10, "read_s": 10},
    }
    data.update(extra)
    return data


def make_inputs(runs: list[dict[str, Any]], **extra: Any) -> Inputs:
    config = parse_config(orjson.dumps(config_data(runs, **extra)), "test-config", ROOT)
    return load_inputs(config, "test-config")


def go(inputs: Inputs, out: Path, **kw: Any) -> RunSummary:
    return asyncio.run(run(inputs, out, progress_out=None, **kw))


def read(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Headers and attempts; every line must be a whole JSON object."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), "the history ends in a torn line"
    recs = [orjson.loads(line) for line in data.split(b"\n")[:-1]]
    return [r for r in recs if r["type"] == "run"], [r for r in recs if r["type"] == "attempt"]


def complete_lines(path: Path) -> list[bytes]:
    """The lines that were whole on disk (a killed writer may leave a torn tail)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1].splitlines()


def wait_for_lines(path: Path, target: int, proc: subprocess.Popen[bytes]) -> None:
    """Until the file holds ``target`` whole lines or the run ends (there is no event
    to wait on in another process: poll the file)."""
    deadline = time.monotonic() + 20
    while proc.poll() is None and time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= target:
            return
        time.sleep(0.005)


def assert_exact_matrix(
    inputs: Inputs, attempts: list[dict[str, Any]], only: set[str] | None = None
) -> None:
    """Every planned attempt is on disk exactly once, and nothing else is."""
    config = inputs.config
    want = Counter(
        it.key(config.runs[it.run_index], config_identity(config, config.runs[it.run_index]))
        for it in plan(inputs, only)
    )
    have = Counter(attempt_key(a) for a in attempts)
    assert have == want
    assert max(have.values()) == 1


class Arrivals:
    """When each request reached the simulator: (monotonic time, path + body).

    Patches SimServer to watch the server side, so a retry's real spacing is measured
    where it lands, not taken from what the client says it waited.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.log: list[tuple[float, bytes]] = []
        self.servers: list[SimServer] = []
        original_reply = SimServer._reply
        original_start = SimServer.start

        def reply(server: SimServer, request: Any) -> Any:
            self.log.append((time.monotonic(), request.path.encode() + b"\0" + request.body))
            return original_reply(server, request)

        async def start(server: SimServer) -> str:
            self.servers.append(server)
            return await original_start(server)

        monkeypatch.setattr(SimServer, "_reply", reply)
        monkeypatch.setattr(SimServer, "start", start)

    def gaps(self) -> dict[bytes, list[float]]:
        """For each distinct request, the gaps between its consecutive arrivals."""
        times: dict[bytes, list[float]] = defaultdict(list)
        for t, key in self.log:
            times[key].append(t)
        return {k: [b - a for a, b in itertools.pairwise(ts)] for k, ts in times.items()}

    @property
    def total(self) -> int:
        return sum(s.requests_total for s in self.servers)


def check_tries(
    tries: list[dict[str, Any]], error: dict[str, Any] | None, max_retries: int
) -> None:
    """One exchange's tries agree with its outcome."""
    assert 1 <= len(tries) <= max_retries + 1
    *earlier, last = tries
    for t in earlier:  # each retried try failed with a retryable code and was waited on
        assert t["error_code"] in RETRYABLE_CODES, t
        assert t["waited_s"] is not None and t["waited_s"] >= 0, t
        if t["retry_after_s"] is not None:
            assert t["waited_s"] >= t["retry_after_s"], t
    assert last["waited_s"] is None
    if error is None:
        assert last["error_code"] is None and 200 <= last["status"] < 300
    else:
        assert error["code"] in TRANSPORT_CODES
        assert last["error_code"] == error["code"]
        assert error["status"] == last["status"]
        assert isinstance(error["message"], str) and error["message"]


def check_record(rec: dict[str, Any], max_retries: int) -> None:
    """A record is either judged or a transport failure, never both, never neither."""
    error = rec["transport_error"]
    check_tries(rec["tries"], error, max_retries)
    assert rec["retries"] == len(rec["tries"]) - 1
    if error is None:
        assert rec["decision"] is not None and rec["judgement"] is not None
        assert rec["judgement"]["verdict"] in ("pass", "fail")
    else:
        assert rec["decision"] is None and rec["judgement"] is None
        assert rec["second_turn"] is None
    st = rec["second_turn"]
    if st is not None:
        check_tries(st["tries"], st["transport_error"], max_retries)
        assert (st["judgement"] is None) == (st["transport_error"] is not None)


def check_metric_denominators(attempts: list[dict[str, Any]]) -> dict[tuple[Any, ...], Any]:
    """toolstand.reporting.metrics agrees with counts made here from the record fields alone:
    scored = attempted - transport failures, and every denominator from the scored. A
    group is a provider × model × mode of one run (its run_identity: api, options, ...)."""
    from toolstand.reporting.metrics import compute

    report = compute(attempts)
    groups = {(*g.key, g.identity): g for g in report.groups}
    by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for a in attempts:
        by_key[(a["provider"], a["model"], a["mode"], a.get("run_identity"))].append(a)
    assert set(groups) == set(by_key)
    for key, recs in by_key.items():
        g = groups[key]
        failed = [a for a in recs if a["transport_error"]]
        scored = [a for a in recs if not a["transport_error"]]
        assert g.attempted == len(recs)
        assert g.scored == len(scored) == len(recs) - len(failed)
        assert dict(g.transport_errors) == dict(
            Counter(a["transport_error"]["code"] for a in failed)
        )
        metrics = {name: (r.numerator, r.denominator) for name, r in g.metrics().items()}
        m = [a["judgement"]["metrics"] for a in scored]
        seconds = [a["second_turn"] for a in scored if a["second_turn"] is not None]
        ran = [s for s in seconds if s["transport_error"] is None]
        assert metrics["decision_accuracy"] == (
            sum(bool(x["decision_correct"]) for x in m),
            len(scored),
        )
        assert metrics["unsafe_call_rate"][1] == len(scored)
        assert metrics["consistency"][1] == len(scored)
        assert metrics["tool_selection_accuracy"][1] == sum(bool(x["expects_call"]) for x in m)
        assert metrics["raw_schema_validity"] == (
            sum(x["calls_schema_valid"] for x in m),
            sum(x["calls_made"] for x in m),
        )
        assert metrics["exact_argument_accuracy"][1] == sum(x["exact_denominator"] for x in m)
        assert metrics["error_recovery_accuracy"] == (
            sum(bool(s["judgement"]["passed"]) for s in ran),
            len(ran),
        )
    return groups
