"""Stream parity in the report and the gate (issue 25, Report and compare): a
``stream: "both"`` run against sim-streambug on all four APIs pairs the arms per case and
repetition, lists the cases whose signature the streams change, names every fault class
that changes what a correct client reads, and ``compare`` fails when parity drops."""

from __future__ import annotations

import contextlib
import csv
import io
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.support.runs import go, make_inputs, read, sim
from toolstand.reporting.compare import compare, render
from toolstand.reporting.formats import (
    CSV_COLUMNS,
    dumps_json,
    render_table,
    to_json,
    write_errors_csv,
    write_junit,
)
from toolstand.reporting.metrics import compute_files
from toolstand.reporting.stats import mcnemar_exact

APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")
CASES = {
    "direct_lookup", "irrelevant_joke", "quote_complete", "quote_standard", "lookup_polite",
    "parallel_lookup", "boundary_weight_max", "boundary_decimal_comma", "slot_filling_quote",
    "recovery_route_unavailable", "recovery_lookup_ok",
}  # fmt: skip
# the stream faults that change what a correct client reads (personas.py, sim-streambug);
# index_reuse fools only a wrong assembler, the rest are framing a client must accept
READS_DIFFERENTLY = {
    "args_empty_zero_param", "call_lost", "value_coerced", "args_lost", "args_cumulative",
}  # fmt: skip
FAULTS = "x-toolstand-sim-stream-faults"


def runs() -> list[dict[str, Any]]:
    return [sim("sim-streambug", api, provider=f"sim-{api}") for api in APIS]


def run_both(out: Path, **extra: Any) -> Path:
    inputs = make_inputs(runs(), repetitions=2, stream="both", **extra)
    summary = go(inputs, out, only=CASES)
    assert summary.written == len(APIS) * len(CASES) * 2 * 2
    return out


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_both(tmp_path_factory.mktemp("parity") / "run.jsonl")


def faults(rec: dict[str, Any]) -> set[str]:
    """The classes the server declared in the stream that was judged (the final try)."""
    value = (rec["response"].get("headers") or {}).get(FAULTS) or ""
    return set(value.split(",")) - {""}


def retried_faults(rec: dict[str, Any]) -> set[str]:
    """The classes declared on the tries the transport retried (their headers kept)."""
    values = [(t.get("headers") or {}).get(FAULTS) or "" for t in rec["tries"][:-1]]
    return set(",".join(values).split(",")) - {""}


def test_streambug_parity_lists_the_cases_and_every_fault_class(history: Path) -> None:
    _, attempts = read(history)
    data = to_json(compute_files([history], index=False))
    entries = {e["provider"]: e for e in data["stream_parity"]}
    assert sorted(entries) == sorted(f"sim-{api}" for api in APIS)
    # the pairs, recounted from the records: (provider, case, repetition) -> arm -> record
    pairs: dict[tuple[str, str, int], dict[bool, dict[str, Any]]] = defaultdict(dict)
    for a in attempts:
        pairs[(a["provider"], a["case_id"], a["attempt"])][a["stream"]] = a
    for provider, e in entries.items():
        assert set(e) == {
            "provider",
            "model",
            "mode",
            "paired",
            "parity",
            "per_case",
            "cases",
            "declared_faults",
        }
        assert (e["model"], e["mode"]) == ("sim-streambug", "auto")
        mine = {k: v for k, v in pairs.items() if k[0] == provider and len(v) == 2}
        judged = {k: v for k, v in mine.items() if all(r["judgement"] for r in v.values())}
        plain_only = sum(
            v[False]["judgement"]["verdict"] == "pass" != v[True]["judgement"]["verdict"]
            for v in judged.values()
        )
        streamed_only = sum(
            v[True]["judgement"]["verdict"] == "pass" != v[False]["judgement"]["verdict"]
            for v in judged.values()
        )
        assert e["paired"] == {
            "pairs": len(judged),
            "passed_not_streamed_only": plain_only,
            "passed_streamed_only": streamed_only,
            "p": mcnemar_exact(plain_only, streamed_only, two_sided=True),
        }
        assert plain_only > streamed_only and e["paired"]["p"] < 0.05
        differs: dict[str, list[bool]] = defaultdict(list)
        for (_, cid, _), v in judged.items():
            sig = [v[s]["judgement"]["metrics"]["signature"] for s in (False, True)]
            differs[cid].append(sig[0] != sig[1])
        expected = sorted(cid for cid, d in differs.items() if 2 * sum(d) > len(d))
        listed = sorted(c["case_id"] for c in e["cases"])
        assert listed == expected and listed, provider
        streamed = [v[True] for v in mine.values()]
        for cid in ("direct_lookup", "irrelevant_joke"):  # one call or none: listed only
            mark = [faults(r) & READS_DIFFERENTLY for r in streamed if r["case_id"] == cid]
            assert cid not in listed or all(mark), (provider, cid)  # for a class that reads
        for c in e["cases"]:
            assert set(c) == {"case_id", "differing", "repetitions", "first_difference"}
            assert (c["differing"], c["repetitions"]) == (sum(differs[c["case_id"]]), 2)
            d = c["first_difference"]
            assert d["part"] in {"kind", "name", "arguments"}
            assert d["not_streamed"] != d["streamed"]
        # every class that changes the reading, where the run shows it, is on a listed case
        shown = set().union(*map(faults, streamed)) & READS_DIFFERENTLY
        on_listed = set().union(*(faults(r) for r in streamed if r["case_id"] in listed))
        assert shown and shown <= on_listed, (provider, shown - on_listed)
    everywhere = set().union(*(faults(a) for a in attempts if a["stream"]))
    assert {"value_coerced", "call_lost"} <= everywhere
    assert not any(faults(a) for a in attempts if not a["stream"])  # careful unstreamed


