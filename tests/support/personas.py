"""Building the simulator's personas' input by hand: a case's first turn as a
``ModelRequest``, the contract's effects, and a second turn after a tool result."""

from __future__ import annotations

from toolstand.sim.invent import hints_for
from toolstand.sim.turn import Choice, ModelRequest, PriorCall, SimCall, ToolOutput
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract


def turn_for(
    case: Case,
    contract: Contract,
    *,
    api: str = "openai-chat",
    reverse: bool = False,
    choice: Choice = "auto",
) -> ModelRequest:
    specs = contract.subset(case.active_tools)
    if reverse:
        specs = specs[::-1]
    conversation = tuple((m["role"], m["content"].strip()) for m in case.conversation)
    request = ModelRequest(
        api, "sim-test", conversation, {t.name: t.parameters for t in specs}, choice
    )
    request.hints = hints_for(contract.tools)
    return request


def effects(contract: Contract) -> dict[str, str]:
    return {t.name: t.effect for t in contract.tools}


def second_turn(case: Case, contract: Contract, call: SimCall, result: dict) -> ModelRequest:
    turn = turn_for(case, contract)
    turn.calls = [PriorCall("call_1", call.name, call.arguments)]
    turn.results = [ToolOutput("call_1", call.name, result)]
    return turn
