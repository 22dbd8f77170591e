"""Issue 13, item 14: `compare` must not pass a current run that lost a model to 429s or
lost baseline groups altogether; each is a gate failure with its reason."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, header, transport, write_jsonl
from toolstand.cli import main
from toolstand.reporting.commands import cmd_compare
from toolstand.reporting.compare import compare, load_report

MODELS = ("m-good", "m-limited", "m-gone", "m-also-gone")


def _run(models: tuple[str, ...], limited: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """10 cases × 2 repetitions per model, all passing; ``limited`` maps a model to how
    many of its 20 attempts end in a 429: the first repetition of each case first, so
    that up to 10 lost attempts leave every case one scored attempt."""
    recs: list[dict[str, Any]] = [header()]
    for model in models:
        lost = (limited or {}).get(model, 0)
        for i in range(20):
            case, rep = i // 2, 1 + i % 2
            te = transport("rate_limited", status=429) if (rep - 1) * 10 + case < lost else None
            recs.append(attempt(f"case{case}", rep, model=model, transport_error=te))
    return recs


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "base.jsonl", _run(MODELS))


def test_a_model_lost_to_429s_and_missing_groups_fail_the_gate(base: Path, tmp_path: Path) -> None:
    cur = write_jsonl(tmp_path / "cur.jsonl", _run(MODELS[:2], {"m-limited": 20}))
    out = io.StringIO()
    assert cmd_compare(str(base), str(cur), 0.05, False, out=out) == 1
    lines = out.getvalue().splitlines()
    assert "FAIL sim/m-gone/auto: in baseline, missing from current" in lines
    assert "FAIL sim/m-also-gone/auto: in baseline, missing from current" in lines
    text = " ".join(line.strip() for line in lines)
    assert (
        "FAIL sim/m-limited/auto: transport errors in 20 of 20 attempts (100.0%; rate_limited 20),"
        " above the 20% allowed"
    ) in text
    # and each case of it, which no attempt scored, is unaccounted for
    assert (
        "FAIL sim/m-limited/auto: 10 case(s) no scored attempt in current (all lost to"
        " transport errors): case0 (0 of 2), case1 (0 of 2)"
    ) in text
    assert lines[-1] == "gate FAILED: 4 failure(s) above; no significant drop in 9 checks"
    out = io.StringIO()
    assert cmd_compare(str(base), str(cur), 0.05, True, out=out) == 1
    data = orjson.loads(out.getvalue())
    assert data["passed"] is False and data["regression"] is False
    assert len(data["failures"]) == 4


def test_the_transport_limit_is_a_share_of_attempts(base: Path, tmp_path: Path) -> None:
    b = load_report(base)
    at_limit = load_report(write_jsonl(tmp_path / "a.jsonl", _run(MODELS, {"m-good": 4})))
    over = load_report(write_jsonl(tmp_path / "o.jsonl", _run(MODELS, {"m-good": 5})))
    assert compare(b, at_limit).failures == []  # 4 of 20 is 20%: allowed
    assert [f.split(":")[0] for f in compare(b, over).failures] == ["sim/m-good/auto"]
    assert compare(b, over, max_transport_errors=0.25).exit_code == 0


def test_the_cli_takes_the_limit(
    base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cur = write_jsonl(tmp_path / "c.jsonl", _run(MODELS, {"m-good": 5}))
    assert main(["compare", str(base), str(cur)]) == 1
    assert "gate FAILED: 1 failure(s) above" in capsys.readouterr().out
    assert main(["compare", str(base), str(cur), "--max-transport-errors", "0.3"]) == 0
    for odd in ("-0.1", "1.5", "nan"):
        assert main(["compare", str(base), str(cur), "--max-transport-errors", odd]) == 2
        assert (
            "--max-transport-errors is a share of attempts from 0 to 1" in capsys.readouterr().err
        )


def test_a_current_run_that_is_all_429s_is_never_a_pass(base: Path, tmp_path: Path) -> None:
    cur = write_jsonl(tmp_path / "c.jsonl", _run(MODELS, dict.fromkeys(MODELS, 20)))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cmd_compare(str(base), str(cur), 0.05, False, out=io.StringIO()) == 2
    assert err.getvalue().count("FAIL sim/") == 8  # per model: its transport errors, its cases
    assert err.getvalue().count("10 case(s) no scored attempt in current") == 4
