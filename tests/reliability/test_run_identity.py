"""Issue 31, H6: runs that differ only in options, base_url or api are never confused.

Each attempt records its run's identity (spec/identity.py): ``--resume`` keys on it, the
report keeps a group per run (labelled by what tells two alike groups apart), compare
pairs groups by it; a history written before the field finds each record's run through
its header."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.runs import ROOT, assert_exact_matrix, go, make_inputs, read, sim
from toolstand.reporting import compare, compute_files
from toolstand.reporting.formats import render_table, to_json
from toolstand.run.runner import finished_keys
from toolstand.sim import serve_in_thread, sim_base_url
from toolstand.spec.cases import load_case_set
from toolstand.spec.contract import load_contract
from toolstand.spec.identity import run_identity

ONLY = {"direct_lookup", "missing_id"}
KINDS = ("options", "api", "base_url")


@contextlib.contextmanager
def _runs(kind: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Two runs of one provider and model that differ only in ``kind``."""
    if kind == "options":
        yield [
            sim("sim-sloppy", "openai-chat"),
            sim("sim-sloppy", "openai-chat", options={"strict": True}),
        ]
        return
    if kind == "api":
        yield [sim("sim-careful", "openai-chat"), sim("sim-careful", "openai-responses")]
        return
    # two simulators on two ports: one provider, one model, two base URLs
    monkeypatch.setenv("ID_TEST_KEY", "sk-identity-test-0001")
    cases = load_case_set(ROOT / "cases" / "delivery.jsonl").cases
    contract = load_contract(ROOT / "contracts" / "delivery_tools.json")
    with (
        serve_in_thread(cases, contract, seed=7) as a,
        serve_in_thread(cases, contract, seed=7) as b,
    ):
        yield [
            {"provider": "p", "model": "sim-careful", "api": "openai-chat",
             "base_url": sim_base_url(root, "openai-chat"), "api_key_env": "ID_TEST_KEY"}
            for root in (a, b)
        ]  # fmt: skip


def _history(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, only: set[str] = ONLY
) -> Any:
    with _runs(kind, monkeypatch) as runs:
        inputs = make_inputs(runs, modes=["auto"], repetitions=2, parallelism=1)
        out = tmp_path / f"{kind}.jsonl"
        summary = go(inputs, out, only=only)
        assert (summary.written, summary.skipped) == (8, 0)
        return inputs, out, runs


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _write(path: Path, recs: list[dict[str, Any]]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))


def _older(path: Path) -> None:
    """Make ``path`` a history written before run identities: no record holds one."""
    recs = _lines(path)
    for r in recs:
        r.pop("run_identity", None)
    _write(path, recs)


