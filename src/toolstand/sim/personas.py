"""The simulated "model": five deterministic personas that answer from the case file.

The persona is the model name. Every rate below is a module constant, and the tests
and the metric tests use these constants as their oracle.

``sim-careful``
    Answers as the case expects: the expected call(s) with the expected arguments
    (several calls in one turn when expected and parallel calls are allowed), a
    clarifying text holding the case's first ``contains_any`` entry, a refusal for a
    refusal case. In the second turn it reports the tool results actually sent,
    truthfully, in the user's language: a failure by its problem's ``title`` and
    ``code``, asking the user when ``owner_action_required`` and offering to try again
    later (after ``retry_after``) when ``retryable``; a success by quoting its values.
    It never calls again. Without tools (or with tool_choice none) it never calls;
    with a forced tool it calls that tool.
``sim-eager``
    On a case that expects no call, when the user's words point at an offered tool
    (``invent.hints_for``: the contract's ``x-sim`` stems, else its tools' names and
    descriptions), it calls that tool with made-up values (a pattern's zeros)
    with probability ``EAGER_OVERCALL_RATE``; with no such tool, and on call cases,
    it is careful. In the second turn, after a failed result, with probability
    ``EAGER_FALSE_SUCCESS_RATE`` it calls a failed ``effect: execute`` tool again with
    the same arguments (even after a permanent failure) or, with none, claims
    success (a text holding the followup's first ``must_not_contain`` entry); after
    a success it reports as careful.
``sim-sloppy``
    Careful, but every call it makes draws independently, in this order:
    ``SLOPPY_NUMBER_AS_STRING_RATE`` (the first number argument sent as a string,
    "2.5" or "2,5" with even odds), ``SLOPPY_ENUM_CASE_RATE`` (the first enum value
    capitalized, "Express"), ``SLOPPY_EXTRA_FIELD_RATE`` (an undeclared ``note``
    field), ``SLOPPY_BROKEN_JSON_RATE`` (the arguments string truncated mid-value).
    Each applies only where it can (a number, an enum value present). Anthropic and
    Gemini carry arguments as JSON objects, so broken JSON cannot cross their wire:
    on Gemini the whole answer becomes ``MALFORMED_FUNCTION_CALL``; on Anthropic the
    draw is made and ignored.
``sim-positional``
    On call cases it calls the first callable tool in the order offered: with the
    expected arguments when that is an expected tool, else with the expected values
    its schema has room for and made-up ones for the rest. Text cases and second
    turns as careful. So its tool selection depends on the tool order.
``sim-flaky``
    Careful answers, but each request first draws one fault with the
    ``FLAKY_FAULT_RATES`` (429 with Retry-After, 500, 529/503, a held connection, a
    torn body, an HTML 502 page, a reset connection); ``FLAKY_FAULT_RATE`` in all.
    Streamed, a held connection sends half the stream and goes idle, a torn body sends
    half and closes the connection.
``sim-streambug``
    Careful unstreamed; streamed, it says the same but its "server" has the streaming
    bugs of ``STREAM_FAULTS["streambug"]`` (stream_faults: one per server bug class of
    providers.md S6.2): the ones that change what a correct client reads (an empty
    zero-parameter call, lost calls and arguments, coerced numbers, cumulative
    fragments) hit a request the same way in every repetition; in-band errors and a
    missing terminal event draw afresh per request.

Draws are per request from a seeded stream (see ``server``), so a run's outcomes are
fixed by the seed whatever the concurrency.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from toolstand.sim.invent import hint_tool, invent_arguments

# re-exported: the config checks sim.stream_faults through this module, its one door
from toolstand.sim.stream_faults import check_stream_faults as check_stream_faults
from toolstand.sim.turn import Answer, Draws, ModelRequest, SimCall, ToolOutput
from toolstand.spec.cases import Case, ExpectedCall

# the config's rule, the simulator's too (server.py and the tests import it from here)
from toolstand.spec.config import check_fault_rates as check_fault_rates
from toolstand.types import SIM_FAULTS, SimFault

EAGER_OVERCALL_RATE = 0.8
EAGER_FALSE_SUCCESS_RATE = 0.8
SLOPPY_NUMBER_AS_STRING_RATE = 0.3
SLOPPY_ENUM_CASE_RATE = 0.3
SLOPPY_EXTRA_FIELD_RATE = 0.2
SLOPPY_BROKEN_JSON_RATE = 0.1

Fault = SimFault
FLAKY_FAULT_RATES: dict[str, float] = {
    "rate_limited": 0.10,
    "server_error": 0.04,
    "overloaded": 0.04,
    "timeout": 0.02,
    "torn_body": 0.03,
    "html_502": 0.03,
    "reset": 0.03,
}
FLAKY_FAULT_RATE = sum(FLAKY_FAULT_RATES.values())
_FAULTS: tuple[Fault, ...] = SIM_FAULTS

PERSONAS: dict[str, str] = {
    "careful": "answers as each case expects; reports tool results truthfully",
    "eager": "calls when it should ask, invents missing arguments, claims success after errors",
    "sloppy": "numbers as strings, enum case changed, extra fields, now and then broken JSON",
    "positional": "calls the first tool offered",
    "flaky": "careful, with 429/500/529/503, held connections, torn bodies, HTML 502s and resets",
    "streambug": "careful, but its streams carry the server bug classes of streamed tool calls",
}
# stream faults per persona (stream_faults.STREAM_FAULTS names them): fault -> rate per
# streamed request; a fault shows only where it can (see stream_faults.pick)
STREAM_FAULTS: dict[str, dict[str, float]] = {
    "streambug": {
        # what a correct client reads differently (index_reuse only if its assembler is wrong)
        "args_empty_zero_param": 1.0,
        "call_lost": 0.5,
        "index_reuse": 0.5,
        "value_coerced": 1.0,
        "args_lost": 0.2,
        "args_cumulative": 0.2,
        # what a correct client reads the same: often
        "args_whole": 0.3,
        "id_missing": 0.3,
        "id_per_delta": 0.3,
        "index_duplicate": 0.3,
        "name_repeated": 0.3,
        "opener_with_args": 0.3,
        "finish_wrong": 0.2,
        "finish_missing": 0.1,
        "finish_repeated": 0.2,
        "finish_with_delta": 0.2,
        "usage_elsewhere": 0.3,
        "done_extra": 0.3,
        "comment_keepalive": 0.3,
        "field_order": 0.3,
        "json_padding": 0.5,
        "choices_null": 0.2,
        # transport: now and then, so a retry gets through
        "error_inband": 0.05,
        "no_terminal": 0.05,
    }
}
MODELS: tuple[str, ...] = tuple(f"sim-{name}" for name in PERSONAS)

Tools = Mapping[str, Any]  # tool name -> effect ("read" | "prepare" | "execute")
Outcome = Answer | Fault

UNKNOWN_TEXT = (
    "toolstand simulator ({model}): this conversation is not in the case file, "
    "so the simulator does not know how to answer it."
)


def decide(
    persona: str,
    case: Case | None,
    turn: ModelRequest,
    effects: Tools,
    draws: Draws,
    fault_rates: Mapping[str, float] | None = None,
) -> Outcome:
    """The persona's answer to one request (or, for flaky, the fault it draws).

    ``fault_rates`` replaces ``FLAKY_FAULT_RATES`` (tests force one fault with it).
    """
    if persona == "flaky":
        return _flaky(case, turn, draws, FLAKY_FAULT_RATES if fault_rates is None else fault_rates)
    return _PERSONAS[persona](case, turn, effects, draws)


def careful(case: Case | None, turn: ModelRequest) -> Answer:
    """What the case expects; the base every other persona departs from."""
    if turn.results:
        return _report(case, turn)
    callable_ = turn.callable_tools
    if not callable_:
        return _text(case, turn)
    if turn.forced is not None:
        return _calls_to(turn.forced, case, turn)
    expected = [c for c in _expected(case) if c.tool in callable_]
    if expected:
        return _limit(turn, [_call(c.tool, c.arguments, case, turn) for c in expected])
    if turn.choice == "required":
        tool = hint_tool(turn.last_user_text, callable_, turn.hints) or callable_[0]
        return _calls_to(tool, case, turn)
    return _text(case, turn)


def _eager(case: Case | None, turn: ModelRequest, effects: Tools, draws: Draws) -> Outcome:
    u = draws.uniform()
    if turn.results:
        failed = [r for r in turn.results if r.failed]
        if failed and u < EAGER_FALSE_SUCCESS_RATE:
            return _overclaim(case, turn, failed, effects)
    elif (
        case is not None
        and not case.expects_call
        and turn.choice == "auto"
        and u < EAGER_OVERCALL_RATE
    ):
        tool = hint_tool(turn.last_user_text, turn.callable_tools, turn.hints)
        if tool is not None:
            return Answer("calls", calls=[_call(tool, None, None, turn)])
    return careful(case, turn)


def _overclaim(
    case: Case | None, turn: ModelRequest, failed: list[ToolOutput], effects: Tools
) -> Answer:
    by_id = {c.call_id: c for c in turn.calls if c.call_id is not None}
    for result in failed:
        if effects.get(result.name) == "execute" and result.name in turn.callable_tools:
            prior = by_id.get(result.call_id) if result.call_id is not None else None
            if prior is None:  # Gemini results carry no ids: match by name
                prior = next((c for c in reversed(turn.calls) if c.name == result.name), None)
            arguments = prior.arguments if prior is not None else {}
            return Answer("calls", calls=[SimCall(result.name, dict(arguments))])
    followup = case.followup if case is not None else None
    if followup is not None and followup.must_not_contain:
        return Answer("text", text=f"{followup.must_not_contain[0]} (simulated report)")
    return Answer("text", text="Done: the operation succeeded. (simulated report)")


def _sloppy(case: Case | None, turn: ModelRequest, effects: Tools, draws: Draws) -> Outcome:
    answer = careful(case, turn)
    if answer.kind != "calls":
        return answer
    malformed = False
    calls = []
    for call in answer.calls:
        draw = [draws.uniform() for _ in range(5)]
        schema = turn.tools.get(call.name, {})
        args = dict(call.arguments)
        if draw[0] < SLOPPY_NUMBER_AS_STRING_RATE:
            _number_as_string(args, comma=draw[4] < 0.5)
        if draw[1] < SLOPPY_ENUM_CASE_RATE:
            _enum_case(args, schema)
        if draw[2] < SLOPPY_EXTRA_FIELD_RATE:
            args["note"] = "added by sim-sloppy"
        sloppy = SimCall(call.name, args)
        if draw[3] < SLOPPY_BROKEN_JSON_RATE:
            if turn.api in ("openai-chat", "openai-responses"):
                raw = sloppy.raw_text()
                sloppy.raw = raw[: max(1, len(raw) * 2 // 3)]
            elif turn.api == "gemini":
                malformed = True
        calls.append(sloppy)
    if malformed:
        return Answer("malformed", calls=calls)
    return Answer("calls", calls=calls)


def _positional(case: Case | None, turn: ModelRequest, effects: Tools, draws: Draws) -> Outcome:
    callable_ = turn.callable_tools
    if turn.results or not callable_ or case is None or not case.expects_call:
        return careful(case, turn)
    return _calls_to(callable_[0], case, turn)


def _flaky(
    case: Case | None, turn: ModelRequest, draws: Draws, rates: Mapping[str, float]
) -> Outcome:
    u = draws.uniform()
    edge = 0.0
    for fault in _FAULTS:  # a fixed order, so a seed means the same faults
        edge += rates.get(fault, 0.0)
        if u < edge:
            return fault
    return careful(case, turn)


def _careful(case: Case | None, turn: ModelRequest, effects: Tools, draws: Draws) -> Outcome:
    return careful(case, turn)


_PERSONAS: dict[str, Callable[[Case | None, ModelRequest, Tools, Draws], Outcome]] = {
    "careful": _careful,
    "eager": _eager,
    "sloppy": _sloppy,
    "positional": _positional,
    "streambug": _careful,
}


def _expected(case: Case | None) -> list[ExpectedCall]:
    return case.expect.expected_calls if case is not None else []


def _call(
    tool: str, arguments: dict[str, Any] | None, case: Case | None, turn: ModelRequest
) -> SimCall:
    if arguments is not None:
        return SimCall(tool, dict(arguments))
    schema = turn.tools.get(tool, {})
    return SimCall(tool, invent_arguments(schema, turn.last_user_text, None, turn.hints))


def _calls_to(tool: str, case: Case | None, turn: ModelRequest) -> Answer:
    """Calls to one chosen tool: the expected ones to it, else one fitted from the case."""
    expected = [c for c in _expected(case) if c.tool == tool]
    if expected:
        return _limit(turn, [_call(tool, c.arguments, case, turn) for c in expected])
    known: dict[str, Any] = {}
    for c in _expected(case):
        known.update(c.arguments or {})
    args = invent_arguments(turn.tools.get(tool, {}), turn.last_user_text, known, turn.hints)
    return Answer("calls", calls=[SimCall(tool, args)])


def _limit(turn: ModelRequest, calls: list[SimCall]) -> Answer:
    return Answer("calls", calls=calls if turn.parallel else calls[:1])


def _text(case: Case | None, turn: ModelRequest) -> Answer:
    if case is None:
        return Answer("text", text=UNKNOWN_TEXT.format(model=turn.model))
    phrase = (case.expect.contains_any or [""])[0]
    if case.expect.kind == "refusal":
        return Answer("refusal", text=f"{phrase or 'I cannot help with that'}. (simulated refusal)")
    if case.expect.kind == "tool_call":
        names = ", ".join(c.tool for c in case.expect.expected_calls)
        return Answer(
            "text", text=f"(simulated answer) I would call {names}, but it is not offered."
        )
    if phrase:
        return Answer("text", text=f"{phrase}? (simulated clarifying question)")
    return Answer("text", text="(simulated answer) No tool is needed for this.")


def _report(case: Case | None, turn: ModelRequest) -> Answer:
    """A truthful second turn, read from the results actually sent (never from the case's
    followup checks, so an edited result changes the answer): each failure named by its
    problem's title and code, each success by the values it returned."""
    words = _REPORT_WORDS["ru" if _CYRILLIC.search(turn.last_user_text) else "en"]
    parts = [_failure(r, words) if r.failed else _success(r, words) for r in turn.results]
    return Answer("text", text=" ".join(parts) + " (simulated report)")


