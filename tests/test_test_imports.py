"""Test modules share helpers through ``tests/support/`` (and fixtures through conftest),
never by importing one another: a test module that imports another ties the two
together (its tests' module-level setup runs again, a move breaks the other) and makes
one file's helpers quietly depend on another file's edits."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = TESTS / "support"


def suite_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__snapshots__" not in p.parts)


def local_names() -> set[str]:
    """Every top-level name an import could reach inside tests/ (``record_factory``,
    ``simwire``, ``reliability``): pytest puts tests/ folders on sys.path."""
    names = {p.stem for p in suite_files()}
    return names | {p.parent.name for p in suite_files()} | {"tests"}


def shown(path: Path) -> str:
    return str(path.relative_to(TESTS)) if path.is_relative_to(TESTS) else str(path)


def wrong_imports(text: str, path: Path, local: set[str]) -> list[str]:
    """The imports in ``text`` (the file ``path``) that reach a tests/ module other than
    tests.support and its modules."""
    found = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            target = base.joinpath(*(node.module or "").split("."))
            if not target.resolve().is_relative_to(SUPPORT):
                found.append(f"{shown(path)}:{node.lineno}: from {'.' * node.level}{node.module}")
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name == "tests.support" or name.startswith("tests.support."):
                continue
            if name.split(".")[0] in local:
                found.append(f"{shown(path)}:{node.lineno}: import {name}")
    return found


def test_no_test_module_imports_another() -> None:
    files, local = suite_files(), local_names()
    assert len(files) > 50  # the walk saw the suite
    wrong = [w for p in files for w in wrong_imports(p.read_text(encoding="utf-8"), p, local)]
    assert wrong == [], "import these from tests/support/ instead:\n" + "\n".join(wrong)


def test_the_check_sees_each_way_of_importing_a_test_module() -> None:
    local = local_names()
    where = TESTS / "tui" / "test_probe.py"  # only its place matters: nothing is written
    cases = {
        "from .conftest import SIZE": True,
        "from .test_history import write_history": True,
        "from . import test_history": True,
        "from tests.tui.test_history import write_history": True,
        "from tests.conftest import ROOT": True,
        "import simwire": True,
        "from reliability import support": True,
        "import test_metrics as tm": True,
        "from tests.support.tui import SIZE": False,
        "from ..support.tui import SIZE": False,
        "from toolstand.sim import SimServer": False,
        "import orjson": False,
    }
    for source, wrong in cases.items():
        assert bool(wrong_imports(source, where, local)) is wrong, source