def test_the_text_report_puts_the_arms_side_by_side_with_the_parity_list(history: Path) -> None:
    text = render_table(compute_files([history], index=False))
    data = to_json(compute_files([history], index=False))
    for e in data["stream_parity"]:
        block = text.split(f"stream parity · {e['provider']} / sim-streambug · mode auto\n")[1]
        block = block.split("\n\n")[0]
        assert "not streamed" in block.splitlines()[0] and "streamed" in block
        assert f"parity list ({len(e['cases'])} cases differ in most repetitions)" in block
        for c in e["cases"]:
            assert f"    {c['case_id']} {c['differing']}/2 · " in block
        assert f"exact McNemar p {e['paired']['p']:.2g}" in block
    assert 'weight_kg: 2.5 → "2.5"' in text  # value_coerced, named by its argument
    assert max(map(len, text.splitlines())) <= 100


def test_parity_is_the_same_from_the_columns_as_from_the_lines(history: Path) -> None:
    lines = dumps_json(compute_files([history], index=False))
    columns = dumps_json(compute_files([history], index=True))
    assert lines == columns
    assert b'"stream_parity"' in columns


def test_compare_fails_when_parity_drops(history: Path, tmp_path: Path) -> None:
    # the baseline: the same persona whose streams carry only framing a client accepts
    fixed = run_both(tmp_path / "fixed.jsonl", sim={"stream_faults": {"args_whole": 1.0}})
    base = to_json(compute_files([fixed], index=False))
    cur = to_json(compute_files([history], index=False))
    assert all(e["cases"] == [] and e["parity"]["value"] == 1.0 for e in base["stream_parity"])
    result = compare(base, cur)
    parity = [c for c in result.checks if c.metric == "stream_parity"]
    assert len(parity) == len(APIS)
    for c in parity:
        assert c.test == "mcnemar" and c.significant and c.worse > 0 and c.better == 0
        assert c.stream is None and c.feedback is None
    assert result.exit_code != 0
    assert "DROP stream_parity" in render(result)
    back = compare(cur, base)  # parity rising is no drop
    assert not any(c.significant for c in back.checks if c.metric == "stream_parity")
    cur.pop("stream_parity")  # run without "both": the gate cannot see parity any more
    assert any("stream parity in baseline, missing" in f for f in compare(base, cur).failures)


def test_the_readmes_stream_config_runs_streambug_both_ways_on_all_four_apis() -> None:
    from tests.support.runs import ROOT
    from toolstand.spec.config import load_config

    config = load_config(ROOT / "config.stream.json")
    assert config.stream == "both"
    assert sorted(r.api for r in config.runs) == sorted(APIS)
    assert {r.model for r in config.runs} == {"sim-streambug"} and all(
        r.simulated for r in config.runs
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``toolstand run --config config.stream.json`` on every case, one repetition (a
    request's stable faults are the same in each repetition, and the first repetition's
    transient ones are the 3-repetition run's first), then ``toolstand report``: the
    history and the report's text."""
    from tests.support.runs import ROOT
    from toolstand.cli import main

    out = tmp_path_factory.mktemp("demo") / "stream.jsonl"
    args = ["run", "--config", str(ROOT / "config.stream.json"), "--output", str(out)]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*args, "--repetitions", "1"]) == 0
    with contextlib.redirect_stdout(io.StringIO()) as text:
        assert main(["report", str(out)]) == 0
    return out, text.getvalue()


