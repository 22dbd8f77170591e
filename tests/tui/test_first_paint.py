"""The Cases screen's first paint imports only what drawing Cases needs.

Every module imported before the list shows is start-up time a user waits through (and,
with no bytecode cache, compiles): the other screens, the provider adapters, the
simulator, the HTTP stack, the modals and Textual's Markdown widget (the help panel's)
come later, when they are first used. Checked in a fresh interpreter, so nothing a test
imported before counts.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
from textual.widgets import DataTable

from toolstand.tui.app import ToolstandApp

# imported by the app only after its first paint, or on first use
LATER = (
    "toolstand.tui.screens.run",
    "toolstand.tui.screens.history",
    "toolstand.tui.screens.report",
    "toolstand.tui.screens.modals",
    "toolstand.tui.model.live",
    "toolstand.adapters",
    "toolstand.sim",
    "toolstand.run",
    "toolstand.reporting",
    "httpx",
    "markdown_it",
)

PROBE = """
import asyncio, json, sys
from pathlib import Path
from toolstand.tui.app import ToolstandApp, make_app

# the warm-up imports the Run screen's modules on purpose once the screen is drawn, and
# the other screens are built 0.25 s after it (on a busy machine, inside the pauses
# below); the question here is what the first paint itself needed
ToolstandApp._warm_up = lambda self: None  # type: ignore[method-assign]
ToolstandApp.BUILT_AHEAD = ()
LATER = {later!r}


def loaded() -> list[str]:
    # a None entry is an import refused, not made (toolstand/__init__.py: httpx._main)
    return sorted(
        m for m, module in sys.modules.items()
        if module is not None and any(m == n or m.startswith(n + ".") for n in LATER)
    )


async def main() -> None:
    app = make_app(root=Path({root!r}))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert type(app.screen).__name__ == "CasesScreen"
        assert app.screen.query_one("#case-table").row_count
        print(json.dumps(loaded()))
        await pilot.press("f2")  # the Run screen, imported when first shown
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert type(app.screen).__name__ == "RunScreen"
        print(json.dumps(loaded()))


asyncio.run(main())
"""


def probe(root: Path) -> list[list[str]]:
    code = PROBE.format(later=LATER, root=str(root))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return [orjson.loads(line) for line in out.splitlines()]


def test_the_cases_screen_paints_without_the_other_screens_adapters_or_http(
    project: Path,
) -> None:
    at_first_paint, after_f2 = probe(project)
    assert at_first_paint == []
    # the probe sees a module once it is imported, so the empty list above means something
    assert "toolstand.tui.screens.run" in after_f2


async def test_a_runs_folder_with_no_verdicts_does_not_re_list_the_cases(
    app_for: Callable[..., ToolstandApp],
) -> None:
    # each re-list rebuilds every row (a BFCL file: 240 of them) before the first paint
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.verdicts_version == 0
        assert app.screen.query_one("#case-table", DataTable).row_count


async def test_a_project_with_one_case_file_has_no_file_chooser_to_build(
    app_for: Callable[..., ToolstandApp],
) -> None:
    # a Select and its overlay, ~10 ms of the first paint, never shown with one
    # file (test_bfcl_open.py: a config with several has it, and uses it)
    app = app_for()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert len(app.project.case_files) == 1
        assert not app.screen.query("#case-file")
        assert app.screen.query_one("#case-table", DataTable).row_count


COLLECTOR_PROBE = """
import asyncio, gc, json
from pathlib import Path
from toolstand.tui.app import ToolstandApp, make_app

ToolstandApp.BUILT_AHEAD = ()  # run_test would tear a screen down mid-build
held_at_import = not gc.isenabled()


async def main() -> None:
    app = make_app(root=Path({root!r}))
    async with app.run_test(size=(80, 24)) as pilot:
        held_at_mount = not gc.isenabled()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.query_one("#case-table").row_count
        print(json.dumps([held_at_import, held_at_mount, gc.isenabled()]))


asyncio.run(main())
"""


def test_the_collector_waits_through_the_start_and_runs_once_the_screen_is_drawn(
    project: Path,
) -> None:
    # the start's collections walk its 110k objects again and again (tui/startup.py);
    # a collector left off would let every cycle of a long session pile up
    code = COLLECTOR_PROBE.format(root=str(project))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout) == [True, True, True]