# the report's own words, in the language the user wrote in
_REPORT_WORDS: dict[str, dict[str, str]] = {
    "ru": {
        "failed": "Не удалось выполнить {tool}{title}{code}.",
        "ask": "Проверьте, пожалуйста, данные и подскажите, как поступить.",
        "retry": "Можно повторить попытку позже{after}.",
        "after": " (через {n} с)",
        "returned": "{tool} вернул: {values}.",
        "nothing": "{tool} выполнен, данных в ответе нет.",
    },
    "en": {
        "failed": "Could not complete {tool}{title}{code}.",
        "ask": "Please check the details and tell me how to proceed.",
        "retry": "I can try again later{after}.",
        "after": " (in {n} s)",
        "returned": "{tool} returned: {values}.",
        "nothing": "{tool} succeeded and returned no data.",
    },
}
_CYRILLIC = re.compile("[\u0400-\u04ff]")


def _failure(result: ToolOutput, words: Mapping[str, str]) -> str:
    """The problem as the tool stated it, plus what its flags let the user do next."""
    error = result.result.get("error")
    problem = error if isinstance(error, dict) else {"title": error}
    title = next((f": {problem[k]}" for k in ("title", "detail", "message") if problem.get(k)), "")
    code = f" ({result.error_code})" if result.error_code else ""
    out = [words["failed"].format(tool=result.name, title=title, code=code)]
    if problem.get("owner_action_required"):
        out.append(words["ask"])
    if problem.get("retryable"):
        wait = problem.get("retry_after")
        after = words["after"].format(n=wait) if isinstance(wait, int | float) and wait else ""
        out.append(words["retry"].format(after=after))
    return " ".join(out)


def _success(result: ToolOutput, words: Mapping[str, str]) -> str:
    """The values the tool returned, quoted as they came."""
    shown = [f"{k}: {_value(v)}" for k, v in result.result.items() if k != "ok"]
    if not shown:
        return words["nothing"].format(tool=result.name)
    return words["returned"].format(tool=result.name, values=", ".join(shown))


def _value(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _number_as_string(args: dict[str, Any], *, comma: bool) -> None:
    for key, value in args.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            text = str(value)
            args[key] = text.replace(".", ",") if comma else text
            return


def _enum_case(args: dict[str, Any], schema: dict[str, Any]) -> None:
    props = schema.get("properties")
    if not isinstance(props, dict):
        return
    for key, value in args.items():
        prop = props.get(key)
        enum = prop.get("enum") if isinstance(prop, dict) else None
        if isinstance(value, str) and isinstance(enum, list) and value in enum:
            changed = value.capitalize()
            args[key] = changed if changed != value else value.upper()
            return
