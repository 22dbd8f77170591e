"""One vocabulary: the closed sets toolstand speaks in and the records that travel.

Each closed set is a ``Literal`` and its tuple is derived from it with ``get_args``,
so the name is spelled once (httpx's ``_types.py`` does the same). The records are
``TypedDict``s of what the runner and the judge actually write (docs/records.md):
a reader gets its keys checked by mypy at no runtime cost, since a TypedDict is a
plain ``dict`` at runtime.
"""

# no ``from __future__ import annotations``: TypedDict reads NotRequired from evaluated
# annotations, and tests/test_types.py holds real records to __required_keys__
from typing import Any, Literal, NotRequired, TypedDict, get_args

Api = Literal["openai-chat", "openai-responses", "anthropic", "gemini"]
APIS: tuple[Api, ...] = get_args(Api)
# the tool JSON `contract import --from` reads: OpenAI's two forms are one
ProviderApi = Literal["openai", "anthropic", "gemini"]
PROVIDER_APIS: tuple[ProviderApi, ...] = get_args(ProviderApi)

Mode = Literal["auto", "forced", "no_tools", "reversed"]
MODES: tuple[Mode, ...] = get_args(Mode)

Verdict = Literal["pass", "fail"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)

Effect = Literal["read", "prepare", "execute"]
EFFECTS: tuple[Effect, ...] = get_args(Effect)

# the request header naming the case a simulated run asks about: the simulator answers
# that case, not the first one with the same user text (sent to base_url "sim" only)
SIM_CASE_HEADER = "x-toolstand-case"

# the feedback a repair turn sends (design.md, Repair turn), each its own arm
FeedbackStyle = Literal["traceback", "path_value", "allowed", "allowed_prose"]
FEEDBACK_STYLES: tuple[FeedbackStyle, ...] = get_args(FeedbackStyle)
# the header toolstand's client names an attempt's repetition in, sent to the embedded
# simulator only: its seeded draws then depend on the repetition, never on arrival order
REPETITION_HEADER = "x-toolstand-repetition"
# the faults sim-flaky draws (a config's ``sim.fault_rates`` names them), in the fixed
# order its seeded draw walks them
SimFault = Literal[
    "rate_limited", "server_error", "overloaded", "timeout", "torn_body", "html_502", "reset"
]
SIM_FAULTS: tuple[SimFault, ...] = get_args(SimFault)
# the server bug classes the simulator streams (providers.md S6.2; a config's
# ``sim.stream_faults`` names them), in the fixed order its seeded draw walks them
StreamFault = Literal[
    "args_whole",
    "args_empty_zero_param",
    "args_lost",
    "call_lost",
    "value_coerced",
    "id_missing",
    "id_per_delta",
    "index_reuse",
    "index_duplicate",
    "name_repeated",
    "opener_with_args",
    "args_cumulative",
    "finish_wrong",
    "finish_missing",
    "finish_repeated",
    "finish_with_delta",
    "usage_elsewhere",
    "error_inband",
    "no_terminal",
    "done_extra",
    "comment_keepalive",
    "field_order",
    "json_padding",
    "choices_null",
]
STREAM_FAULT_IDS: tuple[StreamFault, ...] = get_args(StreamFault)

ToolChoice = Literal["auto", "none", "required"]
TOOL_CHOICES: tuple[ToolChoice, ...] = get_args(ToolChoice)
# what a request carries: one of the keywords, or the name of the one tool it forces
RequestToolChoice = ToolChoice | str

ErrorCode = Literal[
    "missing_call",
    "unexpected_call",
    "wrong_tool",
    "call_count_mismatch",
    "invalid_json",
    "invalid_arguments",
    "argument_mismatch",
    "text_mismatch",
    "unsafe_call",
    "unexpected_refusal",
    "truncated",
    "policy_blocked",
    "stream_mismatch",
    "false_success",
    "repeated_call",
    "recovery_mismatch",
]
ERROR_CODES: tuple[ErrorCode, ...] = get_args(ErrorCode)

SchemaSubcode = Literal[
    "missing_required",
    "additional_property",
    "wrong_type",
    "enum",
    "pattern",
    "range",
    "length",
    "format",
    "depth",
]
SCHEMA_SUBCODES: tuple[SchemaSubcode, ...] = get_args(SchemaSubcode)
# the sub-code of an ``invalid_json`` whose text parses but writes one key twice in an
# object: a first-wins parser and a last-wins parser read different calls (issue 31 M11)
JsonSubcode = Literal["duplicate_key"]

RepairClass = Literal["raw_valid", "repairable", "invalid"]


class JudgeError(TypedDict):
    """One entry of ``judgement.errors``; only ``code`` and ``turn`` are always there."""

    code: ErrorCode
    turn: int
    call_index: NotRequired[int]
    subcode: NotRequired[SchemaSubcode | JsonSubcode]
    path: NotRequired[str]
    expected: NotRequired[Any]
    actual: NotRequired[Any]
    message: NotRequired[str]


