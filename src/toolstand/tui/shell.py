"""The state every screen shares, as reactives on the app, below the screens.

Screens type ``self.app`` as this class and watch its reactives; the app module above
(``tui/app.py``) adds the modes and the handlers of the messages in ``tui/messages``, so
no screen imports the app that imports it.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.dom import DOMNode
from textual.reactive import reactive

from toolstand.tui.model.project import Project
from toolstand.tui.model.verdicts import LastVerdict, Verdicts
from toolstand.util.problems import Problem


class ToolstandShell(App[int]):
    """The shared state: the project, the case in view, the history open, the verdicts."""

    selected_case_id: reactive[str | None] = reactive(None, init=False)
    history_path: reactive[str | None] = reactive(None, init=False)  # History's and Report's
    unsaved: reactive[str | None] = reactive(None, init=False)  # what Cases would lose
    # bumped on every change of ``verdicts`` (one object, updated in place)
    verdicts_version: reactive[int] = reactive(0, init=False)
    # a History row re-judged: (row, the record with the new judgement)
    rejudged: reactive[tuple[int, dict[str, Any]] | None] = reactive(None, init=False)

    def __init__(self, project: Project) -> None:
        super().__init__()
        self.project = project
        self.verdicts = Verdicts()
        self.remapped: dict[str, str] = {}  # the keymap's {binding id: keys}, for the help
        # what the contract's meta-schema check, left for after the first frame, found:
        # the app quits and ``run_app`` raises them as ``load_project`` would have
        self.contract_problems: list[Problem] = []

    def update_styles(self, node: DOMNode, animate: bool = True) -> None:
        """Restyle ``node`` and what is under it, only once it is in the app's DOM.

        A widget built with ``compact=True`` (or whose reactives toggle a class in its
        constructor) asks for a restyle before it is mounted; Textual then styles it and
        its subtree without the ancestors its rules match on, and styles it again when
        it is mounted (``App._register`` applies the stylesheet to every new widget).
        The first pass was about a tenth of the Cases screen's start. A node linked to
        the app (mounted, or a loading indicator over one) is restyled as before."""
        if node is self or _linked(node):
            super().update_styles(node, animate)

    def check_contract(self) -> bool:
        """Whether the contract passes the meta-schema check ``load_project`` left out
        (jsonschema's import and check would hold the first paint back), checked on the
        first call: after the first frame, the first of the Cases form's first check of
        its case, the screens built ahead (``_build_modes``) and a key (``on_event``).
        A contract it refuses quits the app."""
        if self.project.unchecked_contract is not None:  # checked once: none after
            self.contract_problems = self.project.contract_problems()
            if self.contract_problems:
                self.exit(return_code=2)
        return not self.contract_problems

    def record_verdict(self, case_id: str, verdict: LastVerdict) -> None:
        """A live attempt just ended: its verdict is now the case's last known one."""
        self.verdicts.add(case_id, verdict)
        self.verdicts_version += 1

    def take_verdicts(self, found: Verdicts) -> None:
        """The scan of the runs folder found these (this session's live ones are newer)."""
        if not found.by_case:  # no run yet: nothing to re-list the cases for
            return
        self.verdicts = self.verdicts.over(found)
        self.verdicts_version += 1


def _linked(node: DOMNode) -> bool:
    """Whether ``node``'s parents reach the app (a screen is linked once installed)."""
    parent = node._parent
    while parent is not None:
        if parent.is_dom_root:
            return True
        parent = parent._parent
    return False
