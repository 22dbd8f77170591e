"""The report from the index's report columns equals the report read line by line (issue
28): JSON, text, error CSV and JUnit, on simulator runs (a demo-like matrix, a repair
run, a BFCL import) and on hostile histories; the sidecar keeps the columns, and an
older sidecar is rebuilt."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support import bfcl as fx
from tests.support.readers import views
from tests.support.records import (
    attempt,
    err,
    header,
    judgement,
    lead_order,
    second_turn,
    transport,
)
from toolstand.cli import main
from toolstand.history import sidecar
from toolstand.history.index import HistoryIndex
from toolstand.history.keep import IndexedWriter
from toolstand.history.read import in_key_order
from toolstand.reporting.metrics import compute_files
from toolstand.run.runner import load_inputs, run
from toolstand.spec.config import parse_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def small_sidecars(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sidecars for histories of any size, so the small ones here get one too."""
    monkeypatch.setattr(sidecar, "MIN_ROWS", 1)


def sim_run(out: Path, runs: list[dict[str, Any]], **extra: Any) -> Path:
    data: dict[str, Any] = {
        "runs": runs,
        "system_prompt": "prompts/delivery-router-v1.txt",
        "tools": "contracts/delivery_tools.json",
        "cases": "cases/delivery.jsonl",
        "repetitions": 2,
        "parallelism": 4,
        "retry": {"max_retries": 1, "base_delay_s": 0.0, "max_delay_s": 0.0},
        # sim-flaky's timeouts hold the connection: the client must give up soon (the
        # report compares its two paths over whatever the file holds)
        "timeouts": {"connect_s": 2, "read_s": 1},
        "sim": {"seed": 7, "latency_s": 0, "retry_after_s": 0},
        **extra,
    }
    inputs = load_inputs(parse_config(orjson.dumps(data), "cfg", ROOT), "cfg")
    asyncio.run(run(inputs, out, progress_out=None))
    return out


