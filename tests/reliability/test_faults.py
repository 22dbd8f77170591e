"""Faults through the real runner: the flaky simulator on all four APIs, and each fault
forced with ``sim.fault_rates``. Nothing is lost (every planned attempt is on disk
once, every request the server saw is a try in some record), retries honour the server,
and the metrics leave transport failures out of every quality denominator.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.support.clock import virtual_time
from tests.support.runs import (
    Arrivals,
    assert_exact_matrix,
    check_metric_denominators,
    check_record,
    go,
    make_inputs,
    read,
    sim,
)
from toolstand.sim.personas import FLAKY_FAULT_RATES
from toolstand.types import APIS

ONLY = {"direct_lookup", "missing_id", "quote_complete", "recovery_not_found"}


def test_flaky_on_all_four_apis_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arrivals = Arrivals(monkeypatch)
    # one retry: most faults are retried away, yet some attempts and second turns fail
    retry = {"max_retries": 1, "base_delay_s": 0.005, "max_delay_s": 0.02, "total_budget_s": 5}
    inputs = make_inputs(
        [sim("sim-flaky", api) for api in APIS],
        # one repetition: each request is then distinct, so the simulator's seeded draws
        # fall on the same tries whatever the timing, and this run is the same every time
        modes=["auto", "forced", "reversed"],
        repetitions=1,
        parallelism=8,
        retry=retry,
        timeouts={"connect_s": 2, "read_s": 0.3},
        sim={"seed": 11, "retry_after_s": 0.02},
    )
    out = tmp_path / "run.jsonl"
    summary = go(inputs, out)
    headers, attempts = read(out)
    assert len(headers) == 1
    assert_exact_matrix(inputs, attempts)
    assert summary.written == len(attempts) and summary.skipped == 0
    for rec in attempts:
        check_record(rec, max_retries=1)
    # every request the simulator answered (or held, tore, reset) is a try on disk
    tries = [t for a in attempts for t in a["tries"]]
    tries += [t for a in attempts if a["second_turn"] for t in a["second_turn"]["tries"]]
    assert arrivals.total == len(tries) == len(arrivals.log)
    # every fault kind happened and was classified with its transport code
    seen = Counter((t["status"], t["error_code"]) for t in tries)
    for expected in [
        (429, "rate_limited"),
        (500, "server_error"),
        (502, "server_error"),  # the HTML page
        (503, "overloaded"),
        (529, "overloaded"),  # Anthropic's
        (None, "timeout"),
        (None, "connect_error"),  # torn bodies and resets
    ]:
        assert seen[expected] > 0, (expected, seen)
    assert set(seen) <= {
        (429, "rate_limited"),
        (500, "server_error"),
        (502, "server_error"),
        (503, "overloaded"),
        (529, "overloaded"),
        (None, "timeout"),
        (None, "connect_error"),
        (200, None),
    }
    faults = sum(n for (status, code), n in seen.items() if code is not None)
    rate = faults / len(tries)
    assert abs(rate - sum(FLAKY_FAULT_RATES.values())) < 0.08
    # retries did their job: most attempts got an answer ...
    failed = [a for a in attempts if a["transport_error"] is not None]
    judged = [a for a in attempts if a["transport_error"] is None]
    assert 0 < len(failed) < 0.2 * len(attempts)
    assert any(len(a["tries"]) > 1 for a in judged)
    second = [a["second_turn"] for a in judged if a["second_turn"] is not None]
    assert any(s["transport_error"] is not None for s in second)
    assert any(s["transport_error"] is None for s in second)
    # ... and sim-flaky answers as the case expects whenever it answers, so a fault never
    # turns into a wrong verdict (a second turn lost to a fault leaves the first's)
    assert {a["judgement"]["verdict"] for a in judged} == {"pass"}
    groups = check_metric_denominators(attempts)
    assert sum(g.scored for g in groups.values()) == len(judged) < len(attempts)
    for g in groups.values():
        # everything scored was decided right: the faults cost attempts, not accuracy
        decided = g.metrics()["decision_accuracy"]
        assert decided.numerator == decided.denominator == g.scored
        recovered = g.metrics()["error_recovery_accuracy"]
        assert recovered.numerator == recovered.denominator


def test_a_429_storm_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request is a 429 asking for 0.2 s: no retry reaches the server sooner, on
    any API (Retry-After, retry-after-ms, Gemini's retryDelay), and each attempt ends as
    rate_limited after exactly max_retries + 1 tries."""
    arrivals = Arrivals(monkeypatch)
    retry = {"max_retries": 2, "base_delay_s": 0.01, "max_delay_s": 0.05, "total_budget_s": 10}
    inputs = make_inputs(
        [sim("sim-flaky", api) for api in APIS],
        parallelism=8,
        retry=retry,
        sim={"retry_after_s": 0.2, "fault_rates": {"rate_limited": 1.0}},
    )
    out = tmp_path / "run.jsonl"
    go(inputs, out, only=ONLY)
    _, attempts = read(out)
    assert_exact_matrix(inputs, attempts, ONLY)
    for rec in attempts:
        check_record(rec, max_retries=2)
        assert rec["transport_error"]["code"] == "rate_limited"
        assert [t["status"] for t in rec["tries"]] == [429, 429, 429]
        assert [t["retry_after_s"] for t in rec["tries"]] == [0.2, 0.2, 0.2]
        # the backoff alone (0.01 s, 0.02 s) would be sooner: the server's hint won
        assert [t["waited_s"] for t in rec["tries"]][:2] == [0.2, 0.2]
    gaps = arrivals.gaps()
    assert len(gaps) == len(attempts)  # each attempt's request is distinct
    assert all(len(g) == 2 for g in gaps.values())
    # measured where the retries land: never sooner than Retry-After allows
    assert min(x for g in gaps.values() for x in g) >= 0.2 - 0.002
    groups = check_metric_denominators(attempts)
    for g in groups.values():
        assert g.scored == 0 and dict(g.transport_errors) == {"rate_limited": g.attempted}
        assert all(r.denominator == 0 and r.value is None for r in g.metrics().values())


