"""The command line's own flags, run in-process against the simulator."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from toolstand.cli import main

ROOT = Path(__file__).resolve().parent.parent


def lines(path: Path) -> list[dict]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def test_run_flags_override_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.jsonl"
    args = ["run", "--config", str(ROOT / "config.example.json"), "--output", str(out)]
    args += ["--modes", "reversed,no_tools", "--repetitions", "1", "--parallelism", "2"]
    args += ["--only", "direct_lookup,missing_id"]
    assert main(args) == 0
    recs = lines(out)
    head, attempts = recs[0], recs[1:]
    assert head["settings"]["modes"] == ["reversed", "no_tools"]
    assert (head["settings"]["repetitions"], head["settings"]["parallelism"]) == (1, 2)
    # 5 runs x 2 cases x 2 modes x 1 repetition
    assert len(attempts) == 20
    assert {a["case_id"] for a in attempts} == {"direct_lookup", "missing_id"}
    err = capsys.readouterr().err
    assert "20 attempts written" in err and "[20/20]" in err


def test_unknown_ids_and_modes_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.jsonl"
    base = ["run", "--config", str(ROOT / "config.example.json"), "--output", str(out)]
    assert main([*base, "--only", "direct_lookup,nope"]) == 2
    assert "unknown case ids: nope" in capsys.readouterr().err
    assert main([*base, "--modes", "auto,sideways"]) == 2
    assert "$.modes[1]" in capsys.readouterr().err
    assert not out.exists()


def test_report_and_compare_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.jsonl"
    args = ["run", "--config", str(ROOT / "config.example.json"), "--output", str(out)]
    assert (
        main([*args, "--modes", "auto", "--repetitions", "1", "--only", "direct_lookup,missing_id"])
        == 0
    )
    capsys.readouterr()
    csv, junit = tmp_path / "e.csv", tmp_path / "j.xml"
    assert main(["report", str(out), "--errors-csv", str(csv), "--junit", str(junit)]) == 0
    table = capsys.readouterr().out
    assert "sim-careful (simulated)" in table and "decision_accuracy" in table
    assert (
        csv.read_text().splitlines()[0]
        == "provider,model,mode,case_id,attempt,error_code,expected,actual"
    )
    assert junit.read_text().startswith("<?xml")
    assert main(["report", str(out), "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert {r["mode"] for r in report["results"]} == {"auto"}
    # a file compared with itself never regresses
    assert main(["compare", str(out), str(out)]) == 0


def test_the_real_provider_example_loads_and_names_its_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolstand.config import load_config
    from toolstand.runner import load_inputs, missing_keys

    path = ROOT / "config.providers.example.json"
    config = load_config(path)
    assert {r.api for r in config.runs} == {
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
    }
    assert not any(r.simulated for r in config.runs)
    load_inputs(config, str(path))  # its prompt, contract and cases resolve from its folder
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OLLAMA_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    named = {p.message for p in missing_keys(config, str(path))}
    assert named == {f"environment variable {v} is not set" for v in
                     ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OLLAMA_API_KEY")}  # fmt: skip
