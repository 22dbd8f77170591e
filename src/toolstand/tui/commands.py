"""The command palette: every screen jump, every binding of the current screen, and the
extra commands a screen offers (``palette_commands``), each worded as an action with its
key beside it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from toolstand.tui.helpdoc import words
from toolstand.tui.screens.base import PaletteCommand as Command
from toolstand.tui.screens.base import ToolstandScreen


class ToolstandCommands(Provider):
    def _commands(self) -> Iterator[Command]:
        from toolstand.tui.registry import SCREENS

        app, screen = self.app, self.screen
        for entry in SCREENS:
            yield (
                f"Go to {entry.title}",
                f"{entry.key.upper()} · the {entry.title} screen",
                partial(app.run_action, f"mode('{entry.mode}')"),
            )
        keys: dict[str, list[str]] = {}  # title -> its keys, in binding order
        run: dict[str, Callable[[], Any]] = {}
        # active_bindings already carries the keymap's keys and check_action's verdict
        for active in screen.active_bindings.values():
            node, b = active.node, active.binding
            if node not in (screen, app) or not active.enabled or not words(b):
                continue
            if b.system or "focus_" in b.action:  # Tab's own moves are not commands
                continue
            if b.action == "command_palette" or b.action.startswith("mode("):
                continue  # the jumps are above; the palette is open already
            title = words(b)
            keys.setdefault(title, []).append(app.get_key_display(b))
            run.setdefault(title, partial(node.run_action, b.action))
        for title, shown in keys.items():
            yield (title, " or ".join(dict.fromkeys(shown)), run[title])
        if isinstance(screen, ToolstandScreen):
            yield from (c for c in screen.palette_commands() if c[0] not in keys)

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