@pytest.mark.parametrize("fault", ["server_error", "overloaded"])
def test_5xx_and_529_are_retried_up_to_max_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    arrivals = Arrivals(monkeypatch)
    retry = {"max_retries": 3, "base_delay_s": 0.01, "max_delay_s": 0.04, "total_budget_s": 10}
    inputs = make_inputs(
        [sim("sim-flaky", api) for api in APIS],
        parallelism=8,
        retry=retry,
        sim={"fault_rates": {fault: 1.0}},
    )
    out = tmp_path / "run.jsonl"
    go(inputs, out, only=ONLY)
    _, attempts = read(out)
    assert_exact_matrix(inputs, attempts, ONLY)
    for rec in attempts:
        check_record(rec, max_retries=3)
        status = 500 if fault == "server_error" else 529 if rec["api"] == "anthropic" else 503
        assert [t["status"] for t in rec["tries"]] == [status] * 4
        assert rec["transport_error"] == {
            "code": fault,
            "message": rec["tries"][-1]["message"],
            "status": status,
        }
        # bounded exponential backoff: 0.01, 0.02, 0.04 less up to 25% jitter
        for t, full in zip(rec["tries"], (0.01, 0.02, 0.04), strict=False):
            assert 0.75 * full <= t["waited_s"] <= full
    assert arrivals.total == 4 * len(attempts)


@pytest.mark.parametrize("fault", ["server_error", "overloaded"])
def test_retries_stop_inside_the_total_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """A budget too small for every retry: the runner stops early, before a wait that
    would cross it, and reports the last failure. On virtual time (the waits are what
    the budget is spent on; a loaded machine's slow answer no longer is), so the count
    is exact: waits of 0.5 and 1 fit 2.5 s, the third (1.5 at least) would not. The
    budget also bounds each try's real time (issue 31, H2): what is left of it after
    the virtual waits, 1 s, is far more than a loaded machine's answer takes."""
    vt = virtual_time(monkeypatch)
    budget = 2.5
    retry = {"max_retries": 6, "base_delay_s": 0.5, "max_delay_s": 10, "total_budget_s": budget}
    inputs = make_inputs(
        [sim("sim-flaky", api) for api in APIS],
        parallelism=8,
        retry=retry,
        sim={"fault_rates": {fault: 1.0}},
    )
    out = tmp_path / "run.jsonl"
    go(inputs, out, only=ONLY)
    _, attempts = read(out)
    assert_exact_matrix(inputs, attempts, ONLY)
    for rec in attempts:
        check_record(rec, max_retries=6)
        tries = rec["tries"]
        assert len(tries) == 3  # retried, but not all six times
        spent = sum(t["elapsed_ms"] / 1000 + (t["waited_s"] or 0) for t in tries[:-1])
        assert spent <= budget
        assert rec["transport_error"]["code"] == fault
    assert len(vt.waits) == 2 * len(attempts)


