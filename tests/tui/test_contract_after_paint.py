"""The contract's meta-schema check comes after the TUI's first frame (tui/model/project.py):
jsonschema is neither imported nor run on the way to it, and what the check finds still
ends the TUI with the problems ``load_project`` raised before, on stderr, exit code 2.

The check runs after the first frame, at the first of: the Cases form's first check of
its case (built FORM_AFTER_S after that frame), the screens built ahead, a key. A key
pressed at once reaches its screen over a sound contract, and none over a broken one.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.tui import SIZE, shown
from toolstand import cli
from toolstand.spec.contract import load_contract
from toolstand.tui import app as tui_app
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens.cases import CasesScreen
from toolstand.tui.screens.run import RunScreen
from toolstand.tui.widgets import case_form
from toolstand.tui.widgets.case_form import CaseForm
from toolstand.util.problems import LoadError

AppFor = Callable[..., ToolstandApp]
CONTRACT = Path("contracts") / "delivery_tools.json"


def break_pattern(project: Path) -> list[str]:
    """get_order's id pattern made an unreadable regex (only jsonschema's meta-schema
    check refuses it); the problems ``load_contract`` names for it, as printed."""
    path = project / CONTRACT
    data = orjson.loads(path.read_bytes())
    data["tools"][0]["parameters"]["properties"]["order_id"]["pattern"] = "^ORD-([0-9]$"
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    with pytest.raises(LoadError) as err:
        load_contract(path)
    return [str(p) for p in err.value.problems]


@pytest.fixture
def no_frame_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """What runs the check after the first frame never comes (the form's build, the
    screens built ahead): only a key runs it."""
    monkeypatch.setattr(CaseForm, "BUILT_LATER", True)
    monkeypatch.setattr(case_form, "FORM_AFTER_S", 3600.0)
    monkeypatch.setattr(tui_app, "FIRST_FRAME_S", 3600.0)


PROBE = """
import json, sys
from pathlib import Path
import toolstand.tui.app
imported = sorted(m for m in sys.modules if m.split(".")[0] in ("jsonschema", "referencing"))
app = toolstand.tui.app.make_app(root=Path({root!r}))
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("jsonschema", "referencing"))
problems = app.project.contract_problems()
after = any(m.split(".")[0] == "jsonschema" for m in sys.modules)
print(json.dumps([imported, loaded, [str(p) for p in problems], after]))
"""


def test_the_tui_imports_and_loads_its_project_without_jsonschema(project: Path) -> None:
    code = PROBE.format(root=str(project))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported, loaded, problems, after = orjson.loads(out.stdout)
    assert (imported, loaded, problems) == ([], [], [])
    # the deferred check is jsonschema's (the delivery contract's patterns need it)
    assert after is True


async def test_a_contract_the_check_refuses_ends_the_tui_with_its_problems(
    app_for: AppFor, project: Path
) -> None:
    printed = break_pattern(project)
    app = app_for()  # the load leaves the meta-schema check for after the first frame
    assert app.project.unchecked_contract is not None
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, lambda: not app.is_running or app.return_code == 2)
    assert app.return_code == 2
    assert [str(p) for p in app.contract_problems] == printed
    assert "not a valid Draft 2020-12 schema" in printed[0]


async def test_a_sound_contract_is_checked_once_and_the_app_goes_on(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, lambda: app.project.unchecked_contract is None)
        assert app.is_running and app.contract_problems == []
        await pilot.press("f2")
        await shown(pilot, lambda: isinstance(app.screen, RunScreen))


async def test_a_key_pressed_before_the_check_runs_it_and_then_reaches_its_screen(
    app_for: AppFor, no_frame_check: None
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, lambda: isinstance(app.screen, CasesScreen))
        assert app.project.unchecked_contract is not None  # no frame checked it
        await pilot.press("f2")
        await shown(pilot, lambda: isinstance(app.screen, RunScreen))
        assert app.project.unchecked_contract is None and app.contract_problems == []


async def test_a_key_pressed_before_the_check_of_a_broken_contract_reaches_no_screen(
    app_for: AppFor, project: Path, no_frame_check: None
) -> None:
    printed = break_pattern(project)
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await shown(pilot, lambda: isinstance(app.screen, CasesScreen))
        assert app.is_running  # no frame checked it
        await pilot.press("f2")
        await shown(pilot, lambda: app.return_code == 2)
        assert not isinstance(app.screen, RunScreen)
    assert [str(p) for p in app.contract_problems] == printed


def test_the_tui_command_prints_the_problems_and_exits_2(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the terminal swapped for a headless one: the app starts, draws, checks, quits; the
    # form built after the first frame, as outside the tests (its first check runs it)
    monkeypatch.setattr(CaseForm, "BUILT_LATER", True)
    printed = break_pattern(project)
    run = ToolstandApp.run

    def headless(self: ToolstandApp, **kw: Any) -> Any:
        return run(self, headless=True, size=SIZE)

    monkeypatch.setattr(ToolstandApp, "run", headless)
    monkeypatch.chdir(project)
    assert cli.main(["tui"]) == 2
    assert capsys.readouterr().err.splitlines() == printed
