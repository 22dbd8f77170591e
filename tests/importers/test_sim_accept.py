"""sim-careful on `accept` cases that use the contract's tools, and on two cases with
one user text: each case answered as itself (found by its id, which the runner sends
the simulator in a header), never from its twin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.importers import HERE, Cli

ROOT = HERE.parents[1]


def _run(cli: Cli, tmp_path: Path, cases: str) -> dict[str, str]:
    config = {
        "runs": [
            {"provider": "sim", "model": "sim-careful", "api": "openai-chat", "base_url": "sim"}
        ],
        "tools": str(ROOT / "contracts" / "delivery_tools.json"),
        "cases": str(HERE / "fixtures" / cases),
        "modes": ["auto"],
        "repetitions": 1,
        "parallelism": 1,
        "sim": {"seed": 7, "latency_s": 0, "retry_after_s": 0},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    out = tmp_path / "run.jsonl"
    ran = cli("run", "--config", str(path), "--output", str(out))
    assert ran.code in (0, 1), ran.err
    verdicts = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") == "attempt":
            verdicts[record["case_id"]] = record["judgement"]["verdict"]
    return verdicts


@pytest.mark.parametrize("cases", ["accept1.jsonl", "accept_two.jsonl", "twins.jsonl"])
def test_careful_passes_accept_cases_on_the_contracts_tools(
    cli: Cli, tmp_path: Path, cases: str
) -> None:
    verdicts = _run(cli, tmp_path, cases)
    assert verdicts and set(verdicts.values()) == {"pass"}, verdicts
