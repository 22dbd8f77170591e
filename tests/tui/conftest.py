"""A private copy of the project's files per test, an app over it, text cursors that
do not blink (a snapshot or a Pilot test must not depend on the blink's phase), and a
fixed clock for the History screens. The helpers that drive the app are in
``tests/support/tui.py``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, TextArea

from tests.support.project_copy import copy_project
from tests.support.tui import settle
from tests.support.tui_history import TODAY
from toolstand.tui.app import ToolstandApp, make_app
from toolstand.tui.screens import history as history_screen
from toolstand.tui.widgets.case_form import CaseForm

ROOT = Path(__file__).resolve().parents[2]
# settle lives in tests/support/tui.py; kept importable from here for the shared repro
# scripts written before it moved (../shared/repro/trust/tui_open_attempts.py)
__all__ = ["settle"]


@pytest.fixture(autouse=True)
def no_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Input and TextArea starts with a steady cursor."""
    for widget in (Input, TextArea):
        monkeypatch.setattr(widget.cursor_blink, "_default", False)


@pytest.fixture(autouse=True)
def built_on_first_visit(monkeypatch: pytest.MonkeyPatch) -> None:
    """No screen is built ahead, out of sight: a test that ends while one is half-built
    would see it torn down mid-mount (``run_test`` shuts the app down at once), and each
    app would pay for three screens it may never show. test_screen_lifecycle.py builds
    them ahead, as the app does."""
    monkeypatch.setattr(ToolstandApp, "BUILT_AHEAD", ())


@pytest.fixture(autouse=True)
def form_built_with_its_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Cases screen's form is composed with the screen, not after its first frame:
    a test reads and fills it as soon as the screen is up. test_form_after_paint.py
    builds it after the first frame, as the app does."""
    monkeypatch.setattr(CaseForm, "BUILT_LATER", False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path)


@pytest.fixture
def app_for(project: Path) -> Callable[..., ToolstandApp]:
    def make(**kw: Any) -> ToolstandApp:
        return make_app(root=project, **kw)

    return make


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC and today is the 28th, so "yesterday" is the 27th."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setattr(history_screen, "today", lambda: TODAY)
    yield
    monkeypatch.undo()
    time.tzset()
