"""Opening a history: from the command line, by a typed path, and what the picker says
of each file (issue 14 item 16 and the open dialog's estimate)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from textual.widgets import Input, OptionList, Static

from tests.support.tui import SIZE, screen_after, wait_for
from tests.support.tui_history import fixture_records, headers, write_history
from toolstand import cli
from toolstand.history.files import describe_run_file
from toolstand.tui import app as app_module
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.history import HistoryScreen
from toolstand.tui.screens.run_picker import RunPicker
from toolstand.tui.widgets.case_list import CaseTable

AppFor = Callable[..., ToolstandApp]


def test_tui_takes_a_history_as_argument_or_option(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[dict[str, Any]] = []

    def run_app(**kw: Any) -> int:
        seen.append(kw)
        return 0

    monkeypatch.setattr(app_module, "run_app", run_app)
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"")
    assert cli.main(["tui", str(path)]) == 0
    assert cli.main(["tui", "--history", str(path), "--cases", "c.jsonl"]) == 0
    assert [kw["history"] for kw in seen] == [str(path), str(path)]
    assert seen[1]["cases"] == "c.jsonl"
    assert cli.main(["tui", str(tmp_path / "missing.jsonl")]) == 2  # said, not opened
    assert len(seen) == 2


async def test_the_app_opens_the_history_it_was_given(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    older = project / "runs" / "older.jsonl"
    older.write_bytes(
        b"\n".join(orjson.dumps(r) for r in [headers()[0], *list(fixture_records(project))[:3]])
        + b"\n"
    )
    os.utime(older, (1e9, 1e9))  # not the newest: opened only because it was asked for
    app = app_for(history=str(older))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await wait_for(pilot, lambda: screen.index is not None and screen.index.rows == 3)
        assert screen.path == str(older) and len(recs) != 3


async def test_the_open_dialog_takes_a_typed_path(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    recs = write_history(project)
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "kept.jsonl").write_bytes((project / "runs" / "fixture.jsonl").read_bytes())
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        history = await screen_after(pilot, HistoryScreen, "f3")
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, RunPicker))
        box = app.screen.query_one("#picker-path", Input)
        box.focus()
        await pilot.press(*"elsewhere/nope.jsonl", "enter")
        await pilot.pause()
        said = str(app.screen.query_one("#picker-problem", Static).render())
        assert "elsewhere/nope.jsonl: no such file" in said
        box.value = ""
        await pilot.press(*"elsewhere/kept.jsonl", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        assert history.path == str(elsewhere / "kept.jsonl")
        await wait_for(pilot, lambda: history.index is not None and history.index.rows == len(recs))


async def test_the_picker_says_what_is_not_a_history(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    write_history(project)
    (project / "runs" / "notes.jsonl").write_bytes(b"a line\n" * 9 + b"no newline")
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3", "o")
        await wait_for(pilot, lambda: isinstance(app.screen, RunPicker))
        options = app.screen.query_one("#picker-list", OptionList)
        await wait_for(pilot, lambda: options.option_count == 2)
        texts = {str(options.get_option_at_index(i).prompt).split(" ")[0]:
                 str(options.get_option_at_index(i).prompt) for i in range(2)}  # fmt: skip
        assert "not a toolstand history" in texts["notes.jsonl"]
        assert "attempts" not in texts["notes.jsonl"]
        assert "24 attempts" in texts["fixture.jsonl"]


def test_a_skewed_sample_gives_no_estimate(tmp_path: Path) -> None:
    recs = [dict(r, user="x" * 10) for r in fixture_records(Path(__file__).parents[2])][:12]
    recs[6] = dict(recs[6], user="y" * (1 << 20))  # one 1 MB answer among short ones
    path = tmp_path / "skewed.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [headers()[0], *recs]))
    described = describe_run_file(path)
    assert described.attempts is None and not described.exact  # not "~433"
    even = tmp_path / "even.jsonl"
    even.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [headers()[0], *recs[:6] * 200]))
    estimate = describe_run_file(even)
    assert estimate.attempts is not None and 1000 <= estimate.attempts <= 1400


def test_the_picker_counts_from_a_sidecar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolstand.history import sidecar as history_sidecar
    from toolstand.history.index import HistoryIndex

    recs = list(fixture_records(Path(__file__).parents[2]))
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [headers()[0], *recs * 40]))
    monkeypatch.setattr(history_sidecar, "MIN_ROWS", 1)
    ix = HistoryIndex(path)
    ix.update()
    assert history_sidecar.save(ix) is not None
    described = describe_run_file(path, sample=4096)
    assert described.exact and described.attempts == len(recs) * 40


async def test_the_last_column_follows_one_run_and_mode(app_for: AppFor, project: Path) -> None:
    def attempt(model: str, mode: str, verdict: str) -> dict[str, Any]:
        return {"type": "attempt", "run_id": "r1", "case_id": "direct_lookup", "provider": "p", "model": model,
                "mode": mode, "attempt": 1, "judgement": {"verdict": verdict},
                "transport_error": None}  # fmt: skip

    lines = [
        attempt("a", "auto", "fail"),
        attempt("a", "forced", "pass"),
        attempt("b", "auto", "pass"),
    ]
    lines.append(attempt("a", "auto", "pass") | {"case_id": "missing_id"})
    (project / "runs" / "old.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CasesScreen)
        table = screen.query_one(CaseTable)
        await wait_for(pilot, lambda: "direct_lookup" in app.verdicts)
        await pilot.pause()

        def last() -> dict[str, str]:
            return {
                str(table.get_row_at(i)[0]): str(
                    table.get_row_at(i)[table.get_column_index("last")]
                )
                for i in range(2)
            }

        # the newest attempt's run and mode (p/a auto), not any run's latest verdict
        assert last() == {"direct_lookup": "FAIL", "missing_id": "pass"}
        where = screen.query_one("#filter-where")
        where.value = "p/b auto"  # type: ignore[attr-defined]
        await pilot.pause()
        assert last() == {"direct_lookup": "pass", "missing_id": ""}
        where.value = "p/a forced"  # type: ignore[attr-defined]
        await pilot.pause()
        assert last() == {"direct_lookup": "pass", "missing_id": ""}


async def test_a_record_rewritten_since_indexing_is_told_with_its_path_spelled(
    app_for: AppFor, project: Path
) -> None:
    # a second process rewrote the line: reading it names the file, whose name is outside text
    name = "ev\x1b]0;T\x07il\x9b.jsonl"
    recs = write_history(project, name)
    path = project / "runs" / name
    app = app_for(history=str(path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await wait_for(pilot, lambda: screen.index is not None and screen.index.rows == len(recs))
        await wait_for(pilot, lambda: screen.result is not None)
        lines = path.read_bytes().split(b"\n")
        lines[1] = b"[" + b" " * (len(lines[1]) - 2) + b"]"  # same length: not re-indexed
        path.write_bytes(b"\n".join(lines))
        await pilot.press("home", "enter")
        await wait_for(pilot, lambda: any("Cannot read" in n.message for n in app._notifications))
        notes = [n.message for n in app._notifications if "Cannot read" in n.message]
        assert not any("\x1b" in n or "\x07" in n or "\x9b" in n for n in notes), notes
        assert any("ev\\x1b]0;T\\x07il\\x9b.jsonl" in n for n in notes), notes


async def test_a_read_failure_notice_spells_the_file_name(app_for: AppFor, project: Path) -> None:
    name = "ev\x1b]0;T\x07il.jsonl"
    recs = write_history(project, name)
    app = app_for(history=str(project / "runs" / name))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await wait_for(pilot, lambda: screen.index is not None and screen.index.rows == len(recs))
        assert screen.index is not None
        # what the indexing worker posts when a read fails (an I/O error mid-scan)
        screen.post_message(screen.Failed(screen.index, f"cannot read {screen.index.path}: EIO"))
        await wait_for(pilot, lambda: any("cannot read" in n.message for n in app._notifications))
        notes = [n.message for n in app._notifications if "cannot read" in n.message]
        assert notes and not any("\x1b" in n or "\x07" in n for n in notes), notes


async def test_the_open_dialog_counts_and_names_models_from_the_file_not_a_guess(
    app_for: AppFor, project: Path, fixed_clock: None
) -> None:
    # issue 30: the dialog showed the header's configured models and extrapolated counts
    # off by up to 69% ("~5,898" for 3,491); it counts from facts or says unknown
    recs = [r for r in fixture_records(project) if r["model"] == "sim-eager"]
    assert recs and len({r["model"] for r in fixture_records(project)}) > 1
    header = headers()[0]  # configures every model; only sim-eager's attempts follow
    small = project / "runs" / "small.jsonl"
    small.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [header, *recs]))
    big = project / "runs" / "big.jsonl"  # past the bytes read, with no index
    padded = [dict(r, user="x" * 2000) for r in recs]
    lines = [orjson.dumps(r) + b"\n" for r in [header, *padded * (300 // len(padded) + 1)]]
    big.write_bytes(b"".join(lines))
    assert big.stat().st_size > (1 << 18)
    app = app_for(start_mode="history")
    async with app.run_test(size=SIZE) as pilot:
        await screen_after(pilot, HistoryScreen, "f3")
        picker = await screen_after(pilot, RunPicker, "o")
        options = picker.query_one("#picker-list", OptionList)
        await wait_for(pilot, lambda: options.option_count == 2)
        texts = {str(options.get_option_at_index(i).prompt).split(" ")[0]:
                 str(options.get_option_at_index(i).prompt) for i in range(2)}  # fmt: skip
        # the path box has the focus: typing goes there, never opens a listed file
        assert isinstance(picker.focused, Input) and picker.focused.id == "picker-path"
    assert f"{len(recs)} attempts" in texts["small.jsonl"]
    assert texts["small.jsonl"].split("\n")[1].strip().startswith("sim-eager (simulated)")
    assert "attempts unknown until opened" in texts["big.jsonl"] and "~" not in texts["big.jsonl"]
    assert "sim-eager, … (models of the part read)" in texts["big.jsonl"]
    assert "sim-careful" not in texts["big.jsonl"] + texts["small.jsonl"]
