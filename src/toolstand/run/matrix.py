"""The run matrix: runs × cases × modes × stream arms × repetitions × feedback arms, one item per
record, grouped into repetitions that share one first turn (design.md, Repair turn)."""

from __future__ import annotations

from dataclasses import dataclass

from toolstand.attempt.plan import mode_applies
from toolstand.history import AttemptKey
from toolstand.run.inputs import Inputs
from toolstand.spec.cases import Case
from toolstand.spec.config import RunSpec
from toolstand.types import FeedbackStyle, Mode


@dataclass
class WorkItem:
    run_index: int
    case: Case
    mode: Mode
    attempt: int
    feedback: FeedbackStyle | None = (
        None  # the repair arm (config repair.feedback), None: no repairs
    )
    stream: bool = False  # the stream arm (config stream)

    def key(self, spec: RunSpec, identity: str | None) -> AttemptKey:
        """The item's --resume key; ``identity``: its run's (spec/identity.py)."""
        return (
            *(spec.provider, spec.model, spec.api, identity, self.case.id, self.mode),
            *(self.attempt, self.stream, self.feedback),
        )


def plan(inputs: Inputs, only: set[str] | None = None) -> list[WorkItem]:
    """The whole matrix, one item per record, in a stable order: run, case, mode, stream
    arm, attempt, feedback arm (the feedback arms of one repetition side by side: they
    share turn 1; the stream arms do not, each is a request of its own)."""
    config = inputs.config
    items = []
    for ri, spec in enumerate(config.runs):
        for case in inputs.casefile.cases:
            if only is not None and case.id not in only:
                continue
            for mode in config.modes:
                if not mode_applies(case, mode):
                    continue
                for stream in config.stream_arms(spec):
                    for attempt in range(1, config.repetitions + 1):
                        for arm in config.feedback_arms:
                            items.append(WorkItem(ri, case, mode, attempt, arm, stream))
    return items


@dataclass
class Repetition:
    """The items of one (run, case, mode, repetition): one turn 1, one record per arm."""

    run_index: int
    case: Case
    mode: Mode
    attempt: int
    arms: list[FeedbackStyle | None]
    stream: bool = False


def repetitions(items: list[WorkItem]) -> list[Repetition]:
    """``items`` grouped by (run, case, mode, repetition), in their order; the arms of a
    group are those of ``items`` (after --resume, the arms not yet on disk)."""
    groups: dict[tuple[int, str, Mode, bool, int], Repetition] = {}
    for it in items:
        key = (it.run_index, it.case.id, it.mode, it.stream, it.attempt)
        if key not in groups:
            groups[key] = Repetition(it.run_index, it.case, it.mode, it.attempt, [], it.stream)
        groups[key].arms.append(it.feedback)
    return list(groups.values())
