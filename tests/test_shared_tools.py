"""A load's identical tools are one ToolSpec: validated, checked and compiled once per
distinct tool, not once per case (issue 30: BFCL's 3,491 cases repeat their functions),
and every problem is still reported on every line that has it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from toolstand.lint.check import check_cases
from toolstand.sim import imported
from toolstand.sim.imported import OwnToolsIndex
from toolstand.spec import contract as contract_module
from toolstand.spec import meta_check
from toolstand.spec.cases import Case, load_case_set, parse_cases
from toolstand.spec.contract import Contract, build_validator
from toolstand.spec.violations import violations

EMPTY = Contract(name="own", version="1", tools=[])


def weather(**extra: Any) -> dict[str, Any]:
    return {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["c", "f"], **extra},
            },
            "required": ["city"],
        },
    }


FLIGHTS: dict[str, Any] = {
    "name": "book_flight",
    "description": "Book a flight",
    "parameters": {
        "type": "object",
        "properties": {"to": {"type": "string"}, "seats": {"type": "integer", "minimum": 1}},
    },
}


def spy(real: Callable[..., Any], calls: list[tuple[Any, ...]]) -> Callable[..., Any]:
    """``real``, noting the arguments of every call in ``calls``."""

    def noted(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    return noted


def line(cid: str, tools: list[dict[str, Any]], **accept: list[Any]) -> bytes:
    expect = {"kind": "tool_call", "tool": tools[0]["name"], "accept": accept}
    return orjson.dumps({"id": cid, "user": f"Ask {cid}", "tools": tools, "expect": expect})


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every validator built from here on, by the schema it was built for."""
    built: list[tuple[Any, ...]] = []
    monkeypatch.setattr(contract_module, "_VALIDATORS", {})
    monkeypatch.setattr(contract_module, "build_validator", spy(build_validator, built))
    return built


def test_validators_and_checks_are_built_once_per_distinct_tool(
    builds: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    walks: list[tuple[Any, ...]] = []
    monkeypatch.setattr(
        contract_module, "_type_problems", spy(contract_module._type_problems, walks)
    )
    lines = [line(f"w{i}", [weather()], city=["Paris"], unit=["c"]) for i in range(30)]
    lines += [line(f"f{i}", [FLIGHTS, weather()], to=["Oslo"]) for i in range(30)]
    cases = parse_cases(b"\n".join(lines) + b"\n").cases

    assert len(cases) == 60
    first = cases[0].tools
    assert first is not None
    assert all(c.tools and c.tools[-1] is first[0] for c in cases)
    # one walk of each distinct tool's parameters (the walk recurses: only its start)
    assert len([args for args in walks if args[1] == ("parameters",)]) == 2

    assert check_cases(parse_cases(b"\n".join(lines)), EMPTY) == []
    for c in cases:
        assert c.tools is not None
        for spec in c.tools:
            assert violations(spec, {"city": "Paris"}) == []
    schemas = [orjson.dumps(args[0]) for args in builds]
    assert len(schemas) == len(set(schemas))  # none built twice
    # the two tools' parameters only: the acceptable values ("Paris", "c", "Oslo") meet
    # parameter schemas of a type (and an enum) alone, checked without a validator
    assert sorted(schemas) == sorted(
        {orjson.dumps(s) for s in (weather()["parameters"], FLIGHTS["parameters"])}
    )


def test_the_files_of_a_set_share_their_tools_too(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(line("a1", [weather()]) + b"\n")
    (tmp_path / "b.jsonl").write_bytes(line("b1", [weather()]) + b"\n")
    a, b = load_case_set(tmp_path).cases
    assert a.tools is not None and b.tools is not None and a.tools[0] is b.tools[0]


def test_a_tool_that_differs_by_a_byte_is_its_own() -> None:
    """Key order is what the provider is sent: a reordered copy is not the same tool."""
    reordered = dict(reversed(weather().items()))
    props = weather()["parameters"]["properties"]
    swapped = {**weather(), "parameters": {**weather()["parameters"], "properties": dict(reversed(props.items()))}}  # fmt: skip
    cases = parse_cases(
        b"\n".join(line(c, [t]) for c, t in (("a", weather()), ("b", reordered), ("c", swapped)))
    ).cases
    tools = [c.tools[0] for c in cases if c.tools]
    assert len(tools) == 3
    assert len({id(t) for t in tools}) == 3
    assert list(tools[2].parameters["properties"]) == ["unit", "city"]


def test_a_broken_tool_is_reported_on_every_line_that_has_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Shared checking must not mean reported once: each case carries its own copy."""
    checks: list[tuple[Any, ...]] = []
    monkeypatch.setattr(meta_check, "_META_SEEN", {})
    monkeypatch.setattr(
        meta_check, "_jsonschema_problem", spy(meta_check._jsonschema_problem, checks)
    )
    bad_type = weather(type="strin")
    bad_meta = weather(minLength=-1)
    order = [
        ("t1", bad_type),
        ("m1", bad_meta),
        ("t2", bad_type),
        ("m2", bad_meta),
        ("m3", bad_meta),
    ]
    text = b"\n".join(line(cid, [tool]) for cid, tool in order)
    casefile = parse_cases(text, "f.jsonl", strict=False)
    assert [(p.line, p.path, p.message[:16]) for p in casefile.problems] == [
        (1, "$.tools[0].parameters.properties.unit.type", "unknown type 'st"),
        (3, "$.tools[0].parameters.properties.unit.type", "unknown type 'st"),
    ]
    found = check_cases(casefile, EMPTY)
    assert [(p.line, p.path) for p in found] == [
        (n, "$.tools[0].parameters.properties.unit.minLength") for n in (2, 4, 5)
    ]
    assert {p.message for p in found} == {
        "not a valid Draft 2020-12 schema: -1 is less than the minimum of 0"
    }
    assert len(checks) == 1  # jsonschema asked once, for the one broken schema


def case(cid: str, **accept: list[Any]) -> Case:
    data = orjson.loads(line(cid, [weather()], **accept))
    return Case.model_validate(data)


def test_the_simulator_reads_a_case_as_careful_only_when_it_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    viewed: list[tuple[Any, ...]] = []
    monkeypatch.setattr(imported, "sim_view", spy(imported.sim_view, viewed))
    index = OwnToolsIndex([case("a", city=["Oslo"]), case("b", city=[None, "Rome"])])
    assert viewed == []
    found = index.find((), {}, case_id="b")
    again = index.find((), {}, case_id="b")
    assert found is again and [args[0].id for args in viewed] == ["b"]
    assert found is not None and found.expect.expected_calls[0].arguments == {"city": "Rome"}
