"""One call as the judge sees it: its schema violations, its repair class, and which
expected call it is paired with (best assignment, or by position when strict)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from toolstand.decision import ToolCall
from toolstand.judge.argmatch import exact_match
from toolstand.judge.normalize import classify, normalized_repair
from toolstand.spec.cases import ExpectedCall
from toolstand.spec.contract import Contract, ToolSpec
from toolstand.spec.violations import Violation, violations
from toolstand.types import SCHEMA_SUBCODES, RepairClass

__all__ = ["SCHEMA_SUBCODES", "CallInfo", "analyse", "match_calls"]


@dataclass
class CallInfo:
    index: int
    call: ToolCall
    spec: ToolSpec | None
    offered: bool
    repair: RepairClass = "invalid"
    repaired: dict[str, Any] | None = None
    repairs: list[dict[str, Any]] = field(default_factory=list)
    raw_valid: bool = False
    violations: list[Violation] = field(default_factory=list)
    # the normalized verdict's view: valid after the declared repairs and x-normalize
    normalized_valid: bool = False
    normalized_arguments: dict[str, Any] | None = None

    @property
    def effective_arguments(self) -> dict[str, Any] | None:
        """The arguments after the declared repairs (the raw ones when none applied)."""
        return self.repaired if self.repaired is not None else self.call.arguments

    @property
    def normalized_input(self) -> dict[str, Any] | None:
        """The arguments the normalized comparison reads: after the declared repairs and
        the normalizers' enum repairs when those make them valid, else as above."""
        if self.normalized_arguments is not None:
            return self.normalized_arguments
        return self.effective_arguments


def analyse(call: ToolCall, index: int, contract: Contract, offered: set[str]) -> CallInfo:
    spec = contract.tool(call.name)
    info = CallInfo(index, call, spec, call.name in offered)
    if spec is not None and call.arguments is None and call.raw_arguments == "":
        _empty_arguments(info, spec)
    if spec is None or call.arguments is None:
        return info
    result = classify(call.arguments, spec.validator)
    info.repair = result.repair
    info.raw_valid = result.repair == "raw_valid"
    info.repaired = result.repaired
    info.repairs = result.repairs
    info.normalized_valid = info.raw_valid
    if not info.raw_valid:
        info.violations = violations(spec, call.arguments)
        normalized = normalized_repair(call.arguments, spec.validator)
        info.normalized_valid = normalized.repair == "repairable"
        info.normalized_arguments = normalized.repaired
    return info


def _empty_arguments(info: CallInfo, spec: ToolSpec) -> None:
    """``""`` as a call's arguments (a zero-parameter call streamed with nothing, design.md
    Streaming) stays ``invalid_json``; for a tool with no required parameter it is
    ``repairable`` to ``{}`` by a declared repair, when ``{}`` passes the schema."""
    required = spec.parameters.get("required") if isinstance(spec.parameters, dict) else None
    if not required and spec.validator.is_valid({}):
        info.repair = "repairable"
        info.repaired = {}
        info.repairs = [{"path": "$", "rule": "empty_arguments", "from": "", "to": {}}]


def _match_score(info: CallInfo, exp: ExpectedCall) -> int:
    if info.call.name != exp.tool:
        return 0
    score = 4
    if exp.names_arguments and info.call.arguments is not None:
        if exact_match(info.call.arguments, exp):
            score += 2
        elif exact_match(info.effective_arguments, exp):
            score += 1
    return score


def match_calls(
    calls: list[CallInfo], expected: list[ExpectedCall], order: str
) -> list[tuple[int, int]]:
    """Pairs (call index, expected index): by position when strict, else the assignment
    that maximizes matches (names first, then exact arguments)."""
    n = min(len(calls), len(expected))
    if order == "strict":
        return [(i, i) for i in range(n)]
    if n == 0:
        return []
    scores = [[_match_score(c, e) for e in expected] for c in calls]
    best: list[tuple[int, int]] = []
    best_score = -1
    if len(calls) <= 7 and len(expected) <= 7:
        if len(calls) <= len(expected):
            for perm in itertools.permutations(range(len(expected)), len(calls)):
                s = sum(scores[i][j] for i, j in enumerate(perm))
                if s > best_score:
                    best_score, best = s, list(enumerate(perm))
        else:
            for perm in itertools.permutations(range(len(calls)), len(expected)):
                s = sum(scores[i][j] for j, i in enumerate(perm))
                if s > best_score:
                    best_score, best = s, [(i, j) for j, i in enumerate(perm)]
        return sorted(best)
    # large sets: greedy on descending score (rare; documented approximation)
    cells = sorted(
        ((scores[i][j], i, j) for i in range(len(calls)) for j in range(len(expected))),
        reverse=True,
    )
    used_c: set[int] = set()
    used_e: set[int] = set()
    for _, i, j in cells:
        if i not in used_c and j not in used_e:
            best.append((i, j))
            used_c.add(i)
            used_e.add(j)
    return sorted(best)