def test_the_stream_demo_lists_every_fault_class_that_changes_the_reading(
    demo: tuple[Path, str],
) -> None:
    """Issue 25, done when: the stream demo's report's parity list shows every
    sim-streambug class a correct client reads differently, the empty zero-parameter call
    included (its own case file has a tool without parameters)."""
    out, text = demo
    _, attempts = read(out)
    data = to_json(compute_files([out], index=False))
    listed = {(e["provider"], c["case_id"]) for e in data["stream_parity"] for c in e["cases"]}
    for provider, cid in listed:  # the text report names each listed case in its block
        block = text.split(f"stream parity · {provider} / sim-streambug · mode auto\n")[1]
        assert f"    {cid} 1/1 · " in block.split("\n\n")[0]
    on_listed: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for a in attempts:
        if a["stream"] and (a["provider"], a["case_id"]) in listed:
            for fault in faults(a) & READS_DIFFERENTLY:
                on_listed[fault].add((a["provider"], a["case_id"]))
    assert set(on_listed) == READS_DIFFERENTLY
    for provider in {a["provider"] for a in attempts}:  # and every class declared, by name
        mine = [a for a in attempts if a["provider"] == provider]
        declared = set().union(*(faults(a) | retried_faults(a) for a in mine))
        block = text.split(f"stream parity · {provider} / sim-streambug")[1].split("\n\n")[0]
        table = block.split("declared stream faults (x-toolstand-sim-stream-faults)\n")[1]
        assert {line.split()[0] for line in table.splitlines()[4:]} == declared
    # the empty zero-parameter call, as the report spells it: {} not streamed, "" streamed
    assert ('service_status 1/1 · arguments 0: {} → ""') in text


def test_the_error_csv_and_junit_keep_the_stream_arms_apart(history: Path) -> None:
    """Issue 25: each error row ends with its attempt's stream arm, and JUnit has a suite
    per arm (``/streamed``, ``/not-streamed``) whose testcases hold only that arm's
    attempts; the columns give the same files as the lines."""
    _, attempts = read(history)
    failing = {
        (a["provider"], a["case_id"], a["attempt"], a["stream"])
        for a in attempts
        if a["transport_error"] or a["judgement"]["verdict"] == "fail"
    }
    assert any(k[3] for k in failing)
    outputs = []
    for index in (False, True):
        report = compute_files([history], index=index, collect_failures=True)
        buf = io.StringIO()
        write_errors_csv(report, buf)
        junit = io.BytesIO()
        write_junit(report, junit)
        outputs.append((buf.getvalue(), junit.getvalue()))
    assert outputs[0] == outputs[1]
    rows = list(csv.DictReader(io.StringIO(outputs[0][0])))
    assert list(rows[0]) == [*CSV_COLUMNS, "stream"]
    assert {
        (r["provider"], r["case_id"], int(r["attempt"]), r["stream"] == "true") for r in rows
    } == failing
    root = ET.fromstring(outputs[0][1])
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    for provider in (f"sim-{api}" for api in APIS):
        for arm, streamed in (("streamed", True), ("not-streamed", False)):
            suite = suites[f"{provider}/sim-streambug/auto/{arm}"]
            failed = {
                (tc.get("name"), int(line.split(":")[0].removeprefix("attempt ")))
                for tc in suite.iter("testcase")
                for el in (tc.find("failure"), tc.find("error"))
                if el is not None
                for line in (el.text or "").splitlines()
            }
            mine = {(k[1], k[2]) for k in failing if k[0] == provider and k[3] == streamed}
            assert failed == mine, (provider, arm)


def test_the_parity_block_lists_every_fault_class_the_server_declared(history: Path) -> None:
    """Issue 25, done when: "read parity in the report, with every sim-streambug fault
    class listed". Per pair of arms, each class named in a streamed attempt's
    ``x-toolstand-sim-stream-faults`` header gets a row: how many streams carried it
    (the judged one or a try retried before it), of the judged ones how many failed only
    streamed, and how many were on a retried try; the same from the columns as from the
    lines, in the JSON and in the text. A report without the header has no such rows."""
    _, attempts = read(history)
    plain = {(a["provider"], a["case_id"], a["attempt"]): a for a in attempts if not a["stream"]}
    want: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for a in attempts:
        if not a["stream"]:
            continue
        x = plain[(a["provider"], a["case_id"], a["attempt"])]
        lost = passed(x) and not passed(a)
        for fault in faults(a) | retried_faults(a):
            counts = want[a["provider"]].setdefault(fault, [0, 0, 0])
            counts[0] += 1
            counts[1] += lost and fault in faults(a)  # counted for the stream judged
            counts[2] += fault in retried_faults(a)
    # these cases have no parameterless tool: no empty zero-parameter call among them
    assert set().union(*(set(w) for w in want.values())) >= READS_DIFFERENTLY - {
        "args_empty_zero_param"
    }
    lines = to_json(compute_files([history], index=False))
    columns = to_json(compute_files([history], index=True))
    assert lines["stream_parity"] == columns["stream_parity"]
    text = render_table(compute_files([history], index=False))
    for entry in lines["stream_parity"]:
        rows = {r["fault"]: r for r in entry["declared_faults"]}
        got = {f: [r["streams"], r["failed_only_streamed"], r["retried"]] for f, r in rows.items()}
        assert got == want[entry["provider"]]
        for r in rows.values():  # a class reads differently in no more streams than carry it
            assert r["differing"] <= r["streams"]
        block = text.split(f"stream parity · {entry['provider']} / sim-streambug")[1]
        block = block.split("\n\n")[0]
        for f, r in rows.items():
            row = (
                f"    {f:<24} {r['streams']:>7} {r['differing']:>17}"
                f" {r['failed_only_streamed']:>21} {r['retried']:>8}\n"
            )
            assert row in block + "\n"


