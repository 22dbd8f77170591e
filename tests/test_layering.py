"""The core never imports Textual: the CLI runner path stays fast and headless."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any, ClassVar


def probe(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter (nothing imported before it)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


CHECK = (
    "import toolstand.cli, toolstand.run.runner, toolstand.attempt.arms, toolstand.judge.verdict, "
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


def _importlinter() -> dict[str, Any]:
    root = Path(__file__).resolve().parents[1]
    config: dict[str, Any] = tomllib.loads((root / "pyproject.toml").read_text())
    return config["tool"]["importlinter"]


def _top_level() -> set[str]:
    """Every top-level module and package of toolstand, by name."""
    package = Path(__file__).resolve().parents[1] / "src" / "toolstand"
    return {p.stem for p in package.glob("*.py")} | {
        p.parent.name for p in package.glob("*/__init__.py")
    }


def test_every_core_module_is_under_the_import_contract() -> None:
    # a new top-level module joins the core contract, or the contract would not see it
    contracts = _importlinter()["contracts"]
    core = next(c for c in contracts if "toolstand.tui" in c.get("forbidden_modules", []))
    listed = {m.removeprefix("toolstand.") for m in core["source_modules"]}
    outside_core = {"__init__", "__main__", "cli", "cli_parser", "tui", "sim"}
    assert _top_level() - outside_core == listed


def test_every_package_stands_in_one_layer() -> None:
    # a package outside the layers could import anything and bring a circle back
    layers = next(c for c in _importlinter()["contracts"] if c["type"] == "layers")
    assert layers["containers"] == ["toolstand"]
    named = [m.strip() for layer in layers["layers"] for m in re.split(r"[|:]", layer)]
    assert len(named) == len(set(named)), "a package stands in two layers"
    assert set(named) == _top_level() - {"__init__"}


def test_no_import_circle_outside_the_tui() -> None:
    # the layers keep packages apart; this keeps the modules of one package acyclic too
    import grimp

    graph = grimp.build_graph("toolstand")
    circles = [
        sorted(c)
        for c in _strongly_connected(graph)
        if len(c) > 1 and not all(m.startswith("toolstand.tui.") for m in c)
    ]
    assert circles == []


def _strongly_connected(graph: Any) -> list[set[str]]:
    """Tarjan's components of toolstand's own import graph, without recursion."""
    edges = {
        m: [w for w in graph.find_modules_directly_imported_by(m) if w.startswith("toolstand")]
        for m in graph.modules
        if m.startswith("toolstand")
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[set[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.add(x)
                        if x == v:
                            break
                    out.append(comp)
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on.add(w)
                work.append((w, iter(edges.get(w, []))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


def test_the_circle_check_can_fail() -> None:
    class Graph:
        modules: ClassVar = {"toolstand.a", "toolstand.b", "toolstand.c"}

        @staticmethod
        def find_modules_directly_imported_by(m: str) -> set[str]:
            return {"toolstand.a": {"toolstand.b"}, "toolstand.b": {"toolstand.a"}}.get(m, set())

    comps = [c for c in _strongly_connected(Graph()) if len(c) > 1]
    assert comps == [{"toolstand.a", "toolstand.b"}]


def test_every_module_imports_on_its_own() -> None:
    # an import cycle hides when another module happens to be imported first; each
    # module is imported from the state a fresh interpreter reaches (support/fresh_imports)
    code = (Path(__file__).parent / "support" / "fresh_imports.py").read_text()
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