class CallRow(TypedDict):
    """One entry of ``judgement.calls``: a call the model made, as the judge saw it."""

    index: int
    name: str
    known_tool: bool
    offered: bool
    matched_expected: int | None
    right_tool: bool
    repair: RepairClass
    repaired_arguments: dict[str, Any] | None
    repairs: list[dict[str, Any]]
    exact: bool | None
    normalized: bool | None
    # valid after the declared repairs and x-normalize (the normalized verdict's view);
    # rows judged before it existed lack it (readers use .get)
    normalized_valid: bool
    unsafe: bool


class JudgeMetrics(TypedDict):
    """``judgement.metrics``: the first turn's booleans and counts the report sums."""

    expects_call: bool
    called: bool
    decision_correct: bool
    tool_selection_correct: bool | None
    calls_made: int
    calls_unknown_tool: int
    calls_schema_valid: int
    exact_denominator: int
    exact_correct: int
    normalized_correct: int
    unsafe: bool
    signature: str


class Judgement(TypedDict):
    """The first turn's judgement (with the second turn's errors merged in the record)."""

    verdict: Verdict
    # the verdict with each call's normalized match counted (design.md); every judgement
    # written has it, a record judged before it existed does not (readers use .get)
    verdict_normalized: Verdict
    errors: list[JudgeError]
    calls: list[CallRow]
    unsafe: bool
    flags: list[str]
    metrics: JudgeMetrics


class FollowupJudgement(TypedDict):
    """The second turn's judgement."""

    verdict: Verdict
    errors: list[JudgeError]
    passed: bool


class TransportErrorRecord(TypedDict):
    """``transport_error`` when the exchange failed; ``status`` None without an answer."""

    code: str
    message: str
    status: int | None


class Usage(TypedDict):
    input_tokens: int | None
    output_tokens: int | None


class ToolResultRecord(TypedDict):
    call_id: str | None
    name: str
    result: Any
    call_id_synthesized: bool


class _LaterTurnRecord(TypedDict):
    """What every turn after the first records: the results sent before it, and its
    exchange (the keys the second turn and each repair turn share)."""

    tool_results: list[ToolResultRecord]
    transport_error: TransportErrorRecord | None
    elapsed_ms: float
    retries: int
    decision: dict[str, Any] | None
    tries: list[dict[str, Any]]
    request_hash: str
    request: dict[str, Any]
    response: dict[str, Any]


class SecondTurnRecord(_LaterTurnRecord):
    """``second_turn`` of an attempt record when the second turn ran."""

    judgement: FollowupJudgement | None


class RepairSummary(TypedDict):
    """``repair`` of an attempt record in a run with repair turns (repair_turns.summary)."""

    needed: bool
    turns: int
    valid_after: int | None
    passed_after: int | None
    transport_error: str | None
    input_tokens: int
    output_tokens: int


class RepairTurnRecord(_LaterTurnRecord):
    """One entry of ``repair_turns``: the feedback sent and what came back."""

    index: int
    feedback: FeedbackStyle
    valid: bool
    judgement: Judgement | None
    usage: Usage


class AttemptRecord(TypedDict):
    """One attempt line of a run's JSONL, exactly the keys the runner writes; the last
    three only in runs whose config asks for repair turns."""

    type: Literal["attempt"]
    schema_version: int
    run_id: str
    provider: str
    api: Api
    model: str
    simulated: bool
    case_id: str
    category: str | None
    mode: Mode
    attempt: int
    started_at: str
    elapsed_ms: float
    latency_ms: float | None
    retries: int
    transport_error: TransportErrorRecord | None
    decision: dict[str, Any] | None
    judgement: Judgement | None
    usage: Usage
    cost_usd: float | None
    adapter_version: str
    toolstand_version: str
    api_settings: dict[str, Any]
    tool_choice: RequestToolChoice | None
    offered_tools: list[str]
    blocked_tools: list[str]
    user: str
    schema_notes: list[dict[str, Any]]
    tries: list[dict[str, Any]]
    request_hash: str
    request: dict[str, Any]
    response: dict[str, Any]
    second_turn: SecondTurnRecord | None
    # the stream arm, and turn 1's times in ms after its final try was sent: the status
    # line (every attempt), the first event with model output and the first opening a
    # tool call (streamed attempts; None otherwise)
    stream: bool
    ttfb_ms: float | None
    first_token_ms: float | None
    first_call_ms: float | None
    # the run's identity (spec/identity.py); None from a target made without one
    run_identity: str | None
    feedback: NotRequired[FeedbackStyle]
    repair: NotRequired[RepairSummary]
    repair_turns: NotRequired[list[RepairTurnRecord]]
    # turn 1 (and turn 2) copied from the first feedback arm of the same repetition
    first_turn_shared: NotRequired[bool]
