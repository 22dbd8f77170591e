"""The history picker's words for a file's attempts (tui/model/run_files.py)."""

from __future__ import annotations

from pathlib import Path

import orjson

from toolstand.history import describe_run_file
from toolstand.tui.model.run_files import attempts, file_facts


def test_a_count_of_one_is_one_attempt_and_any_other_is_attempts() -> None:
    assert [attempts(n) for n in (0, 1, 2, 1650)] == [
        "0 attempts",
        "1 attempt",
        "2 attempts",
        "1,650 attempts",
    ]
    assert attempts(1, "+") == "1+ attempts"


def test_a_file_of_one_attempt_is_described_as_one_attempt(tmp_path: Path) -> None:
    line = {"type": "attempt", "provider": "sim", "model": "m", "attempt": 1}
    path = tmp_path / "one.jsonl"
    path.write_bytes(orjson.dumps(line) + b"\n")
    facts = file_facts(describe_run_file(path))
    assert facts.count == "1 attempt"
    assert facts.models == ("m",)
