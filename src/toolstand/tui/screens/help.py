"""The help screen on ``?``: the current screen's keys by task, then the three walkthroughs.

It reads the keys from the screen it was opened over (``active_bindings``, so the keymap's
remaps and the focused widget's own keys are in) and the walkthroughs' keys from every
screen's BINDINGS; what it says about them is helpdoc's.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from toolstand.tui.helpdoc import STORIES, KeyLine, group_keys, story_steps
from toolstand.tui.widgets.footer import Footer
from toolstand.util.printable import visible

if TYPE_CHECKING:
    from textual.app import App

KEY_WIDTH = 14


def _own_actions(node: object) -> set[str]:
    """The actions bound by our own classes of ``node``, not by Textual's (a DataTable's
    cursor keys, a TextArea's many): a screen's keys, not every widget's."""
    actions: set[str] = set()
    for cls in type(node).__mro__:
        if cls.__module__.startswith("toolstand."):
            for b in cls.__dict__.get("BINDINGS", ()):
                actions.add(b.action if isinstance(b, Binding) else b[1])
    return actions


def screen_keys(screen: Screen[object]) -> list[tuple[str, list[KeyLine]]]:
    """The keys of ``screen`` as they stand (its focus, the keymap), grouped by task.

    Read from Textual's binding chain rather than ``active_bindings``, which leaves out
    what ``check_action`` disables for now: "Send turn 2" is a key of the Run screen
    before turn 1 ran too.
    """
    app = screen.app
    found: list[tuple[Binding, bool]] = []
    own: dict[int, set[str]] = {}
    for node, bindings in screen._modal_binding_chain:
        ours = node is app or node is screen
        for _key, b in bindings:
            if b.system or not (ours or b.action in own.setdefault(id(node), _own_actions(node))):
                continue
            found.append((b, node is app))
    # a keymap file's keys are outside text: spelled, never sent raw to the terminal
    return group_keys(found, lambda b: visible(app.get_key_display(b)))


def all_bindings(app_type: type[App[Any]]) -> Iterator[Binding]:
    """Every binding of the app and of every screen it can show, for the walkthroughs."""
    from toolstand.tui.registry import SCREENS
    from toolstand.tui.screens.attempt import AttemptScreen
    from toolstand.tui.widgets.attempt_list import AttemptList

    owners: list[list[BindingType]] = [app_type.BINDINGS, AttemptScreen.BINDINGS]
    owners.append(AttemptList.BINDINGS)
    for entry in SCREENS:
        try:
            owners.append(getattr(importlib.import_module(entry.module), entry.cls).BINDINGS)
        except (ModuleNotFoundError, AttributeError):
            continue  # a placeholder screen has no keys
    for bindings in owners:
        yield from (b for b in bindings if isinstance(b, Binding))


def key_finder(app: App[object], keymap: dict[str, str]) -> dict[str, str]:
    """{binding id: its first key as displayed}, remaps included."""
    out: dict[str, str] = {}
    for b in all_bindings(type(app)):
        if b.id and b.id not in out:
            key = keymap.get(b.id, b.key).split(",")[0].strip()
            out[b.id] = visible(app.get_key_display(Binding(key, b.action)))
    return out


class HelpScreen(Screen[None]):
    """Help for the screen below it; Esc (or ? or q) closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close help", id="help.close"),
    ]
    AUTO_FOCUS = "#help-body"

    def __init__(self, over: Screen[object], keymap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.over_title = type(over).__name__.removesuffix("Screen")
        self.groups = screen_keys(over)
        self.keymap = keymap or {}

    def compose(self) -> ComposeResult:
        yield Static(
            Content.assemble(
                ("Help", "bold"),
                f" · the {self.over_title} screen · ↓ PgDn: the walkthroughs · Esc closes",
            ),
            id="help-title",
        )
        with VerticalScroll(id="help-body"):
            yield Static(self._keys(), id="help-keys")
            yield Static(Content.styled("Walkthroughs", "bold $accent"), classes="help-head")
            keys = key_finder(self.app, self.keymap)
            for n, story in enumerate(STORIES, 1):
                yield Static(Content.styled(f"{n}. {story.title}", "bold"), classes="story")
                for step in story_steps(story, lambda i: keys.get(i, f"({i}: unbound)")):
                    yield Static(Content(f"· {step}"), classes="step")
        yield Footer()

    def _keys(self) -> Content:
        parts: list[Content | str | tuple[str, str]] = []
        for task, lines in self.groups:
            parts.append((f"{task}\n", "bold $accent"))
            for line in lines:
                parts.append((f"  {line.keys:<{KEY_WIDTH}}", "bold"))
                parts.append(Content(f" {line.what}\n"))
        return Content.assemble(*parts).rstrip()

    def action_close(self) -> None:
        self.dismiss(None)