@pytest.mark.parametrize("kind", KINDS)
def test_resume_records_every_attempt_of_both_runs(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _runs(kind, monkeypatch) as runs:
        inputs = make_inputs(runs, modes=["auto"], repetitions=2, parallelism=1)
        out = tmp_path / "h.jsonl"
        go(inputs, out, only=ONLY)
        recs = _lines(out)
        header = recs[0]
        # each record carries the identity a reader computes from its header's run
        want = [run_identity(r, header["settings"]) for r in header["runs"]]
        assert len(set(want)) == 2
        assert [a["run_identity"] for a in recs[1:]] == [want[0]] * 4 + [want[1]] * 4
        _write(out, recs[:5])  # interrupted after the first run's attempts (plan order)
        again = go(inputs, out, only=ONLY, resume=True)
        assert (again.skipped, again.written) == (4, 4)
        _, attempts = read(out)
        assert_exact_matrix(inputs, attempts, ONLY)


@pytest.mark.parametrize("kind", KINDS)
def test_report_keeps_the_runs_apart(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out, runs = _history(kind, tmp_path, monkeypatch)
    report = compute_files([out], index=False)
    assert [g.attempted for g in report.groups] == [4, 4]
    assert [g.slots for g in report.groups] == [64, 64]  # each run's own matrix (32 × 2)
    assert len({g.identity for g in report.groups}) == 2
    labels = [g.run_label for g in report.groups]
    if kind == "api":
        assert [g.apis for g in report.groups] == [["openai-chat"], ["openai-responses"]]
        assert labels == ["api openai-chat", "api openai-responses"]
    elif kind == "options":
        assert labels == ["options.strict not set", "options.strict true"]
    else:
        assert labels == [f"base_url {r['base_url']}" for r in runs]
    text = render_table(report)
    for label in labels:  # said once in the title (which has always said the api)
        assert text.count(f"· {label}") == 1
    # the sidecar's columns count them the same way
    assert to_json(compute_files([out], index=True)) == to_json(report)


def test_compare_pairs_groups_by_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, out, runs = _history("options", tmp_path, monkeypatch)
    both = to_json(compute_files([out], index=False))
    same = compare(both, both)
    assert same.failures == [] and same.exit_code == 0
    assert {c.run for c in same.checks} == {"options.strict not set", "options.strict true"}
    # a current run without the strict run: its baseline group is missing, not blended
    plain_out = tmp_path / "plain.jsonl"
    go(make_inputs(runs[:1], modes=["auto"], repetitions=2), plain_out, only=ONLY)
    plain = to_json(compute_files([plain_out], index=False))
    result = compare(both, plain)
    assert result.failures == [
        "sim/sim-sloppy/auto (options.strict true): in baseline, missing from current"
    ]
    # one run on each side, its options changed: compared, with a note saying so
    strict_out = tmp_path / "strict.jsonl"
    go(make_inputs(runs[1:], modes=["auto"], repetitions=2), strict_out, only=ONLY)
    changed = compare(plain, to_json(compute_files([strict_out], index=False)))
    assert changed.failures == [] and changed.checks
    assert any("its requests differ from baseline's" in n for n in changed.notes)


@pytest.mark.parametrize("index", [False, True])
def test_an_older_history_still_reports(
    index: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # runs its header tells apart by api: each record finds its own run
    _, out, _ = _history("api", tmp_path, monkeypatch)
    new = to_json(compute_files([out], index=False))
    _older(out)
    older = compute_files([out], index=index)
    assert to_json(older) == new
    # runs its header cannot tell apart (same provider, model and api): one group, as
    # it was reported before run identities
    _, out, _ = _history("options", tmp_path, monkeypatch)
    _older(out)
    report = compute_files([out], index=index)
    assert [(g.attempted, g.identity, g.run_label) for g in report.groups] == [(8, None, "")]
    assert not report.warnings


def test_resume_of_an_older_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs, out, _ = _history("api", tmp_path, monkeypatch)
    _older(out)
    recs = _lines(out)
    _write(out, recs[:5])
    again = go(inputs, out, only=ONLY, resume=True)
    assert (again.skipped, again.written) == (4, 4)  # the header settles each record's run
    # two runs the header cannot tell apart: an older record counts as done for both
    inputs, out, _ = _history("options", tmp_path, monkeypatch)
    _older(out)
    warned = tmp_path / "warn.txt"
    with warned.open("w") as fh:
        assert len(finished_keys(out, fh)[1]) == 8
    assert "counted as done for both" in warned.read_text()


def test_identity_is_what_changes_the_request() -> None:
    run = {"provider": "p", "model": "m", "api": "anthropic", "base_url": "https://x.test"}
    settings = {"temperature": 0, "max_output_tokens": 500, "repetitions": 3, "parallelism": 1}
    base = run_identity(run, settings)
    assert base is not None and len(base) == 16
    same = [
        {**run, "api_key_env": "OTHER", "prices": {"input_per_mtok": 1}, "simulated": False},
        {**run, "proxy": "http://proxy.test:3128", "requests_per_minute": 5, "stream": True},
        {**run, "options": {}},  # what a header without options says
    ]
    for other in same:
        assert run_identity(other, {**settings, "repetitions": 9, "parallelism": 8}) == base
    differ = [
        ({**run, "options": {"strict": True}}, settings),
        ({**run, "base_url": "https://y.test"}, settings),
        ({**run, "api": "openai-chat"}, settings),
        ({**run, "anthropic_version": "2026-10-21"}, settings),
        ({**run, "parallel_tool_calls": False}, settings),
        (run, {**settings, "temperature": 0.7}),
        (run, {**settings, "max_output_tokens": 100}),
    ]
    assert len({run_identity(r, s) for r, s in differ} | {base}) == len(differ) + 1


def test_the_tui_report_names_each_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolstand.tui.widgets.report_view import error_counts, group_name

    # sloppy writes "2,5" for a number: the one case fails under both runs
    only = {"direct_lookup", "boundary_decimal_comma"}
    _, out, _ = _history("options", tmp_path, monkeypatch, only)
    report = compute_files([out], index=False, collect_failures=True)
    names = [group_name(g) for g in report.groups]
    assert names == [
        "sim/sim-sloppy · options.strict not set (simulated)",
        "sim/sim-sloppy · options.strict true (simulated)",
    ]
    # each failure is counted under its own run's name
    assert {name for name, _, _, _ in error_counts(report)} == set(names)
    for g, name in zip(report.groups, names, strict=True):
        fails = [f for f in report.failures if f.identity == g.identity]
        want = sum(len(f.errors) + bool(f.second_turn_transport_error) for f in fails)
        got = sum(
            n for nm, _, code, n in error_counts(report) if nm == name and "transport." not in code
        )
        assert got == want


@pytest.mark.parametrize("index", [False, True])
def test_a_run_identity_that_is_not_text_is_skipped_with_its_line(
    index: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out, _ = _history("api", tmp_path, monkeypatch)
    recs = _lines(out)
    recs[2]["run_identity"] = ["not", "text"]
    _write(out, recs)
    report = compute_files([out], index=index)
    assert sum(g.attempted for g in report.groups) == 7
    assert [str(w) for w in report.warnings] == [
        f"{out}:3: attempt skipped: field run_identity is an array, not a string"
    ]
