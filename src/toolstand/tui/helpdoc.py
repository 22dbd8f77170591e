"""What the help screen says: a screen's keys grouped by task, and the three walkthroughs.

The keys come from the bindings themselves (with the keymap's remaps), never from a
copied table: this module only says which task a binding id belongs to, and writes the
walkthroughs with ``{binding id}`` where a key goes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual.binding import Binding

EVERYWHERE = "Everywhere"
MORE = "Moving around"

# binding id -> the task it serves; the order here is the order on the help screen
TASKS: dict[str, str] = {
    # Cases
    "cases.new": "Write a case",
    "cases.duplicate": "Write a case",
    "cases.save": "Write a case",
    "cases.revert": "Write a case",
    "cases.delete": "Write a case",
    "cases.run": "Try it live",
    "cases.search": "Find a case",
    "cases.search.slash": "Find a case",
    "cases.list": "Find a case",
    "cases.reload": "Find a case",
    # Run
    "run.bar.case": "Choose what to run",
    "run.bar.target": "Choose what to run",
    "run.bar.mode": "Choose what to run",
    "run.go": "Run turn 1",
    "run.paste": "Run turn 1",
    "run.cancel": "Run turn 1",
    "run.step": "The second turn",
    "run.prev": "The second turn",
    "run.next": "The second turn",
    "run.edit": "The second turn",
    "run.canned": "The second turn",
    "run.again": "The second turn",
    "run.repair": "A repair turn",
    "run.styles": "A repair turn",
    "run.repair_again": "A repair turn",
    "run.headers": "Run turn 1",
    # History (the list and the attempt detail share the attempt keys)
    "history.open_file": "Open and filter",
    "history.failures": "Open and filter",
    "history.time": "Open and filter",
    "history.filters": "Open and filter",
    "history.search": "Open and filter",
    "history.clear": "Open and filter",
    "history.list": "Open and filter",
    "history.open_attempt": "Look at one attempt",
    "attempt.back": "Look at one attempt",
    "attempt.request": "Look at one attempt",
    "attempt.turn": "Look at one attempt",
    "attempt.next": "Look at one attempt",
    "attempt.prev": "Look at one attempt",
    "history.rerun": "Look at one attempt",
    "history.rejudge": "Look at one attempt",
    "history.copy": "Look at one attempt",
    "history.mark": "Compare and promote",
    "history.diff": "Compare and promote",
    "history.promote": "Compare and promote",
    # Report
    "report.open_file": "Read the numbers",
    "report.recompute": "Read the numbers",
    "report.tab_next": "Read the numbers",
    "report.tab_prev": "Read the numbers",
    "report.export_json": "Export",
    "report.export_csv": "Export",
}


@dataclass(frozen=True)
class KeyLine:
    keys: str  # as displayed, e.g. "^g or f5"
    what: str  # the action in words


def words(binding: Binding) -> str:
    """The action in words: the tooltip when it has one, else the footer's short label."""
    return binding.tooltip or binding.description


def task_of(binding: Binding, from_app: bool) -> str:
    if binding.id in TASKS:
        return TASKS[binding.id]
    return EVERYWHERE if from_app or (binding.id or "").startswith("app.") else MORE


def group_keys(
    found: Iterable[tuple[Binding, bool]], display: Callable[[Binding], str]
) -> list[tuple[str, list[KeyLine]]]:
    """(binding, bound on the app) pairs, one per key, as lines grouped by task.

    The keys of one action are joined ("/ or ^f"); an action none of whose bindings has
    words is left out. Tasks come in TASKS' order, then "Everywhere", then the rest.
    """
    keys: dict[tuple[str, str], list[str]] = {}
    said: dict[tuple[str, str], str] = {}
    for binding, from_app in found:
        slot = (task_of(binding, from_app), binding.action)
        shown = display(binding)
        if shown not in keys.setdefault(slot, []):
            keys[slot].append(shown)
        if not said.get(slot):
            said[slot] = words(binding)
    order = [*dict.fromkeys(TASKS.values()), EVERYWHERE, MORE]
    grouped: dict[str, list[KeyLine]] = {}
    for (task, _), shown_keys in keys.items():
        if said[(task, _)]:
            grouped.setdefault(task, []).append(KeyLine(" or ".join(shown_keys), said[(task, _)]))
    return [(task, grouped[task]) for task in order if task in grouped]


@dataclass(frozen=True)
class Story:
    title: str
    steps: tuple[str, ...]  # "{binding id}" is replaced by its key


STORIES: tuple[Story, ...] = (
    Story(
        "Write a new negative case and run it live",
        (
            "{app.cases} opens Cases; {cases.new} starts a new case: pick a template such as"
            " missing_data with the arrows and Enter.",
            "Tab through the fields and fill them in; the status line above the form says"
            " at once what the tool's schema refuses, and the field is marked.",
            "{cases.save} saves the case (the other lines of the file stay byte-identical).",
            "{cases.run} runs it live: the Run screen opens and sends it to the run chosen"
            " there (the first configured one to begin with); the verdict pane says why.",
        ),
    ),
    Story(
        "Debug one adapter on one case; send an edited turn-2 result",
        (
            "{app.run} opens Run; choose the case, the run (provider/model) and the mode"
            " in the bar at the top (Tab, then Enter to open a list).",
            "{run.go} runs turn 1: the request sent, the raw response, the normalized"
            " decision and the verdict side by side; {app.maximize} fills the screen with"
            " the focused pane and back.",
            "For a case with a follow-up (e.g. recovery_not_found) the fake tool result"
            " opens below: edit it ({run.edit} jumps there, F7 selects all of it,"
            " {run.canned} picks a canned problem object), then {run.step} sends turn 2.",
            "{run.prev} and {run.next} step between the turns; once turn 2 is recorded"
            " its results stay open: edit them and {run.again} sends turn 2 again from"
            " the same turn 1 (turn 1 is not asked again; each send is its own attempt).",
            "A call that breaks its schema (e.g. quote_complete on sim-sloppy) opens the"
            " feedback instead: {run.styles} picks its feedback style, {run.repair} sends"
            " the repair turn; the record says the style sent. Once it is recorded the"
            " feedback stays open: pick another style or edit it, and {run.repair_again}"
            " sends the repair turn again from the same turn 1. {run.headers} shows the"
            " URL, the headers and every try of each side.",
        ),
    ),
    Story(
        "Triage yesterday's failures: filter, diff two, promote one",
        (
            "{app.history} opens History; {history.open_file} picks a run file.",
            "{history.time} until it says yesterday, {history.failures} for failures"
            " only; {history.filters} for provider, model, case and error code.",
            "{history.mark} marks one failure; move to another and {history.diff} shows"
            " the two side by side; Enter opens one attempt.",
            "{history.promote} turns the attempt into a new case in Cases;"
            " {cases.save} saves it as a regression case.",
        ),
    ),
)

_SLOT = re.compile(r"\{([a-z0-9_.]+)\}")


def story_steps(story: Story, key_of: Callable[[str], str]) -> list[str]:
    """The story's steps with each ``{binding id}`` replaced by ``key_of(id)``."""
    return [_SLOT.sub(lambda m: key_of(m.group(1)), step) for step in story.steps]


def story_ids() -> set[str]:
    """Every binding id the walkthroughs name (each must exist: a test checks)."""
    return {m.group(1) for story in STORIES for step in story.steps for m in _SLOT.finditer(step)}
