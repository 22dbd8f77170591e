"""How sim-streambug draws its stream faults (sim/stream_faults.pick): the faults of one
group exclude each other and each member shows at its own rate, whatever its place in
the group, so a class late in a group is as reachable as its rate says."""

from __future__ import annotations

from collections import Counter

from toolstand.sim.personas import STREAM_FAULTS as PERSONAS
from toolstand.sim.stream_faults import STREAM_FAULTS, pick
from toolstand.sim.turn import Answer, Draws, SimCall

# two calls, a number, a call without arguments: every class can apply to it
TWO_CALLS = Answer("calls", "", [SimCall("quote", {"weight_kg": 2.5}), SimCall("status", {})])
N = 2000  # a share within 0.04 of its rate: over 3.5 standard deviations


def counts(rates: dict[str, float], api: str, n: int = N) -> Counter[str]:
    seen: Counter[str] = Counter()
    for i in range(n):
        seen.update(pick(rates, api, TWO_CALLS, Draws(i), Draws(~i)))
    return seen


def test_a_group_shares_one_draw_by_its_members_rates() -> None:
    rates = {"call_lost": 0.5, "index_reuse": 0.5, "args_lost": 0.2, "args_cumulative": 0.2}
    rates |= {"finish_wrong": 0.2, "finish_missing": 0.1}
    for i in range(N):  # one batch is either cut or re-indexed, never both
        shown = pick(rates, "openai-chat", TWO_CALLS, Draws(i), Draws(~i))
        assert len(shown & {"call_lost", "index_reuse"}) == 1
        assert len(shown & {"args_lost", "args_cumulative"}) <= 1
    seen = counts(rates, "openai-chat")
    for fault, rate in rates.items():  # the last of a group too (first drawn won: 0.1)
        assert abs(seen[fault] / N - rate) < 0.04, (fault, seen[fault] / N)
    # where the API cannot show a member, the others keep their own rates
    seen = counts({"call_lost": 0.5, "index_reuse": 0.5}, "anthropic")
    assert seen["index_reuse"] == 0 and abs(seen["call_lost"] / N - 0.5) < 0.04


def test_rates_of_a_group_past_one_are_shared_in_proportion() -> None:
    seen = counts({"call_lost": 1.0, "index_reuse": 1.0}, "openai-chat")
    assert seen["call_lost"] + seen["index_reuse"] == N
    assert abs(seen["index_reuse"] / N - 0.5) < 0.04
    assert counts({"index_reuse": 1.0}, "openai-chat")["index_reuse"] == N  # forced alone


def test_every_streambug_class_can_be_drawn() -> None:
    declared = PERSONAS["streambug"]
    assert set(declared) == set(STREAM_FAULTS)  # the persona carries every class
    seen: Counter[str] = Counter()
    for api in ("openai-chat", "openai-responses", "anthropic", "gemini"):
        seen += counts(declared, api, 300)
    assert set(seen) == set(declared)
