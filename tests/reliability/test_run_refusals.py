"""What `toolstand run` refuses before it writes a line: flags outside the config's limits,
the case errors `check` reports, a --resume onto a file that is not this run's history,
and runs with nothing in them. Each is one line per problem on stderr, exit 2, and no
file is created or touched."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.support.runs import ROOT, config_data, sim
from toolstand.cli import main
from toolstand.lint.check import run_check

TOOLS = ROOT / "contracts" / "delivery_tools.json"
CASES = ROOT / "cases" / "delivery.jsonl"
FIRST = CASES.read_bytes().splitlines()[0]  # direct_lookup: expects get_order


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    path = tmp_path / "config.json"
    path.write_bytes(orjson.dumps(config_data([sim("sim-careful", "openai-chat")])))
    return path


def run(cfg: Path, out: Path, *extra: str) -> int:
    return main(["run", "--config", str(cfg), "--output", str(out), *extra])


def stderr_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--parallelism", "-3", "greater than or equal to 1 (got -3)"),
        ("--parallelism", "0", "greater than or equal to 1 (got 0)"),
        ("--parallelism", "100000", "less than or equal to 1024 (got 100000)"),
        ("--repetitions", "-1", "greater than or equal to 1 (got -1)"),
        ("--repetitions", "0", "greater than or equal to 1 (got 0)"),
        ("--repetitions", "100000", "less than or equal to 1000 (got 100000)"),
    ],
)
def test_flags_obey_the_config_limits(
    cfg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, says: str
) -> None:
    out = tmp_path / "run.jsonl"
    assert run(cfg, out, flag, value) == 2
    assert stderr_lines(capsys) == [f"{flag}: $.{flag[2:]}: Input should be {says}"]
    assert not out.exists()


BAD_CASES = [
    # unknown expected tool
    b'{"id":"a","user":"x","expect":{"kind":"tool_call","tool":"get_ordr"}}',
    # expected arguments invalid for the schema
    b'{"id":"b","user":"x","expect":{"kind":"tool_call","tool":"get_order","arguments":{"order_id":7}}}',
    # unknown active_tools, must_not_call and followup tool
    b'{"id":"c","user":"x","active_tools":["nope"],"expect":{"kind":"text","must_not_call":["gone"]}}',
    b'{"id":"d","user":"x","expect":{"kind":"tool_call","tool":"get_order"},'
    b'"followup":{"tool_results":{"ghost":{"ok":true}},"must_not_call":["phantom"]}}',
]


def test_run_refuses_what_check_rejects_with_the_same_messages(
    cfg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "bad.jsonl"
    cases.write_bytes(b"\n".join([FIRST, *BAD_CASES]) + b"\n")
    want = [str(p) for p in run_check(TOOLS, cases).errors]
    assert len(want) >= 6  # every kind of mistake above is an error of check's
    out = tmp_path / "run.jsonl"
    assert run(cfg, out, "--cases", str(cases)) == 2
    assert stderr_lines(capsys) == want
    assert not out.exists()


def test_checks_warnings_stay_warnings(
    cfg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "warned.jsonl"
    warned = b'{"id":"w","user":"x","expect":{"kind":"tool_call","tool":"get_order","contains_any":["a"]}}'
    cases.write_bytes(FIRST + b"\n" + warned + b"\n")
    found = [p for p in run_check(TOOLS, cases).problems if p.file == str(cases)]
    assert [(p.line, p.severity) for p in found] == [(2, "warning")]
    out = tmp_path / "run.jsonl"
    assert run(cfg, out, "--cases", str(cases)) == 0
    assert out.read_bytes().count(b'"type":"attempt"') == 2


def test_the_shipped_cases_still_run(cfg: Path, tmp_path: Path) -> None:
    assert not run_check(TOOLS, CASES).errors
    assert run(cfg, tmp_path / "run.jsonl", "--only", "direct_lookup") == 0


@pytest.mark.parametrize(
    ("setup", "extra", "says"),
    [
        ("empty_cases", [], "the case file holds no case"),
        ("no_tools", [], "$.tools: the contract has no tools"),
        ("none", ["--only", ","], "--only: $: names no case id (got ',')"),
        ("none", ["--only", ""], "--only: $: names no case id (got '')"),
        ("none", ["--only", "missing_id", "--modes", "forced"], "nothing to run: the cases --only"),
    ],
)
def test_a_run_with_nothing_to_run_is_an_error(
    cfg: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    setup: str,
    extra: list[str],
    says: str,
) -> None:
    if setup == "empty_cases":
        (tmp_path / "empty.jsonl").write_bytes(b"")
        extra = ["--cases", str(tmp_path / "empty.jsonl")]
    elif setup == "no_tools":
        (tmp_path / "none.json").write_text('{"name": "n", "version": "1", "tools": []}')
        extra = ["--tools", str(tmp_path / "none.json")]
    out = tmp_path / "run.jsonl"
    assert run(cfg, out, *extra) == 2
    lines = stderr_lines(capsys)
    assert len(lines) == 1 and says in lines[0], lines
    assert not out.exists()


def test_resume_refuses_a_file_that_is_not_a_history(
    cfg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "cases.jsonl"
    before = FIRST + b"\n" + BAD_CASES[0][:20]  # a torn last line --resume would have cut
    target.write_bytes(before)
    assert run(cfg, target, "--resume") == 2
    assert stderr_lines(capsys) == [
        f"{target}:1: $: not a toolstand history (its first line is not a run header); "
        "--resume completes only a file that `toolstand run` wrote"
    ]
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.jsonl", "config.json"]


def test_resume_refuses_another_runs_inputs_unless_told(
    cfg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.jsonl"
    assert run(cfg, out, "--only", "direct_lookup") == 0
    capsys.readouterr()
    other = tmp_path / "other.jsonl"
    other.write_bytes(CASES.read_bytes() + b'{"id":"extra","user":"x","expect":{"kind":"text"}}\n')
    prompt = tmp_path / "other-prompt.txt"
    prompt.write_text("Another prompt.")
    other_cfg = tmp_path / "other-config.json"
    data = config_data([sim("sim-careful", "openai-chat")], system_prompt=str(prompt))
    other_cfg.write_bytes(orjson.dumps(data))
    before = out.read_bytes()

    assert run(cfg, out, "--resume", "--cases", str(other)) == 2
    (line,) = stderr_lines(capsys)
    assert "run with another cases file (hash " in line and "prompt" not in line
    assert "--resume-anyway" in line
    assert run(other_cfg, out, "--resume") == 2
    (line,) = stderr_lines(capsys)
    assert "another prompt (hash " in line and "cases file" not in line
    assert out.read_bytes() == before

    assert (
        run(cfg, out, "--resume", "--resume-anyway", "--cases", str(other), "--only", "extra") == 0
    )
    recs = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert len({r["run_id"] for r in recs}) == 1
    assert [r["case_id"] for r in recs if r["type"] == "attempt"] == ["direct_lookup", "extra"]


def test_resume_anyway_needs_resume(
    cfg: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.jsonl"
    assert run(cfg, out, "--resume-anyway") == 2
    assert stderr_lines(capsys) == ["--resume-anyway: $: it goes with --resume"]
    assert not out.exists()
