"""The shell's restyles: none for a widget not yet in the app's DOM, and a widget given a
class before it is mounted is styled by it once mounted, as one built with it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.dom import DOMNode
from textual.widgets import Label

from tests.support.tui import SIZE
from toolstand.tui.app import ToolstandApp

AppFor = Callable[..., ToolstandApp]


async def test_a_class_added_before_mounting_styles_the_widget_once_mounted(
    app_for: AppFor, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_for()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        styled: list[DOMNode] = []
        apply = app.stylesheet.apply

        def counted(node: DOMNode, *args: Any, **kwargs: Any) -> None:
            styled.append(node)
            apply(node, *args, **kwargs)

        monkeypatch.setattr(app.stylesheet, "apply", counted)
        later = Label("later")
        later.add_class("field-error")  # as compact=True does in a constructor
        later.set_class(True, "-invalid")
        assert later not in styled  # nothing to style it against yet
        built = Label("built", classes="field-error -invalid")
        await app.screen.mount(later, built)
        await pilot.pause()
        assert styled.count(later) == 1  # when it was mounted
        assert later.styles.color == built.styles.color != Label("x").styles.color
        assert later.display is built.display is False  # .field-error's display: none
        later.remove_class("field-error")  # in the DOM: restyled at once, as before
        assert later.display is True
        assert styled.count(later) == 2
