"""The command palette: every screen jump, every binding of the current screen, and the
extra commands a screen offers (``palette_commands``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

Command = tuple[str, str, Callable[[], Any]]  # title, help, callback


class ToolstandCommands(Provider):
    def _commands(self) -> Iterator[Command]:
        from toolstand.tui.registry import SCREENS

        app, screen = self.app, self.screen
        for entry in SCREENS:
            yield (
                f"Go to {entry.title}",
                f"switch to the {entry.title} screen ({entry.key.upper()})",
                partial(app.run_action, f"mode('{entry.mode}')"),
            )
        seen: set[str] = set()
        # active_bindings already carries the keymap's keys and check_action's verdict
        for active in screen.active_bindings.values():
            node, b = active.node, active.binding
            if node not in (screen, app) or not active.enabled or not b.description:
                continue
            if b.system or "focus_" in b.action:  # Tab's own moves are not commands
                continue
            if b.action in seen or b.action == "command_palette":
                continue
            seen.add(b.action)
            yield (b.description, f"{b.action} ({b.key})", partial(node.run_action, b.action))
        extra = getattr(screen, "palette_commands", None)
        if callable(extra):
            yield from extra()

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
