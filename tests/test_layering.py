"""The core never imports Textual: the CLI runner path stays fast and headless."""

from __future__ import annotations

import subprocess
import sys

CHECK = (
    "import toolstand.cli, toolstand.runner, toolstand.attempt, toolstand.judge, "
    "toolstand.casefile_edit; import sys; "
    "print(any(m.startswith('textual') for m in sys.modules))"
)


def test_core_imports_no_textual() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "False"


def test_the_check_can_fail() -> None:
    # the same probe sees Textual once the TUI is imported, so the test above means something
    probe = CHECK.replace("toolstand.casefile_edit;", "toolstand.casefile_edit, toolstand.tui.app;")
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "True"


def test_the_tuis_own_model_modules_import_no_textual() -> None:
    # what the screens show is computed without Textual, so it can be tested without it
    probe = (
        "import toolstand.tui.model.draft, toolstand.tui.model.templates, toolstand.tui.model.case_rows, "
        "toolstand.tui.model.verdicts, toolstand.tui.model.live, toolstand.tui.model.project; import sys; "
        "print(any(m.startswith('textual') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
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
    probe = (
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
        "print(len(names)); print('\\n'.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split("\n", 1)
    assert int(out[0]) > 80
    assert out[1].strip() == ""


def test_the_run_path_imports_no_command_line_client_of_httpx() -> None:
    # click is installed beside import-linter and mcp; httpx would then import its CLI
    probe = (
        "import toolstand.cli, toolstand.runner, sys; "
        "print(sorted(m for m in ('rich', 'click', 'pygments') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
