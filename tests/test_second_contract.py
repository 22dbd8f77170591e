"""The whole demo flow on a contract that is not the delivery one: nothing of the delivery
domain may leak into its history, and its numbers come from its own data."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from toolstand.cli import main
from toolstand.spec.cases import load_cases
from toolstand.spec.contract import load_contract, parse_contract
from toolstand.tui.model.draft import check_draft, values_from_case
from toolstand.tui.model.project import load_project
from toolstand.tui.model.templates import TEMPLATES, from_template
from toolstand.util.problems import LoadError

LIBRARY = Path(__file__).resolve().parent / "fixtures" / "library"
DELIVERY_WORDS = re.compile(
    r"order|ORD-|deliver|shipped|in_transit|route_unavailable|доставк|заказ|самар|казан"
    r"|cancel_order|quote_delivery|get_order",
    re.IGNORECASE,
)


def leaks(text: str) -> list[str]:
    return sorted({m.group(0) for m in DELIVERY_WORDS.finditer(text)})


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """check and run (every persona and mode), as the CLI does; the test reports,
    rejudges and compares."""
    folder = tmp_path_factory.mktemp("library")
    config = {
        "runs": [
            {"provider": "sim", "model": "sim-careful", "api": "openai-chat", "base_url": "sim"},
            {"provider": "sim", "model": "sim-eager", "api": "anthropic", "base_url": "sim"},
            {"provider": "sim", "model": "sim-sloppy", "api": "gemini", "base_url": "sim"},
            {
                "provider": "sim",
                "model": "sim-positional",
                "api": "openai-responses",
                "base_url": "sim",
            },
            {"provider": "sim", "model": "sim-flaky", "api": "anthropic", "base_url": "sim"},
        ],
        "system_prompt": str(LIBRARY / "library-desk-v1.txt"),
        "tools": str(LIBRARY / "library_tools.json"),
        "cases": str(LIBRARY / "library.jsonl"),
        "modes": ["auto", "forced", "no_tools", "reversed"],
        "repetitions": 2,
        "parallelism": 4,
        "retry": {"max_retries": 4, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 10},
        "timeouts": {"connect_s": 5, "read_s": 2},
        "sim": {"seed": 3},
    }
    cfg = folder / "config.json"
    cfg.write_bytes(orjson.dumps(config))
    history, rejudged = folder / "run.jsonl", folder / "rejudged.jsonl"
    codes = {"check": main(["check", "--quiet", "--config", str(cfg)])}
    codes["run"] = main(["run", "--config", str(cfg), "--output", str(history)])
    return {"history": history, "rejudged": rejudged, "codes": codes}


def _capture(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().out


def test_the_flow_on_a_library_contract_runs_and_leaks_no_delivery_word(
    flow: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert flow["codes"] == {"check": 0, "run": 0}
    code, report = _capture(capsys, ["report", "--json", str(flow["history"])])
    assert code == 0
    assert main(["rejudge", str(flow["history"]), "--output", str(flow["rejudged"])]) == 0
    code, compared = _capture(
        capsys, ["compare", "--json", str(flow["history"]), str(flow["rejudged"])]
    )
    assert code == 0  # the same code judges the same answers the same way
    texts = {
        "history": flow["history"].read_text("utf-8"),
        "rejudged": flow["rejudged"].read_text("utf-8"),
        "report": report,
        "compare": compared,
    }
    assert {name: leaks(text) for name, text in texts.items()} == {name: [] for name in texts}
    records = [orjson.loads(line) for line in texts["history"].splitlines()]
    assert records[0]["type"] == "run" and records[0]["contract"]["name"] == "library_tools"
    attempts = [r for r in records if r["type"] == "attempt"]
    assert {r["mode"] for r in attempts} == {"auto", "forced", "no_tools", "reversed"}
    assert len({r["model"] for r in attempts}) == 5

    groups = {(g["model"], g["mode"]): g for g in orjson.loads(report)["results"]}

    def share(model: str, mode: str, metric: str) -> tuple[int, int]:
        value = groups[(f"sim-{model}", mode)][metric]
        return value["numerator"], value["denominator"]

    passes = [g["pass_rate"]["value"] for g in groups.values()]
    assert 0 < min(passes) < 1 and max(passes) == 1  # neither all pass nor all fail
    assert share("careful", "auto", "pass_rate") == (24, 24)
    # the second turns read the contract's x-fake: the overdue loan fails, Mars finds titles
    assert share("careful", "auto", "error_recovery_accuracy") == (4, 4)
    # the eager persona's overcalls come from words read off the tools' descriptions
    # ("borrowed" -> renew_loan) and are unsafe: renew_loan is the execute tool
    unsafe, total = share("eager", "auto", "unsafe_call_rate")
    assert 0 < unsafe < total
    eager_pass, eager_total = share("eager", "auto", "pass_rate")
    assert 0 < eager_pass < eager_total
    overcalls = [
        r
        for r in attempts
        if r["model"] == "sim-eager" and r["case_id"] == "not_finished" and r["mode"] == "auto"
    ]
    assert any(c["name"] == "renew_loan" for r in overcalls for c in r["decision"]["calls"])


def test_the_templates_name_only_the_open_contracts_tools() -> None:
    contract = load_contract(LIBRARY / "library_tools.json")
    casefile = load_cases(LIBRARY / "library.jsonl")
    names = {t.name for t in contract.tools}
    for category in TEMPLATES:
        data = from_template(category, contract, set(casefile.by_id()))
        assert leaks(orjson.dumps(data).decode()) == [], category
        expect = data["expect"]
        assert expect.get("tool", "search_catalog") in names, category
        if isinstance(expect.get("must_not_call"), list):
            assert set(expect["must_not_call"]) <= names, category
        draft = check_draft(values_from_case(data), contract, casefile, None, None)
        assert draft.valid, (category, draft.reason)
    assert from_template("implicit_intent", contract, set())["expect"]["must_not_call"] == [
        "renew_loan"
    ]
    recovery = from_template("recovery", contract, set())
    assert recovery["expect"] == {"kind": "tool_call", "tool": "renew_loan"}
    assert recovery["followup"]["contains_any"] == ["The loan is overdue and cannot be extended"]
    assert "pattern" in from_template("invalid_id", contract, set())["note"]


def test_a_recovery_template_without_x_fake_brings_its_own_failure() -> None:
    data = orjson.loads((LIBRARY / "library_tools.json").read_bytes())
    for tool in data["tools"]:
        tool.pop("x-fake", None)
    contract = parse_contract(orjson.dumps(data), "bare.json")
    recovery = from_template("recovery", contract, set())
    assert recovery["expect"] == {"kind": "tool_call", "tool": "search_catalog"}
    failure = recovery["followup"]["tool_results"]["search_catalog"]
    assert failure["ok"] is False and failure["error"]["code"] == "UPSTREAM_TIMEOUT"


def test_a_project_without_a_config_opens_its_only_contract(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "cases").mkdir()
    (tmp_path / "contracts" / "library_tools.json").write_bytes(
        (LIBRARY / "library_tools.json").read_bytes()
    )
    (tmp_path / "contracts" / "library_tools.lock.json").write_text("{}")  # not a contract
    (tmp_path / "cases" / "library.jsonl").write_bytes((LIBRARY / "library.jsonl").read_bytes())
    project = load_project(tmp_path)
    assert project.config is None and project.contract.name == "library_tools"
    assert project.cases_path == tmp_path / "cases" / "library.jsonl"
    (tmp_path / "contracts" / "other.json").write_text("{}")
    with pytest.raises(LoadError) as err:
        load_project(tmp_path)
    assert "holds library_tools.json, other.json: give --tools or a config" in str(err.value)
    assert load_project(tmp_path, tools="contracts/library_tools.json").contract.name == (
        "library_tools"
    )