def passed(rec: dict[str, Any]) -> bool:
    return rec["transport_error"] is None and rec["judgement"]["verdict"] == "pass"


def test_no_declared_faults_without_the_header(tmp_path: Path) -> None:
    inputs = make_inputs([sim("sim-careful", "openai-chat")], repetitions=1, stream="both")
    out = tmp_path / "careful.jsonl"
    go(inputs, out, only={"direct_lookup", "parallel_lookup"})
    data = to_json(compute_files([out], index=False))
    (entry,) = data["stream_parity"]
    assert "declared_faults" not in entry
    assert "declared stream faults" not in render_table(compute_files([out], index=False))


def test_a_transient_fault_the_transport_retried_away_is_still_declared(tmp_path: Path) -> None:
    """Issue 25: ``error_inband`` and ``no_terminal`` fail their try and are retried; the
    record keeps each retried try's headers in tries[] (the final try's are the
    response's), and the parity block counts their classes for the attempt: as streams
    and as retried, never as reading differently."""
    transient = {"no_terminal": 0.3, "error_inband": 0.3, "value_coerced": 1.0}
    retry = {"max_retries": 4, "base_delay_s": 0, "max_delay_s": 0, "total_budget_s": 5}
    inputs = make_inputs(
        [sim("sim-streambug", api, provider=f"sim-{api}") for api in ("openai-chat", "anthropic")],
        stream="both",
        retry=retry,
        sim={"stream_faults": transient},
    )
    out = tmp_path / "transient.jsonl"
    go(inputs, out, only=CASES)
    _, attempts = read(out)
    want: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for a in attempts:
        *earlier, last = a["tries"]
        assert "headers" not in last  # the final try's headers are the response's
        said: set[str] = set()
        for t in earlier:  # each retried stream named the class that failed it
            named = set(t["headers"][FAULTS].split(","))
            assert named & {"no_terminal", "error_inband"}, t
            said |= named
        if a["transport_error"] is None:  # judged, so paired (a failed one is not)
            assert not faults(a) & {"no_terminal", "error_inband"}
            for fault in said:
                want[a["provider"]][fault] += 1
    data = to_json(compute_files([out], index=False))
    for entry in data["stream_parity"]:
        rows = {r["fault"]: r for r in entry["declared_faults"]}
        for fault in ("no_terminal", "error_inband"):  # declared only on retried tries
            n = want[entry["provider"]][fault]
            assert rows[fault]["retried"] == rows[fault]["streams"] == n > 0, entry["provider"]
            assert rows[fault]["differing"] == rows[fault]["failed_only_streamed"] == 0
        assert rows["value_coerced"]["differing"] > 0  # the judged streams' class still reads


def test_the_stream_demo_report_lists_every_streambug_fault_class(
    demo: tuple[Path, str],
) -> None:
    """Issue 25, done when: "read parity in the report, with every sim-streambug fault
    class listed". The declared-faults tables of the demo report's four blocks name,
    together, every class of sim-streambug's persona, the transient ones (retried away)
    included; each under an API that can show it."""
    from tests.support.runs import ROOT
    from toolstand.sim.personas import STREAM_FAULTS as PERSONAS
    from toolstand.sim.stream_faults import STREAM_FAULTS
    from toolstand.spec.config import load_config

    text = demo[1]
    listed: set[str] = set()
    for run in load_config(ROOT / "config.stream.json").runs:
        provider, api = run.provider, run.api
        block = text.split(f"stream parity · {provider} / sim-streambug")[1].split("\n\n")[0]
        table = block.split("declared stream faults (x-toolstand-sim-stream-faults)\n")[1]
        names = {line.split()[0] for line in table.splitlines()[4:]}
        assert all(api in STREAM_FAULTS[f] for f in names), (provider, names)
        listed |= names
    assert listed == set(PERSONAS["streambug"])
