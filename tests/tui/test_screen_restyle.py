"""Switching screens keeps the widgets' styles unless what they depend on changed (issue
30): no full restyle on a first visit (each widget was styled as it mounted) nor on a
return after other screens added their widget classes' scoped CSS."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.tui import SIZE, wait_for
from toolstand.tui.app import ToolstandApp
from toolstand.tui.screens import base
from toolstand.tui.screens.base import ToolstandScreen

AppFor = Callable[..., ToolstandApp]


@pytest.fixture
def restyled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The screens restyled whole (update_node_styles), by class name, in order."""
    seen: list[str] = []
    original = ToolstandScreen.update_node_styles

    def spy(self: ToolstandScreen, animate: bool = True) -> None:
        seen.append(type(self).__name__)
        original(self, animate)

    monkeypatch.setattr(ToolstandScreen, "update_node_styles", spy)
    return seen


async def test_switching_screens_restyles_none_of_them(
    app_for: AppFor, restyled: list[str]
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        for key, name in [
            ("f2", "RunScreen"),
            ("f3", "HistoryScreen"),
            ("f4", "ReportScreen"),
            ("f1", "CasesScreen"),
            ("f2", "RunScreen"),
        ]:
            await pilot.press(key)
            await wait_for(pilot, lambda: type(app.screen).__name__ == name)  # noqa: B023
        await pilot.pause()
    assert restyled == []


async def test_only_a_source_that_can_reach_styled_widgets_counts(app_for: AppFor) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen: Any = app.screen
        before = base._style_inputs(screen)
        app.stylesheet.add_source(
            "Unmounted { color: red; }",
            read_from=("nowhere.py", "Unmounted.DEFAULT_CSS"),
            is_default_css=True,
            scope="Unmounted",
        )
        assert base._style_inputs(screen) == before
        app.stylesheet.add_source("Label { color: red; }", read_from=("user.tcss", ""))
        assert base._style_inputs(screen) != before


async def test_a_theme_changed_elsewhere_restyles_the_screen_on_return(
    app_for: AppFor, restyled: list[str]
) -> None:
    """The skip must not keep stale colours: a theme picked on Cases restyles Run when
    the user comes back to it (what its styles depend on changed)."""
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        for key, name in [("f2", "RunScreen"), ("f1", "CasesScreen")]:
            await pilot.press(key)
            await wait_for(pilot, lambda: type(app.screen).__name__ == name)  # noqa: B023
        # another dark theme: the app's classes stay as they were, only the theme moves
        app.theme = "nord" if app.theme != "nord" else "dracula"
        await pilot.pause()
        restyled.clear()
        await pilot.press("f2")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "RunScreen")
        await pilot.pause()
    assert "RunScreen" in restyled