FORCED = [
    # fault, sim settings, timeouts, expected (code, status)
    ("timeout", {}, 0.3, ("timeout", None)),
    # read timeouts far above an answer's time on a loaded machine
    ("torn_body", {}, 10.0, ("connect_error", None)),
    ("html_502", {}, 10.0, ("server_error", 502)),
    ("reset", {}, 10.0, ("connect_error", None)),
    ("rate_limited", {}, 10.0, ("rate_limited", 429)),
    ("server_error", {}, 10.0, ("server_error", 500)),
    # a server that hangs up before answering, sooner than the client would give up
    ("timeout", {"timeout_hold_s": 0.05}, 10.0, ("connect_error", None)),
]


@pytest.mark.parametrize("max_retries", [0, 1])
@pytest.mark.parametrize(("fault", "extra", "read_s", "expected"), FORCED)
def test_each_fault_is_recorded_with_its_transport_code(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    extra: dict[str, float],
    read_s: float,
    expected: tuple[str, int | None],
    max_retries: int,
) -> None:
    """Retries exhausted (none at all with max_retries 0): the last failure is the
    record's, with the right transport code and status, on every API."""
    arrivals = Arrivals(monkeypatch)
    retry = {"max_retries": max_retries, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 5}
    inputs = make_inputs(
        [sim("sim-flaky", api) for api in APIS],
        parallelism=8,
        retry=retry,
        timeouts={"connect_s": 2, "read_s": read_s},
        sim={"fault_rates": {fault: 1.0}, **extra},
    )
    out = tmp_path / "run.jsonl"
    summary = go(inputs, out, only=ONLY)
    _, attempts = read(out)
    assert_exact_matrix(inputs, attempts, ONLY)
    assert summary.verdicts == Counter({"transport_error": len(attempts)})
    code, status = expected
    for rec in attempts:
        check_record(rec, max_retries=max_retries)
        assert (rec["transport_error"]["code"], rec["transport_error"]["status"]) == (code, status)
        assert [(t["error_code"], t["status"]) for t in rec["tries"]] == [expected] * (
            max_retries + 1
        )
        assert rec["response"]["status"] == status
        if fault == "html_502":  # the page is kept as text for the record
            assert rec["response"]["body_is_json"] is False
            assert "502 Bad Gateway" in rec["response"]["body"]
    assert arrivals.total == len(attempts) * (max_retries + 1)
    groups = check_metric_denominators(attempts)
    assert sum(g.attempted for g in groups.values()) == len(attempts)
    assert all(g.scored == 0 for g in groups.values())


def test_the_overloaded_status_follows_the_api(tmp_path: Path) -> None:
    """529 is Anthropic's overload, 503 everyone else's: both are ``overloaded``."""
    retry = {"max_retries": 0, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 5}
    inputs = make_inputs(
        [sim("sim-flaky", api) for api in APIS],
        retry=retry,
        parallelism=4,
        sim={"fault_rates": {"overloaded": 1.0}},
    )
    out = tmp_path / "run.jsonl"
    go(inputs, out, only={"direct_lookup"})
    _, attempts = read(out)
    assert {a["api"]: a["transport_error"]["status"] for a in attempts} == {
        "openai-chat": 503,
        "openai-responses": 503,
        "anthropic": 529,
        "gemini": 503,
    }
    assert {a["transport_error"]["code"] for a in attempts} == {"overloaded"}


def test_the_header_says_which_faults_were_forced(tmp_path: Path) -> None:
    sim_settings = {"seed": 5, "retry_after_s": 0.01, "fault_rates": {"reset": 1.0}}
    retry = {"max_retries": 0, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 5}
    inputs = make_inputs([sim("sim-flaky", "gemini")], retry=retry, sim=sim_settings)
    out = tmp_path / "run.jsonl"
    go(inputs, out, only={"direct_lookup"})
    (header,), (attempt,) = read(out)
    assert header["settings"]["sim"] == {
        "seed": 5,
        "latency_s": 0.0,
        "retry_after_s": 0.01,
        "timeout_hold_s": 900.0,
        "fault_rates": {"reset": 1.0},
        "stream_chunks": "token",
        "stream_faults": None,
    }
    assert header["runs"][0]["simulated"] is True
    assert attempt["transport_error"]["code"] == "connect_error"


def test_the_simulator_is_reached_directly_whatever_the_proxy_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A simulator-only run talks to its own loopback: a proxy from the environment could
    not reach it, and no TLS is involved, so no CA bundle is loaded either."""
    from toolstand.transport import tls_context

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # the discard port: nothing answers
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    tls_context.cache_clear()
    inputs = make_inputs([sim("sim-careful", api) for api in APIS], parallelism=4)
    out = tmp_path / "run.jsonl"
    summary = go(inputs, out, only=ONLY)
    assert summary.verdicts["pass"] == summary.written == 4 * len(ONLY)
    assert tls_context.cache_info().misses == 0