def sim(model: str, api: str) -> dict[str, Any]:
    return {"provider": "sim", "model": f"sim-{model}", "api": api, "base_url": "sim"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo-like matrix: five personas over four APIs and every mode."""
    out = tmp_path_factory.mktemp("demo") / "demo.jsonl"
    runs = [sim("careful", "openai-chat"), sim("eager", "anthropic"), sim("sloppy", "gemini"),
            sim("positional", "openai-responses"), sim("flaky", "anthropic")]  # fmt: skip
    return sim_run(out, runs, modes=["auto", "forced", "no_tools", "reversed"])


@pytest.fixture(scope="module")
def repair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("repair") / "repair.jsonl"
    arms = {"max_repairs": 3, "feedback": ["allowed", "traceback"]}
    return sim_run(out, [sim("sloppy", "openai-chat")], repair=arms)


@pytest.fixture(scope="module")
def bfcl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bfcl")
    out = folder / "bfcl"
    assert main(["import", "bfcl", str(fx.write_wheel(folder)), "--out", str(out)]) == 0
    history = folder / "run.jsonl"
    assert main(["run", "--config", str(out / "config.json"), "--output", str(history)]) == 0
    return history


def both_paths(paths: list[Path]) -> tuple[dict[str, bytes], dict[str, bytes], dict[str, bytes]]:
    """(line by line, cold index, from the saved sidecar) of every view."""
    for p in paths:
        sidecar.sidecar_path(p).unlink(missing_ok=True)
    old = views(compute_files(paths, collect_failures=True, index=False))
    cold = views(compute_files(paths, collect_failures=True, index=True))
    for p in paths:
        assert sidecar.sidecar_path(p).exists()
    kept = views(compute_files(paths, collect_failures=True, index=True))
    return old, cold, kept


def assert_same(paths: list[Path]) -> dict[str, bytes]:
    old, cold, kept = both_paths(paths)
    for view in old:
        assert cold[view] == old[view], view
        assert kept[view] == old[view], view
    return old


def test_demo_run_gives_the_same_report(demo: Path) -> None:
    old = assert_same([demo])
    data = orjson.loads(old["json"])
    assert len(data["results"]) == 20  # 5 models x 4 modes
    assert any(r["transport_errors"] for r in data["results"])  # flaky
    assert any(r["second_turn_transport_errors"] or r["error_recovery_accuracy"]["denominator"]
               for r in data["results"])  # fmt: skip
    assert old["csv"].count(b"\n") > 10


def test_the_json_report_needs_no_line_but_the_headers(demo: Path) -> None:
    """With the sidecar, the JSON report reads only the lines the columns do not hold."""
    compute_files([demo], index=True)
    ix = HistoryIndex(demo)
    assert sidecar.load(ix)
    assert ix.report.odd == [(1, 0)]  # the run header
    assert ix.rows > 0 and 0 not in ix.report.kind


def test_repair_run_gives_the_same_report(repair: Path) -> None:
    old = assert_same([repair])
    arms = {r["feedback"]: r["repair"]["needed"] for r in orjson.loads(old["json"])["results"]}
    assert set(arms) == {"allowed", "traceback"} and all(arms.values())


def test_bfcl_run_gives_the_same_report(bfcl: Path) -> None:
    old = assert_same([bfcl])
    assert (
        orjson.loads(old["json"])["results"][0]["attempted"] == 15
    )  # tests/bfcl_fixtures.py: one entry a category and kind
    # BFCL's main axis, in the text from both paths alike (issue 30)
    assert b"  per category (" in old["text"] and b"    simple_python " in old["text"]


def test_two_files_and_the_same_file_twice(demo: Path, repair: Path) -> None:
    assert_same([demo, repair, demo])


def _odd_records() -> list[bytes]:
    """Lines a report must read itself, each with its own warning or quirk."""
    good = in_key_order(attempt("direct_lookup", 1, run_id="other-writer", model="second"))
    out_of_order = lead_order(attempt("direct_lookup", 2, j=judgement(errors=[err("x")])))
    bad_types = in_key_order(attempt("direct_lookup", 3))
    bad_types["retries"] = 2.0  # a float: the total turns float
    float_tokens = in_key_order(attempt("direct_lookup", 3, model="floaty"))
    float_tokens["usage"] = {"input_tokens": 1.5, "output_tokens": 2}
    no_attempt = in_key_order(attempt("direct_lookup", 1))
    no_attempt["attempt"] = 0
    unjudged = in_key_order(attempt("direct_lookup", 1))
    unjudged["judgement"] = None
    bad_te = in_key_order(attempt("direct_lookup", 1, transport_error={"message": "no code"}))
    late_feedback = in_key_order(attempt("direct_lookup", 4))
    late_feedback["feedback"] = "traceback"  # after the judgement: read line by line
    st_te = in_key_order(attempt(
        "recovery_not_found", 1, st=second_turn(transport_error=transport("timeout"))))  # fmt: skip
    return [
        orjson.dumps(good),
        b'{"type":"note","text":"a foreign record"}',
        b"not json at all",
        b"   ",
        b"[1, 2]",
        orjson.dumps(out_of_order),
        orjson.dumps(bad_types),
        orjson.dumps(float_tokens),
        orjson.dumps(no_attempt),
        orjson.dumps(unjudged),
        orjson.dumps(bad_te),
        orjson.dumps(late_feedback),
        orjson.dumps(st_te),
        orjson.dumps(st_te) + b"\r",  # a CRLF line
        orjson.dumps(header(run_id="second-header")),
    ]


def hostile(demo: Path, out: Path, *, torn: bool) -> Path:
    """The demo's lines with odd lines spread among them, a second writer's lines in a
    block, and (``torn``) a killed writer's last half line."""
    lines = demo.read_bytes().splitlines()
    odd = _odd_records()
    mixed: list[bytes] = []
    for i, line in enumerate(lines):
        mixed.append(line)
        if i % 17 == 5 and odd:
            mixed.append(odd.pop(0))
    mixed += odd
    other = [in_key_order(attempt(f"case_{n}", 1, run_id="writer-2", model="m2")) for n in range(9)]
    mixed[len(mixed) // 2 : len(mixed) // 2] = [orjson.dumps(r) for r in other]
    data = b"\n".join(mixed) + b"\n"
    if torn:
        data += lines[-1][: len(lines[-1]) // 2]
    out.write_bytes(data)
    return out


@pytest.mark.parametrize("torn", [False, True])
def test_hostile_history_gives_the_same_report(demo: Path, tmp_path: Path, torn: bool) -> None:
    path = hostile(demo, tmp_path / "hostile.jsonl", torn=torn)
    old = assert_same([path])
    warnings = orjson.loads(old["json"])["warnings"]
    assert any("unknown record type 'note'" in w for w in warnings)
    assert any("malformed line" in w for w in warnings)
    assert any("attempt skipped" in w for w in warnings)
    assert any("torn last line" in w for w in warnings) == torn


def test_lines_appended_after_the_sidecar_are_read_too(demo: Path, tmp_path: Path) -> None:
    path = tmp_path / "grow.jsonl"
    shutil.copy(demo, path)
    compute_files([path], index=True)  # saves the sidecar
    with open(path, "ab") as fh:
        for r in _odd_records()[:3]:
            fh.write(r + b"\n")
        fh.write(orjson.dumps(in_key_order(attempt("direct_lookup", 9))) + b"\n")
        fh.write(b'{"type":"attempt","prov')  # still being written
    old = views(compute_files([path], collect_failures=True, index=False))
    new = views(compute_files([path], collect_failures=True, index=True))
    assert new == old


def test_the_writers_sidecar_gives_the_same_report(demo: Path, tmp_path: Path) -> None:
    """IndexedWriter keeps the report columns from the records it writes."""
    path = tmp_path / "kept.jsonl"
    recs = [orjson.loads(x) for x in demo.read_bytes().splitlines()]
    with IndexedWriter(path) as w:
        for r in recs:
            w.write(r)
    assert sidecar.sidecar_path(path).exists()
    old = views(compute_files([path], collect_failures=True, index=False))
    assert views(compute_files([path], collect_failures=True, index=True)) == old
    ix = HistoryIndex(path)
    assert sidecar.load(ix)
    cold = HistoryIndex(path)
    cold.update()
    assert ix.report.kind == cold.report.kind
    assert ix.report.kinds == cold.report.kinds
    assert ix.report.odd == cold.report.odd


def test_an_older_sidecar_is_rebuilt(demo: Path, tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    shutil.copy(demo, path)
    compute_files([path], index=True)
    target = sidecar.sidecar_path(path)
    blob = target.read_bytes()
    target.write_bytes(blob.replace(sidecar.MAGIC, b"toolstand-history-index 3\n", 1))
    assert not sidecar.load(HistoryIndex(path))
    before = views(compute_files([path], collect_failures=True, index=False))
    # a file that had a sidecar gets one again, however small
    assert views(compute_files([path], collect_failures=True)) == before
    assert sidecar.load(HistoryIndex(path))  # saved again, in the current version


def test_a_case_takes_the_category_of_its_first_line_on_both_paths(tmp_path: Path) -> None:
    """Issue 30's per-category table: a case whose lines disagree on its category gets
    the first line's, whether that line is a row of the columns or one they leave to the
    line reader (out of the runner's key order)."""

    def row(case_id: str, n: int, category: str | None, *, odd: bool = False) -> bytes:
        rec = {**attempt(case_id, n), "category": category}
        return orjson.dumps(lead_order(rec) if odd else in_key_order(rec))

    lines = [
        orjson.dumps(header()),
        row("x", 1, "odd-first", odd=True),
        row("x", 2, "later"),
        row("y", 1, "row-first"),
        row("y", 2, "odd-later", odd=True),
        row("z", 1, "row-first"),
    ]
    path = tmp_path / "categories.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    text = assert_same([path])["text"].decode()
    table = text.split("  per category (2)")[1].splitlines()[1:3]
    assert [line.split()[:2] for line in table] == [["odd-first", "1"], ["row-first", "2"]]
    assert "later" not in text
