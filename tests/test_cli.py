"""The command line's own flags, run in-process against the simulator."""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson
import pytest

from toolstand.cli import main
from toolstand.cli_parser import build_parser

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
    from toolstand.run.runner import load_inputs, missing_keys
    from toolstand.spec.config import load_config

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


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_option_says_what_it_does_and_its_default() -> None:
    bare = []
    for name, parser in subcommands().items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            flag = action.option_strings[0] if action.option_strings else action.dest
            text = action.help or ""
            if len(text.split()) < 3:
                bare.append(f"{name} {flag}: no sentence")
            has_default = action.default not in (None, False, argparse.SUPPRESS)
            if has_default and "%(default)s" not in text and "default" not in text:
                bare.append(f"{name} {flag}: its default {action.default!r} is not said")
    assert bare == []


def test_every_command_ends_its_help_with_an_example(
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = subcommands()
    assert set(names) == {
        "run",
        "report",
        "compare",
        "rejudge",
        "check",
        "sim",
        "tui",
        "contract",
        "import",
    }
    for name in names:
        with pytest.raises(SystemExit):
            main([name, "--help"])
        text = capsys.readouterr().out.rstrip()
        last = text.splitlines()[-2:]
        assert last[0] == "example:" and last[1].startswith(f"  toolstand {name} "), (name, last)
        assert "%%" not in text
    # and the --only, --alpha kind of option reads as a sentence with its default
    main_help = " ".join(names["compare"].format_help().split())  # as wrapped at any width
    assert "significance level of the regression test (default: 0.05)" in main_help


def test_unknown_only_ids_are_shown_with_their_control_characters_spelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.jsonl"
    args = ["run", "--config", str(ROOT / "config.example.json"), "--output", str(out)]
    assert main([*args, "--only", "direct_lookup,\x1b]0;pwned\x07"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "unknown case ids: \\x1b]0;pwned\\x07" in err


def test_check_and_sim_take_their_files_from_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--quiet"]) == 2  # no config here, and no file is a default
    err = capsys.readouterr().err
    assert "give --tools and --cases, or a config naming them" in err
    assert "config.json, config.example.json" in err
    assert main(["sim", "--port", "1"]) == 2
    assert "give --tools and --cases" in capsys.readouterr().err
    assert main(["contract", "export", "--to", "openai"]) == 2
    assert "--tools: $: give --tools, or a config naming it" in capsys.readouterr().err
    # the config.example.json of the current folder names them
    monkeypatch.chdir(ROOT)
    assert main(["check", "--quiet"]) == 0
    assert "(contracts/delivery_tools.json, cases/delivery.jsonl)" in capsys.readouterr().err
    # a named config's relative paths are read from its folder; --cases wins over it
    (tmp_path / "c.json").write_text(
        '{"runs": [{"provider": "p", "model": "m", "base_url": "sim"}],'
        f' "tools": "{ROOT}/contracts/delivery_tools.json", "cases": "nowhere.jsonl"}}'
    )
    named = ["check", "--quiet", "--config", str(tmp_path / "c.json")]
    assert main(named) == 1
    out = capsys.readouterr()
    assert f"{tmp_path}/nowhere.jsonl" in out.out + out.err
    assert main([*named, "--cases", str(ROOT / "cases" / "delivery.jsonl")]) == 0
