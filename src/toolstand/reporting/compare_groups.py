"""How compare pairs the groups of two reports (no Textual).

A group is a provider × model × mode (and feedback and stream arms) of one run: two runs
that send other requests (api, base URL, options, settings; their ``run_identity``,
spec/identity.py) are never pooled, and may read alike. Groups that read alike pair by
run identity; where one is left on each side (a report older than run identities, or a
gate on a change of options) those two pair, with a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# provider, model, mode, feedback arm, stream arm (None: a report without streaming): how
# a group reads; two runs of other requests (spec/identity.py) can read alike
Look = tuple[str, str, str, str | None, bool | None]
# a Look and what tells its run from another that reads alike (None: nothing need)
Key = tuple[str, str, str, str | None, bool | None, str | None]


def look_of(entry: Mapping[str, Any]) -> Look:
    fb, stream = entry.get("feedback"), entry.get("stream")
    return (
        *(str(entry.get("provider")), str(entry.get("model")), str(entry.get("mode", "auto"))),
        str(fb) if fb is not None else None,
        stream if isinstance(stream, bool) else None,  # the arms are compared apart
    )


Matched = list[tuple[Key, Mapping[str, Any] | None, Mapping[str, Any] | None]]


def match(
    base: Sequence[tuple[Look, Mapping[str, Any]]],
    cur: Sequence[tuple[Look, Mapping[str, Any]]],
    notes: list[str],
) -> Matched:
    """Baseline and current groups paired: those that read alike and share a run identity
    (spec/identity.py), then, where one of each is left, those two (a report older than
    run identities, or a gate on a change of options, URL or settings: a note says so).
    Two runs of other requests are never one group; an unpaired one comes with None."""
    looks: dict[Look, tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]] = {}
    for side, entries in ((1, cur), (0, base)):  # in current's order, as the checks print
        for look, e in entries:
            looks.setdefault(look, ([], []))[side].append(e)
    out: Matched = []
    for look, (bs, cs) in looks.items():
        pairs = []
        for b in list(bs):
            ident = b.get("run_identity")
            c = next((c for c in cs if ident is not None and c.get("run_identity") == ident), None)
            if c is not None:
                pairs.append((b, c))
                bs.remove(b)
                cs.remove(c)
        if len(bs) == 1 and len(cs) == 1:
            b, c = bs.pop(), cs.pop()
            pairs.append((b, c))
            if None not in (b.get("run_identity"), c.get("run_identity")):
                notes.append(
                    f"{group_label((*look, _run(b, c)))}: its requests differ from baseline's (run "
                    f"identity {b.get('run_identity')} → {c.get('run_identity')}); compared"
                )
        out += [((*look, _run(b, c)), b, c) for b, c in pairs]
        out += [((*look, _run(b, None)), b, None) for b in bs]
        out += [((*look, _run(None, c)), None, c) for c in cs]
    return out


def _run(b: Mapping[str, Any] | None, c: Mapping[str, Any] | None) -> str | None:
    """What the report said tells the group's run apart: current's, else baseline's."""
    for e in (c, b):
        run = None if e is None else e.get("run")
        if isinstance(run, str) and run:
            return run
    return None


def group_label(key: Key) -> str:
    """provider/model/mode, the feedback and stream arms when there are, and the run."""
    label = "/".join(key[:3]) + (f" feedback {key[3]}" if key[3] is not None else "")
    label += (
        {True: " streamed", False: " not streamed"}.get(key[4], "") if key[4] is not None else ""
    )
    return label + (f" ({key[5]})" if key[5] else "")


def entries(report: Mapping[str, Any]) -> list[tuple[Look, Mapping[str, Any]]]:
    """A report's results[] entries, each with how its group reads."""
    return [(look_of(e), e) for e in report.get("results") or []]
