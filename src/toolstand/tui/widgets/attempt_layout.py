"""Which columns the attempt list shows at a width, and how a cell fits its column (no
Textual): one line per attempt where the run, the case id, the mode, the attempt number,
the repair arm and the error codes fit, else two (the filter panel open at 80 columns):
the run and the case above, the mode, the number, the arm, the verdict and the codes
below.
"""

from __future__ import annotations

from toolstand.history import HistoryIndex
from toolstand.tui.fit import cut_middle
from toolstand.tui.model.verdicts import has_repairs
from toolstand.tui.widgets.columns import Column, pick_layout
from toolstand.util.printable import visible

Line = list[tuple[str, int]]  # the columns of one line of a row, and their widths

# (title, least width): the content columns are sized to their content above that;
# "provider/model" (one cell of both) stands in for the two where they do not both fit
COLUMNS: tuple[tuple[str, int | None], ...] = (
    ("time", 14),
    ("provider", 8),
    ("model", 10),
    ("provider/model", None),
    ("case", 12),
    ("mode", 8),
    ("#", 2),
    ("feedback", 8),
    ("verdict", 7),
    ("errors", 10),
    ("network", 7),
)
# the repair arm ("feedback") is a column only where the history has arms: it tells the
# arms' rows of one attempt apart, and is never cut (allowed / allowed_prose)
OPTIONAL = ("feedback",)
# what gives way, in turn, when the width is short: the provider's own column (it joins
# the model's: which run an attempt is of stays on the row, the simulator's "sim" costs
# four cells, not a title's nine), the date, the network time, the time, the attempt
# number, the mode; the verdict (its title whole) and the errors stay (80x24 with the filter panel open)
_FOLDED: dict[str, int | None] = {"provider": None, "model": None, "provider/model": 10}
_NO_TIME: dict[str, int | None] = {**_FOLDED, "network": None, "time": None}
FALLBACKS: tuple[dict[str, int | None], ...] = (
    {},
    _FOLDED,
    {**_FOLDED, "time": 8},
    {**_FOLDED, "time": 8, "network": None},
    _NO_TIME,
    {**_NO_TIME, "#": None},
    {**_NO_TIME, "#": None, "mode": None},
    {**_NO_TIME, "#": None, "mode": None, "provider/model": 8, "case": 8, "errors": 6},
)
CUT_MIDDLE = ("case", "model", "provider", "provider/model")  # ids: their ends tell them apart
# raised to their content in turn
CONTENT = ("case", "model", "provider/model", "provider", "mode", "feedback", "errors")
ERRORS_GOAL = 15  # a code such as unexpected_call whole: a list may be longer still
# two lines a row (where one cannot hold the case, the codes and the run): the run, the
# case and the time; then, indented, the rest
INDENT = 2
LINE_ONE: tuple[tuple[str, int | None], ...] = (("provider/model", 10), ("case", 12), ("time", 14))
TOP_FALLBACKS: tuple[dict[str, int | None], ...] = ({}, {"time": 8}, {"time": None})
# the second line's columns, with their least widths of the one-line layout
LINE_TWO = tuple(
    c for c in COLUMNS if c[0] in ("mode", "#", "feedback", "verdict", "errors", "network")
)
BOTTOM_FALLBACKS: tuple[dict[str, int | None], ...] = (
    {},
    {"network": None},
    {"network": None, "#": None},
)
VERDICT_WORDS = {"pass": "pass", "fail": "FAIL", "error": "err"}
# turn 1's verdict (the attempt's), then how its repair turns ended, in lower case after
# an arrow: "FAIL→pass" is a failure that a repair turn fixed, never a pass
REPAIRED = "{verdict}→{repair}"


def layout(width: int, wants: dict[str, int] | None = None) -> list[tuple[str, int]]:
    """The columns shown at ``width`` cells and their widths (one space between), each
    content column (``wants``: its longest value) sized to its content where it fits: the
    fullest set of columns in which the case ids and the error codes are whole, the rest
    to the errors."""
    wants = wants or {}
    raised = _stages(COLUMNS, FALLBACKS, wants)
    goals = {"case": wants.get("case", 0), "errors": _errors_goal(wants)}
    # the run whole too, where the time can give way for it (not the case ids, not the
    # codes): the folded column, or the model's own beside the provider's
    run = {
        **goals,
        "provider/model": wants.get("provider/model", 0),
        "model": wants.get("model", 0),
    }
    for wanted in (run, goals):
        # a space before each column and the mark: one cell each
        widths = pick_layout(width, raised, gap=1, goals=wanted, rest="errors")
        if all(widths[k] >= g for k, g in wanted.items() if k in widths):
            break
    return [(t, widths[t]) for t, _ in COLUMNS if t in widths]


