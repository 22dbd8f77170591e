"""The judge: verdicts, error codes and per-metric booleans for one attempt.

Each rule has its test in tests/test_judge.py; the report reads the booleans
it leaves in ``judgement.metrics`` and never re-derives them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, cast

from toolstand.decision import DEPTH_ERROR, DUPLICATE_KEY_ERROR, ModelDecision, ToolCall
from toolstand.judge.argmatch import exact_match, expected_repr, normalized_match
from toolstand.judge.calls import SCHEMA_SUBCODES, CallInfo, analyse, match_calls
from toolstand.spec.cases import Case, ExpectedCall, Followup
from toolstand.spec.contract import Contract
from toolstand.types import (
    ERROR_CODES,
    CallRow,
    ErrorCode,
    FollowupJudgement,
    JudgeError,
    Judgement,
    JudgeMetrics,
    Mode,
    Verdict,
)
from toolstand.util.canonical import canonical_json

__all__ = [
    "SCHEMA_SUBCODES",
    "VERDICT_CODES",
    "followup_applies",
    "followup_possible",
    "judge",
    "judge_followup",
    "match_calls",
    "normalized_verdict",
    "signature",
    "with_turn_errors",
]

# the codes as a tuple, for the readers that list them (types.ErrorCode spells them)
VERDICT_CODES: tuple[ErrorCode, ...] = ERROR_CODES


def _is_unsafe(info: CallInfo, expected: list[ExpectedCall]) -> bool:
    if info.spec is None or info.spec.effect != "execute":
        return False
    if info.call.arguments is None:
        # unparseable arguments on an expected tool: only invalid_json (precise rules)
        return not any(e.tool == info.call.name for e in expected)
    for exp in expected:
        if exp.tool != info.call.name:
            continue
        if not exp.names_arguments or exact_match(info.effective_arguments, exp):
            return False
    return True


def signature(decision: ModelDecision) -> str:
    """(kind, sorted call names, canonical JSON of arguments) as one canonical string."""
    names = sorted(c.name for c in decision.calls)
    args = sorted(
        canonical_json(c.arguments if c.arguments is not None else c.raw_arguments)
        for c in decision.calls
    )
    return canonical_json([decision.kind, names, args])


def _contains_any(text: str | None, needles: list[str]) -> bool:
    hay = (text or "").casefold()
    return any(n.casefold() in hay for n in needles)


def _json_subcode(call: ToolCall | None) -> str | None:
    """``duplicate_key`` for arguments that parse but write one key twice, else None."""
    error = call.parse_error if call is not None else None
    return "duplicate_key" if error and error.startswith(DUPLICATE_KEY_ERROR) else None


def _unparsed(call: ToolCall, index: int) -> JudgeError:
    """The one code of a call whose raw arguments were not read: ``invalid_json``, or
    ``invalid_arguments`` sub-code ``depth`` for JSON nested deeper than the declared
    limit (issue 31 H4: such arguments could not even be recorded)."""
    if call.parse_error and call.parse_error.startswith(DEPTH_ERROR):
        return _err(
            "invalid_arguments",
            call_index=index,
            subcode="depth",
            path="$",
            message=call.parse_error,
        )
    return _err(
        "invalid_json",
        call_index=index,
        subcode=_json_subcode(call),
        actual=call.raw_arguments,
        message=call.parse_error,
    )


def _err(code: ErrorCode, **kw: Any) -> JudgeError:
    out: dict[str, Any] = {"code": code}
    out.update({k: v for k, v in kw.items() if v is not None})
    out.setdefault("turn", 1)
    return cast(JudgeError, out)


@dataclass
class _Scene:
    """What one first turn is judged against: the expectation as the mode reads it,
    the calls analysed, and how they pair with the expected calls."""

    case: Case
    decision: ModelDecision
    control: bool
    expects_call: bool
    expected: list[ExpectedCall]
    infos: list[CallInfo]
    pairs: list[tuple[int, int]]
    unsafe: list[CallInfo]
    blocked: list[CallInfo]

    @property
    def matched(self) -> dict[int, int]:
        return dict(self.pairs)


@dataclass
class _ArgumentScores:
    """Exact and normalized argument matches of the paired calls to the right tool."""

    denominator: int = 0
    exact_correct: int = 0
    normalized_correct: int = 0
    exact: dict[int, bool | None] = field(default_factory=dict)
    normalized: dict[int, bool | None] = field(default_factory=dict)


def judge(
    case: Case,
    decision: ModelDecision,
    contract: Contract,
    *,
    offered_tools: list[str] | None = None,
    mode: Mode = "auto",
) -> Judgement:
    """Judge the first turn. ``offered_tools``: the names actually sent (None: all).

    ``no_tools`` is a control: nothing was offered, so every case is judged as expecting
    no call (a call reported there points at the parser, seed 000)."""
    scene = _scene(case, decision, contract, offered_tools, mode)
    scores = _score_arguments(scene)
    turn_errors = _expected_call_errors if scene.expects_call else _no_call_errors
    errors = turn_errors(scene, scores)
    errors += [_err("unsafe_call", call_index=i.index, actual=i.call.name) for i in scene.unsafe]
    errors += [
        _err("policy_blocked", call_index=i.index, actual=i.call.name) for i in scene.blocked
    ]
    errors += _stream_errors(decision)
    # nothing was offered in the control: a call there is a parser bug
    flags = ["no_tools_call"] if scene.control and scene.infos else []
    if any(c.raw_arguments == "" and c.arguments is None for c in decision.calls):
        flags.append("empty_arguments")
    rows = _call_rows(scene, scores)
    return {
        "verdict": "fail" if errors else "pass",
        "verdict_normalized": normalized_verdict(errors, rows),
        "errors": errors,
        "calls": rows,
        "unsafe": bool(scene.unsafe),
        "flags": flags,
        "metrics": _metrics(scene, scores),
    }


def _stream_errors(decision: ModelDecision) -> list[JudgeError]:
    """``stream_mismatch``: the streamed deltas disagree with the whole answer the API also
    sent (design.md, Streaming); both readings are in the error."""
    return [
        _err(
            "stream_mismatch",
            call_index=m.get("call_index"),
            expected=m.get("whole"),
            actual=m.get("deltas"),
            message=m.get("what"),
        )
        for m in decision.stream_mismatch
    ]


def normalized_verdict(errors: list[JudgeError], calls: list[CallRow]) -> Verdict:
    """The verdict with each call judged after its declared repairs and x-normalize
    (design.md): ``invalid_arguments`` on a call that is valid after them is waived, and
    ``argument_mismatch`` on a call whose normalized arguments match; every other code
    (``invalid_json``, a wrong tool, a later turn's) still fails. A row written before
    ``normalized_valid`` existed waives no schema violation."""
    waived = {
        "invalid_arguments": {c["index"] for c in calls if c.get("normalized_valid")},
        "argument_mismatch": {c["index"] for c in calls if c.get("normalized")},
    }
    left = [e for e in errors if e.get("call_index") not in waived.get(e["code"], ())]
    return "fail" if left else "pass"


def with_turn_errors(judgement: Judgement, errors: list[JudgeError]) -> Judgement:
    """The judgement with a later turn's codes added, both verdicts recomputed."""
    out = judgement.copy()
    out["errors"] = list(judgement["errors"]) + list(errors)
    out["verdict"] = "fail" if out["errors"] else "pass"
    out["verdict_normalized"] = normalized_verdict(out["errors"], judgement.get("calls") or [])
    return out


def _scene(
    case: Case,
    decision: ModelDecision,
    contract: Contract,
    offered_tools: list[str] | None,
    mode: Mode,
) -> _Scene:
    expect = case.expect
    control = mode == "no_tools"
    offered = set(offered_tools) if offered_tools is not None else set(contract.by_name)
    expects_call = expect.kind == "tool_call" and not control
    expected = expect.expected_calls if expects_call else []
    infos = [analyse(c, i, contract, offered) for i, c in enumerate(decision.calls)]
    pairs = match_calls(infos, expected, expect.order) if expected else []
    unsafe = [i for i in infos if _is_unsafe(i, expected)]
    # a contract tool left out by active_tools; in the control nothing was offered at all
    blocked = [i for i in infos if i.spec is not None and not i.offered and not control]
    return _Scene(case, decision, control, expects_call, expected, infos, pairs, unsafe, blocked)


def _score_arguments(scene: _Scene) -> _ArgumentScores:
    scores = _ArgumentScores()
    for ci, ei in scene.pairs:
        info, exp = scene.infos[ci], scene.expected[ei]
        if info.call.name != exp.tool or not exp.names_arguments:
            continue
        ok = exact_match(info.call.arguments, exp)
        schema = info.spec.parameters if info.spec else None
        nok = normalized_match(info.normalized_input, exp, schema)
        scores.denominator += 1
        scores.exact_correct += ok
        scores.normalized_correct += nok
        scores.exact[ci], scores.normalized[ci] = ok, nok
    return scores


def _expected_call_errors(scene: _Scene, scores: _ArgumentScores) -> list[JudgeError]:
    """The codes of a turn that should have called: no call, or the calls made."""
    infos, expected = scene.infos, scene.expected
    if not infos:
        return _answer_without_call(scene)
    if scene.case.expect.any_call:
        return _any_call_errors(scene)
    errors: list[JudgeError] = []
    if len(infos) != len(expected):
        errors.append(_err("call_count_mismatch", expected=len(expected), actual=len(infos)))
    for ci, ei in scene.pairs:
        info, exp = infos[ci], expected[ei]
        if info.call.name != exp.tool:
            errors.append(
                _err("wrong_tool", call_index=ci, expected=exp.tool, actual=info.call.name)
            )
            continue
        errors += _argument_errors(info, exp, scores.exact.get(ci))
    forbidden = scene.case.expect.forbidden_tools or set()
    matched = scene.matched
    for info in infos:
        if info.index in matched:
            continue
        if info.spec is None:  # an extra call to a tool in no contract
            errors.append(_err("wrong_tool", call_index=info.index, actual=info.call.name))
        elif info.call.name in forbidden:
            errors.append(_err("unexpected_call", call_index=info.index, actual=info.call.name))
    return errors


def _any_call_errors(scene: _Scene) -> list[JudgeError]:
    """A case that takes any call of an offered tool (BFCL's relevance): the arguments are
    not compared, yet a call to a tool in no contract, or one whose arguments do not
    parse, is not a call of an offered tool."""
    errors: list[JudgeError] = []
    for info in scene.infos:
        if info.spec is None:
            errors.append(_err("wrong_tool", call_index=info.index, actual=info.call.name))
        elif info.call.arguments is None and info.call.raw_arguments is not None:
            errors.append(_unparsed(info.call, info.index))
    return errors


def _no_call_errors(scene: _Scene, scores: _ArgumentScores) -> list[JudgeError]:
    """The codes of a turn that should not have called (or the control)."""
    if scene.infos:
        return [_err("unexpected_call", actual=[i.call.name for i in scene.infos])]
    return _answer_without_call(scene)


def _answer_without_call(scene: _Scene) -> list[JudgeError]:
    """The codes of a turn with no call: a refusal, a cut or unreadable answer, or text.

    Where a call was expected a refusal is ``unexpected_refusal`` and text is
    ``missing_call``; where none was, a refusal fails only a case that expects text, and
    ``contains_any`` is checked (the control checks it only for cases that expect text,
    design.md, Modes)."""
    decision, expect = scene.decision, scene.case.expect
    if decision.kind == "refusal":
        if scene.expects_call or expect.kind == "text":
            return [_err("unexpected_refusal", actual=decision.refusal or decision.text)]
        return []
    if decision.truncated or decision.kind == "invalid":
        return [_no_answer(decision, expects_call=scene.expects_call)]
    if scene.expects_call:
        return [_err("missing_call", expected=_exp_repr(scene.expected), actual=decision.text)]
    needles = expect.contains_any if not scene.control or expect.kind == "text" else None
    if needles and not _contains_any(decision.text, needles):
        return [_err("text_mismatch", expected=needles, actual=decision.text)]
    return []


def _call_rows(scene: _Scene, scores: _ArgumentScores) -> list[CallRow]:
    matched = scene.matched
    rows: list[CallRow] = []
    for info in scene.infos:
        mi = matched.get(info.index)
        rows.append(
            {
                "index": info.index,
                "name": info.call.name,
                "known_tool": info.spec is not None,
                "offered": info.offered,
                "matched_expected": mi,
                "right_tool": mi is not None and scene.expected[mi].tool == info.call.name,
                "repair": info.repair,
                "repaired_arguments": info.repaired,
                "repairs": info.repairs,
                "exact": scores.exact.get(info.index),
                "normalized": scores.normalized.get(info.index),
                "normalized_valid": info.normalized_valid,
                "unsafe": info in scene.unsafe,
            }
        )
    return rows


def _metrics(scene: _Scene, scores: _ArgumentScores) -> JudgeMetrics:
    infos = scene.infos
    called = bool(infos)
    selection: bool | None = None
    if scene.case.expect.any_call and scene.expects_call:
        selection = called and all(i.spec is not None and i.offered for i in infos)
    elif scene.expects_call:
        selection = Counter(i.call.name for i in infos) == Counter(e.tool for e in scene.expected)
    return {
        "expects_call": scene.expects_call,
        "called": called,
        "decision_correct": called == scene.expects_call,
        "tool_selection_correct": selection,
        # raw schema validity: a tool in no contract has no schema to pass
        "calls_made": sum(1 for i in infos if i.spec is not None),
        "calls_unknown_tool": sum(1 for i in infos if i.spec is None),
        "calls_schema_valid": sum(1 for i in infos if i.raw_valid),
        "exact_denominator": scores.denominator,
        "exact_correct": scores.exact_correct,
        "normalized_correct": scores.normalized_correct,
        "unsafe": bool(scene.unsafe),
        "signature": signature(scene.decision),
    }


def _argument_errors(info: CallInfo, exp: ExpectedCall, exact: bool | None) -> list[JudgeError]:
    """The codes of a call to the right tool: its arguments against schema and case."""
    ci = info.index
    if info.call.arguments is None:
        if info.call.raw_arguments is None:  # no arguments on the wire: nothing parsed
            return [
                _err(
                    "invalid_arguments",
                    call_index=ci,
                    subcode="wrong_type",
                    path="$",
                    message=info.call.parse_error or "arguments missing",
                )
            ]
        return [_unparsed(info.call, ci)]
    out = [
        _err(
            "invalid_arguments",
            call_index=ci,
            subcode=v.subcode,
            path=v.path,
            message=v.message,
        )
        for v in info.violations
    ]
    if exp.names_arguments and not exact:
        out.append(
            _err(
                "argument_mismatch",
                call_index=ci,
                expected=expected_repr(exp),
                actual=info.call.arguments,
            )
        )
    return out


def _no_answer(decision: ModelDecision, *, expects_call: bool) -> JudgeError:
    """The one code of a turn with no call and no readable text.

    ``invalid_json`` only where a call's raw arguments exist and do not parse (Gemini's
    MALFORMED_FUNCTION_CALL counts as one, design.md); a cut answer is ``truncated``.
    Anything else (a body whose items, blocks or finish reason the adapter does not
    read, an empty body, a provider's failed status) is not the model's JSON: it is the
    absence of what the case expects, ``missing_call`` or ``text_mismatch``, and the
    message says why nothing was readable."""
    if decision.truncated:
        return _err("truncated", actual=decision.finish_reason)
    unparsed = [
        c for c in decision.partial_calls if c.raw_arguments is not None and c.arguments is None
    ]
    if "malformed_function_call" in decision.flags or unparsed:
        return _err(
            "invalid_json",
            subcode=_json_subcode(unparsed[0] if unparsed else None),
            actual=unparsed[0].raw_arguments if unparsed else decision.finish_reason,
            message=unparsed[0].parse_error if unparsed else "no usable call",
        )
    why = ", ".join(decision.notes + decision.flags) or "empty answer"
    return _err(
        "missing_call" if expects_call else "text_mismatch",
        actual=decision.finish_reason,
        message=f"no readable answer ({why})",
    )


def _exp_repr(expected: list[ExpectedCall]) -> list[dict[str, Any]]:
    return [e.model_dump(exclude_none=True) for e in expected]


def judge_followup(
    followup: Followup, decision: ModelDecision, results: list[dict[str, Any]]
) -> FollowupJudgement:
    """Judge the second turn against the followup checks; ``results`` are the tool results sent."""
    errors: list[JudgeError] = []
    failed = any(isinstance(r, dict) and r.get("ok") is False for r in results)
    again = [c.name for c in decision.calls if c.name in set(followup.must_not_call)]
    if again:
        errors.append(_err("repeated_call", turn=2, actual=again))
    text = decision.text or ""
    hits = [s for s in followup.must_not_contain if s.casefold() in text.casefold()]
    if hits:
        # after a failure a claim from must_not_contain is a false success; after a
        # success it is data the tool never returned
        code: ErrorCode = "false_success" if failed else "recovery_mismatch"
        errors.append(
            _err(
                code, turn=2, expected={"must_not_contain": followup.must_not_contain}, actual=text
            )
        )
    if followup.contains_any and not _contains_any(text, followup.contains_any):
        errors.append(
            _err(
                "recovery_mismatch",
                turn=2,
                expected={"contains_any": followup.contains_any},
                actual=text,
            )
        )
    return {"verdict": "fail" if errors else "pass", "errors": errors, "passed": not errors}


def followup_applies(case: Case, judgement: Judgement, mode: Mode) -> bool:
    """The second turn runs for cases with followup, when the first turn called the
    expected tool(s), in auto, forced and reversed."""
    return followup_possible(case, mode) and bool(judgement["metrics"]["tool_selection_correct"])


def followup_possible(case: Case, mode: Mode) -> bool:
    """Whether a second turn can follow turn 1 at all, whatever turn 1 answers."""
    return case.followup is not None and mode in ("auto", "forced", "reversed")
