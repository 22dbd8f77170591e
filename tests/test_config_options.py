"""Per-run ``options``: validated per API when the config loads, passed to the adapters
and recorded in the run header."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.runs import go, make_inputs, read, sim
from toolstand.cli_parser import build_parser
from toolstand.spec.config import OPTIONS_BY_API, parse_config
from toolstand.util.problems import LoadError


def config_text(*runs: dict[str, Any]) -> str:
    lines = ",\n".join(orjson.dumps(r).decode() for r in runs)
    return '{"tools": "t.json", "cases": "c.jsonl", "runs": [\n' + lines + "\n]}"


def problems(text: str) -> list[str]:
    with pytest.raises(LoadError) as info:
        parse_config(text, "my.json")
    return [str(p) for p in info.value.problems]


def test_an_option_the_api_does_not_take_names_file_line_path_and_allowed() -> None:
    text = config_text(
        sim("m", "openai-chat", options={"strict": True}),
        sim("m", "openai-chat"),
        sim("m", "anthropic", options={"store": True}),
        sim("m", "gemini", options={"strict": True}),
        sim("m", "openai-responses", options={"max_tokens_param": "max_tokens"}),
        sim("m", "openai-chat", options={"colour": "red"}),
    )
    assert problems(text) == [
        "my.json:4: $.runs[2].options.store: anthropic takes no option 'store'; "
        "its options: strict",
        "my.json:5: $.runs[3].options.strict: gemini takes no option 'strict'; "
        "its options: gemini_schema",
        "my.json:6: $.runs[4].options.max_tokens_param: openai-responses takes no option "
        "'max_tokens_param'; its options: strict, store",
        "my.json:7: $.runs[5].options.colour: openai-chat takes no option 'colour'; "
        "its options: strict, max_tokens_param",
    ]


def test_a_bad_value_names_what_is_allowed() -> None:
    text = config_text(
        sim("m", "openai-chat", options={"max_tokens_param": "max_output_tokens"}),
        sim("m", "gemini", options={"gemini_schema": "openapi"}),
        sim("m", "openai-responses", options={"store": "yes"}),
        sim("m", "anthropic", options={"strict": 1}),
    )
    assert problems(text) == [
        "my.json:2: $.runs[0].options.max_tokens_param: Input should be "
        "'max_completion_tokens' or 'max_tokens' (got 'max_output_tokens')",
        "my.json:3: $.runs[1].options.gemini_schema: Input should be "
        "'parametersJsonSchema' or 'parameters' (got 'openapi')",
        "my.json:4: $.runs[2].options.store: Input should be a valid boolean (got 'yes')",
        "my.json:5: $.runs[3].options.strict: Input should be a valid boolean (got 1)",
    ]


def test_every_option_of_every_api_loads_and_reaches_the_adapter() -> None:
    values = {
        "strict": True,
        "store": False,
        "max_tokens_param": "max_tokens",
        "gemini_schema": "parameters",
    }
    runs = [
        sim("m", api, options={k: values[k] for k in keys}) for api, keys in OPTIONS_BY_API.items()
    ]
    runs.append(sim("m", "anthropic", anthropic_version="2026-10-21", options={"strict": True}))
    config = parse_config(config_text(*runs), "my.json")
    assert [r.adapter_options() for r in config.runs] == [
        {"strict": True, "max_tokens_param": "max_tokens"},
        {"strict": True, "store": False},
        {"strict": True},
        {"gemini_schema": "parameters"},
        {"anthropic_version": "2026-10-21", "strict": True},
    ]


def test_options_shape_the_request_and_are_recorded_in_the_header(tmp_path: Path) -> None:
    inputs = make_inputs(
        [
            sim(
                "sim-careful",
                "openai-chat",
                options={"strict": True, "max_tokens_param": "max_tokens"},
            ),
            sim("sim-careful", "openai-responses", options={"store": False}),
            sim("sim-careful", "gemini", options={"gemini_schema": "parameters"}),
            sim("sim-careful", "anthropic", options={"strict": True}),
        ]
    )
    out = tmp_path / "run.jsonl"
    go(inputs, out, only={"direct_lookup"})
    (header,), attempts = read(out)
    assert [r.get("options") for r in header["runs"]] == [
        {"strict": True, "max_tokens_param": "max_tokens"},
        {"store": False},
        {"gemini_schema": "parameters"},
        {"strict": True},
    ]
    by_api = {a["api"]: a for a in attempts}
    chat = by_api["openai-chat"]["request"]["body"]
    assert chat["max_tokens"] == 500 and "max_completion_tokens" not in chat
    assert all(t["function"]["strict"] is True for t in chat["tools"])
    assert by_api["openai-responses"]["request"]["body"]["store"] is False
    gemini = by_api["gemini"]["request"]["body"]["tools"][0]["functionDeclarations"]
    assert all("parameters" in d and "parametersJsonSchema" not in d for d in gemini)
    # what Anthropic's strict tools reject is noted on the attempt, and sent as it was
    notes = by_api["anthropic"]["schema_notes"]
    assert {
        "tool": "quote_delivery",
        "path": "$.properties.weight_kg",
        "action": "unsupported",
        "keyword": "maximum",
        "detail": "anthropic strict mode rejects it (kept)",
    } in notes
    assert by_api["anthropic"]["request"]["body"]["tools"][0]["strict"] is True
    assert all(a["judgement"]["verdict"] == "pass" for a in attempts)


def test_run_help_and_readme_name_every_option_with_its_apis() -> None:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    run = sub.choices["run"]
    text = " ".join(run.format_help().split())
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for api, keys in OPTIONS_BY_API.items():
        for key in keys:
            assert key in text and api in text, (api, key)
            row = next(line for line in readme.splitlines() if line.startswith(f"| `{key}` |"))
            assert api in row, (api, key)