def lines(width: int, wants: dict[str, int] | None = None) -> list[Line]:
    """The lines of each row at ``width``: one (``layout``) where it holds the case ids,
    the error codes (the first ERRORS_GOAL cells) and the run whole; else two, the run,
    the case and the time above, then, indented, the mode, the attempt number, the
    repair arm, the verdict, the codes and the network time."""
    wants = wants or {}
    one = layout(width, wants)
    if _whole(dict(one), wants):
        return [one]
    top = _stages(LINE_ONE, TOP_FALLBACKS, wants)
    run = {"case": wants.get("case", 0), "provider/model": wants.get("provider/model", 0)}
    above = pick_layout(width, top, gap=1, goals=run)
    if any(above.get(k, 0) < g for k, g in run.items()):  # the time goes first
        above = pick_layout(width, top[-1:], gap=1, goals=run)
    bottom = _stages(LINE_TWO, BOTTOM_FALLBACKS, wants)
    room, codes = width - INDENT, wants.get("errors", 0)
    # the network time only beside codes whole; then the codes as wide as they can be
    # with the attempt's number still there (repetitions would read as one), then without
    below = pick_layout(room, bottom[:1], gap=1, goals={"errors": codes}, rest="errors")
    if below.get("errors", 0) < codes:
        goal = {"errors": _errors_goal(wants)}
        below = pick_layout(room, bottom[1:], gap=1, goals=goal, rest="errors")
    return [
        [(t, above[t]) for t, _ in LINE_ONE if t in above],
        [(t, below[t]) for t, _ in LINE_TWO if t in below],
    ]


def _whole(shown: dict[str, int], wants: dict[str, int]) -> bool:
    """Whether a row's one line holds its mode and number, its case, its codes (up to
    the goal) and its run."""
    run = max(shown.get("model", 0), shown.get("provider/model", 0))
    run_want = wants.get("model", 0) if "model" in shown else wants.get("provider/model", 0)
    arm = {"feedback"} & wants.keys()
    return (
        {"mode", "#", *arm} <= shown.keys()  # which mode, repetition, arm: never given up
        and shown.get("case", 0) >= wants.get("case", 0)
        and shown.get("errors", 0) >= _errors_goal(wants)
        and run >= run_want
    )


def _errors_goal(wants: dict[str, int]) -> int:
    return min(ERRORS_GOAL, wants.get("errors", 0))


def _stages(
    columns: tuple[tuple[str, int | None], ...],
    fallbacks: tuple[dict[str, int | None], ...],
    wants: dict[str, int],
) -> list[list[Column]]:
    """One set of columns per fallback (the fullest first), each column sized to its
    content where ``wants`` has it, in the order they are raised to it."""
    stages = []
    for change in fallbacks:
        shown = [
            (t, change.get(t, least)) for t, least in columns if t not in OPTIONAL or t in wants
        ]
        stages.append(
            [
                Column(t, _want(t, wants) if t in wants else int(least), _least(t, least, wants))
                for t, least in shown
                if least is not None
            ]
        )
    return [sorted(stage, key=_raise_order) for stage in stages]


def fit_codes(codes: list[str], width: int) -> str:
    """Error codes in ``width`` cells: all of them; else as many whole as fit and how
    many more ("invalid_arguments +1"); else the first whole and an ellipsis; else cut
    (the attempt's view lists them all)."""
    text = ",".join(codes)
    if len(text) <= width:
        return text
    for n in range(len(codes) - 1, 0, -1):
        head = f"{','.join(codes[:n])} +{len(codes) - n}"
        if len(head) <= width:
            return head
    if len(codes[0]) < width:
        return codes[0] + "…"
    return text[: max(0, width - 1)] + "…" if width else ""


def _want(key: str, wants: dict[str, int]) -> int:
    """A column's width for its content and its title (the folded column's title, which
    depends on the content, is counted in its want)."""
    return wants[key] if key == "provider/model" else max(len(key), wants[key])


def _least(key: str, least: int | None, wants: dict[str, int]) -> int:
    """A column's least width: its own, or for a verdict with its repair's outcome
    beside it, the whole of that ("FAIL→pass" cut would read as a verdict), and the
    repair arm's whole."""
    return max(int(least or 0), wants.get(key, 0) if key in ("verdict", *OPTIONAL) else 0)


def _raise_order(column: Column) -> int:
    return CONTENT.index(column.key) if column.key in CONTENT else len(CONTENT)


def content_widths(ix: HistoryIndex) -> dict[str, int]:
    """The longest value of each content column in ``ix``, from its distinct values."""
    wants = {
        f: max((len(visible(str(v))) for v in ix.facets[f].values), default=0)
        for f in ("case", "model", "provider", "mode")
    }
    # one provider in the file (the simulator's "sim"): the title names it, the cells
    # hold the models alone (title_of): the title's width is counted here
    if one_provider(ix) is not None:
        wants["provider/model"] = max(len("model"), wants["model"])
    else:
        wants["provider/model"] = max(len("provider/model"), wants["provider"] + 1 + wants["model"])
    wants["errors"] = max(
        (len(visible(",".join(map(str, v)))) for v in ix.errors.values), default=0
    )
    if has_repairs(ix):
        wants["verdict"] = len(REPAIRED.format(verdict="FAIL", repair="pass"))
        arms = [visible(str(v)) for v in ix.facets["feedback"].values if v is not None]
        wants["feedback"] = max(len("feedback"), *map(len, arms))
    return wants


def one_provider(ix: HistoryIndex) -> str | None:
    """The provider of every attempt in ``ix``, when there is one only."""
    values = ix.facets["provider"].values
    return visible(str(values[0])) if len(values) == 1 else None


def title_of(ix: HistoryIndex | None, key: str, width: int) -> str:
    """A column's title: the folded provider/model column, with one provider, is the
    models' column, its title naming the provider where it fits."""
    one = None if ix is None or key != "provider/model" else one_provider(ix)
    if one is None:
        return key
    named = f"model ({one})"
    return named if len(named) <= width else "model"


def fit(text: str, width: int, right: bool = False, middle: bool = False) -> str:
    if len(text) > width:
        return cut_middle(text, width) if middle else text[: max(0, width - 1)] + "…"
    return text.rjust(width) if right else text.ljust(width)
