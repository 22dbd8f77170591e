"""The footer relabels its keys in place when only their labels change (a run's ctrl+g
swapped for its cancel key): what it shows is what a footer built afresh shows."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets._footer import FooterKey

from toolstand.tui.widgets.footer import Footer

BAR = Binding.Group("Case/run/mode")


class Keys(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+g", "run", "Run", tooltip="Run this case live"),
        Binding("escape", "cancel", "Cancel the turn on its way"),
        Binding("c", "choose('case')", "case", group=BAR),
        Binding("r", "choose('run')", "run", group=BAR),
        Binding("f1", "help", "Help"),
    ]

    def __init__(self, busy: bool) -> None:
        super().__init__()
        self.busy = busy

    def compose(self) -> ComposeResult:
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("run", "cancel"):
            return self.busy == (action == "cancel")
        return True


class KeysApp(App[None]):
    def __init__(self, busy: bool) -> None:
        super().__init__()
        self.busy = busy

    def on_mount(self) -> None:
        self.push_screen(Keys(self.busy))


def shown(app: App[Any]) -> list[tuple[str, str, str, str, object, int, int]]:
    return [
        (k.key, k.key_display, k.description, k.action, k.tooltip, k.region.x, k.region.width)
        for k in app.screen.query_one(Footer).query(FooterKey)
    ]


async def laid_out(pilot: Pilot[None], description: str) -> None:
    footer = pilot.app.screen.query_one(Footer)
    for _ in range(50):
        await pilot.pause()
        keys = list(footer.query(FooterKey))
        if any(k.description == description for k in keys) and all(k.region.width for k in keys):
            return
    raise AssertionError(f"the footer never showed {description}")


async def test_the_keys_swapped_show_as_a_footer_built_afresh_does() -> None:
    fresh = KeysApp(busy=True)
    async with fresh.run_test(size=(80, 24)) as pilot:
        await laid_out(pilot, "Cancel the turn on its way")
        expected = shown(fresh)
    app = KeysApp(busy=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await laid_out(pilot, "Run")
        before = list(app.screen.query_one(Footer).query(FooterKey))
        screen = app.screen
        assert isinstance(screen, Keys)
        screen.busy = True
        screen.refresh_bindings()
        await laid_out(pilot, "Cancel the turn on its way")
        assert shown(app) == expected
        # relabelled, not rebuilt
        assert list(app.screen.query_one(Footer).query(FooterKey)) == before
        screen.busy = False
        screen.refresh_bindings()
        await laid_out(pilot, "Run")
        assert [k[2] for k in shown(app)][:2] == ["Run", ""]


async def test_a_relabel_lands_in_the_frame_that_changed_the_keys() -> None:
    # Textual's footer recomposes after the next refresh: a run's panels were drawn
    # with the old keys, and the screen drawn once more for the new label
    app = KeysApp(busy=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await laid_out(pilot, "Run")
        screen = app.screen
        assert isinstance(screen, Keys)
        footer = screen.query_one(Footer)
        screen.busy = True
        screen.refresh_bindings()
        handled = asyncio.Event()
        footer.call_later(handled.set)  # after the footer has taken the signal
        await handled.wait()
        keys = footer.query(FooterKey)
        assert [k.description for k in keys][:2] == ["Cancel the turn on its way", ""]
