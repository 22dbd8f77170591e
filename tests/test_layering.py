"""The core never imports Textual: the CLI runner path stays fast and headless."""

from __future__ import annotations

import subprocess
import sys


def probe(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter (nothing imported before it)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


CHECK = (
    "import toolstand.cli, toolstand.run.runner, toolstand.attempt.turns, toolstand.judge.verdict, "
    "toolstand.spec.casefile_edit; import sys; "
    "print(any(m.startswith('textual') for m in sys.modules))"
)


def test_core_imports_no_textual() -> None:
    out = probe(CHECK)
    assert out == "False"


def test_the_check_can_fail() -> None:
    # the same probe sees Textual once the TUI is imported, so the test above means something
    code = CHECK.replace(
        "toolstand.spec.casefile_edit;", "toolstand.spec.casefile_edit, toolstand.tui.app;"
    )
    out = probe(code)
    assert out == "True"


def test_the_tuis_own_model_modules_import_no_textual() -> None:
    # what the screens show is computed without Textual, so it can be tested without it
    code = (
        "import toolstand.tui.model.draft, toolstand.tui.model.templates, toolstand.tui.model.case_rows, "
        "toolstand.tui.model.verdicts, toolstand.tui.model.live, toolstand.tui.model.project; import sys; "
        "print(any(m.startswith('textual') for m in sys.modules))"
    )
    out = probe(code)
    assert out == "False"


def test_every_core_module_is_under_the_import_contract() -> None:
    # a new top-level module joins the core contract, or the contract would not see it
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    core = next(c for c in config["contracts"] if "toolstand.tui" in c["forbidden_modules"])
    listed = {m.removeprefix("toolstand.") for m in core["source_modules"]}
    package = root / "src" / "toolstand"
    found = {p.stem for p in package.glob("*.py")} | {
        p.parent.name for p in package.glob("*/__init__.py")
    }
    outside_core = {"__init__", "__main__", "cli", "cli_parser", "tui", "sim"}
    assert found - outside_core == listed


def test_every_module_imports_on_its_own() -> None:
    # an import cycle hides when another module happens to be imported first
    code = (
        "import importlib, pkgutil, sys, toolstand\n"
        "names = [m.name for m in pkgutil.walk_packages(toolstand.__path__, 'toolstand.')"
        "         if not m.name.endswith('__main__')]\n"
        "bad = []\n"
        "for name in names:\n"
        "    for loaded in [m for m in sys.modules if m.startswith('toolstand.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        bad.append(f'{name}: {exc!r}')\n"
        "print(len(names)); print(*bad, sep='\\n')\n"
    )
    count, *bad = probe(code).splitlines()
    assert int(count) > 80
    assert bad == []


def test_the_run_path_imports_no_command_line_client_of_httpx() -> None:
    # click is installed beside import-linter and mcp; httpx would then import its CLI
    code = (
        "import toolstand.cli, toolstand.run.runner, sys; "
        "import importlib.util; assert importlib.util.find_spec('click'), 'no click: proves nothing'; "
        "print(sorted(m for m in ('rich', 'click', 'pygments') if m in sys.modules))"
    )
    out = probe(code)
    assert out == "[]"
