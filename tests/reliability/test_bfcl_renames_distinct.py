"""Issue 31, L4: renaming BFCL's function names for the wire never gives two tools of
one entry the same name, and the expectation names the tool the answer meant."""

from __future__ import annotations

from typing import Any

from toolstand.importers.bfcl import to_case
from toolstand.spec.cases import Case
from toolstand.spec.contract import tool_problems


def _fn(name: str) -> dict[str, Any]:
    props = {"n": {"type": "integer", "description": "a number"}}
    return {"name": name, "description": name, "parameters": {"type": "dict", "properties": props}}


def _case(names: list[str], answer: str) -> Case:
    entry: dict[str, Any] = {"id": "multiple_1", "question": [[{"role": "user", "content": "5!"}]]}
    entry["function"] = [_fn(n) for n in names]
    return Case.model_validate(to_case("multiple", entry, [{answer: {"n": [5]}}]))


def test_a_dotted_name_beside_its_renamed_twin_stays_apart() -> None:
    case = _case(["math_factorial", "math.factorial"], "math.factorial")
    assert case.tools is not None
    names = [t.name for t in case.tools]
    assert names == ["math_factorial", "math_factorial_2"]
    assert case.tools[1].bfcl_name == "math.factorial"
    assert case.expect.tool == "math_factorial_2"  # the tool the answer meant
    assert tool_problems(case.tools, ("tools",)) == []
    # and the name that needed no rename keeps it, whatever the order
    other = _case(["math.factorial", "math_factorial"], "math_factorial")
    assert other.tools is not None
    assert [t.name for t in other.tools] == ["math_factorial_2", "math_factorial"]
    assert other.expect.tool == "math_factorial"


def test_two_long_names_cut_to_64_stay_apart() -> None:
    long = "a" * 64
    case = _case([long + ".x", long + ".y"], long + ".y")
    assert case.tools is not None
    names = [t.name for t in case.tools]
    assert len(set(names)) == 2 and all(len(n) <= 64 for n in names)
    assert case.expect.tool == names[1]
    assert tool_problems(case.tools, ("tools",)) == []
