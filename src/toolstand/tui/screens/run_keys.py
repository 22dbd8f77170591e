"""The Run screen's keys, each with its tooltip and id (a keymap remaps them by id)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

# the bar's three lists, each with its own key: the footer shows them as one group
BAR = Binding.Group("Case/run/mode")
BAR_KEYS: tuple[tuple[str, str, str], ...] = (  # key, the Select's id, what it chooses
    ("c", "case", "the case"),
    ("r", "target", "the run (provider/model)"),
    ("m", "mode", "the mode"),
)

RUN_BINDINGS: list[BindingType] = [
    Binding("ctrl+g,f5", "run", "Run", tooltip="Run this case live", id="run.go"),
    Binding(
        "ctrl+t",
        "step",
        "Send turn 2",
        tooltip="Send turn 2 with the edited tool result",
        id="run.step",
    ),
    # the same key once turn 2 is recorded: another turn 2 from the same turn 1
    Binding(
        "ctrl+t",
        "step_again",
        "Send turn 2 again",
        tooltip="Send another turn 2 from the same turn 1 (a new attempt; turn 1 not re-sent)",
        id="run.again",
    ),
    # the same key, in its own words, when what it sends is a repair turn
    Binding(
        "ctrl+t",
        "step_repair",
        "Send repair turn",
        tooltip="Send the edited feedback as the next repair turn",
        id="run.repair",
    ),
    # the same key once a repair attempt is recorded: its repair turn again, from turn 1
    Binding(
        "ctrl+t",
        "step_repair_again",
        "Send repair turn again",
        tooltip="Send repair turn again from the same turn 1 (a new attempt; turn 1 not re-sent)",
        id="run.repair_again",
    ),
    Binding("escape", "cancel", "Cancel", tooltip="Cancel the request in flight", id="run.cancel"),
    Binding(
        "ctrl+o",
        "paste",
        "Paste body",
        tooltip="Judge a pasted raw response body",
        id="run.paste",
    ),
    # priority, as f7's: a body pane (a TextArea) takes f6 to select a line (f7: all), so
    # the headers were out of reach from the very panes they belong to, maximized or not
    Binding(
        "f6",
        "headers",
        "Headers",
        tooltip="Show the URL, headers and tries of the request and response (or the bodies)",
        id="run.headers",
        priority=True,
    ),
    Binding(
        "f7",
        "stream_arm",
        "Stream arm",
        tooltip="Stream the next attempt or not (a run whose config says stream: both)",
        id="run.stream",
        priority=True,  # off (check_action) for a run of one arm: f7 selects all there
    ),
    Binding(
        "left_square_bracket",
        "step_turn(-1)",
        "Previous turn",
        show=False,
        tooltip="Show the previous turn",
        id="run.prev",
    ),
    Binding(
        "right_square_bracket",
        "step_turn(1)",
        "Next turn",
        show=False,
        tooltip="Show the next turn",
        id="run.next",
    ),
    Binding(
        "ctrl+r",
        "edit_result",
        "Edit result",
        show=False,
        tooltip="Edit the fake tool result for turn 2",
        id="run.edit",
    ),
    Binding(
        "ctrl+l",
        "canned",
        "Canned results",
        show=False,
        tooltip="Pick a canned tool result (a success or a problem object)",
        id="run.canned",
    ),
    Binding(
        "ctrl+l",
        "feedback_styles",
        "Feedback styles",
        show=False,
        tooltip="Pick the feedback style of the repair turn (traceback, path_value, allowed…)",
        id="run.styles",
    ),
    # letters: a text field (the results editor) types them, as it does the digits
    *[
        Binding(
            key,
            f"choose('{select}')",
            what.split()[1].capitalize(),
            tooltip=f"Choose {what}: open its list",
            id=f"run.bar.{select}",
            group=BAR,
        )
        for key, select, what in BAR_KEYS
    ],
    # the same keys, out of the footer while a turn-2 key fills it at 80 columns (the
    # screen's check_action enables one set or the other; a keymap moves both)
    *[
        Binding(key, f"choose('{select}', 'quiet')", show=False, id=f"run.bar.{select}")
        for key, select, _what in BAR_KEYS
    ],
]
