"""Cases, contracts and configs on arbitrary bytes and on mutations of the real files:
either a result or a LoadError whose every problem names the file, a line (an int
inside the file, or None) and a JSON path starting with "$" — never another exception.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.mutation import mutate
from toolstand.spec.cases import CaseFile, parse_cases
from toolstand.spec.config import Config, parse_config
from toolstand.spec.contract import Contract, parse_contract
from toolstand.util.problems import LoadError, Problem

ROOT = Path(__file__).resolve().parents[2]
CASES_BYTES = (ROOT / "cases" / "delivery.jsonl").read_bytes()
CASE_LINES = [orjson.loads(line) for line in CASES_BYTES.splitlines() if line.strip()]
CONTRACT_BYTES = (ROOT / "contracts" / "delivery_tools.json").read_bytes()
CONFIG_BYTES = (ROOT / "config.example.json").read_bytes()
EXAMPLES = int(os.environ.get("TOOLSTAND_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_problems(problems: list[Problem], file: str, data: bytes) -> None:
    assert problems, "a LoadError without problems tells the user nothing"
    n_lines = data.count(b"\n") + 1
    for p in problems:
        assert isinstance(p, Problem)
        assert p.file == file
        assert p.line is None or (isinstance(p.line, int) and 1 <= p.line <= n_lines), p
        assert isinstance(p.path, str) and p.path.startswith("$"), p
        assert isinstance(p.message, str) and p.message.strip(), p
        assert str(p).startswith(file)


def load(parse: Any, data: bytes, file: str) -> Any:
    """The parser's result, or None after checking its LoadError."""
    try:
        return parse(data, file)
    except LoadError as exc:
        check_problems(exc.problems, file, data)
        return None


def byte_edits(data: bytes) -> st.SearchStrategy[bytes]:
    """The file cut short, with bytes inserted, or with bytes removed."""
    n = len(data)
    cut = st.integers(0, n).map(lambda k: data[:k])
    insert = st.tuples(st.integers(0, n), st.binary(min_size=1, max_size=6)).map(
        lambda t: data[: t[0]] + t[1] + data[t[0] :]
    )
    remove = st.tuples(st.integers(0, n), st.integers(1, 8)).map(
        lambda t: data[: t[0]] + data[t[0] + t[1] :]
    )
    return cut | insert | remove


# ---- cases ------------------------------------------------------------------------


def check_casefile(data: bytes) -> None:
    file = "cases/fuzz.jsonl"
    strict = load(lambda d, f: parse_cases(d, f, strict=True), data, file)
    lenient = parse_cases(data, file, strict=False)  # never raises: the TUI shows problems
    assert isinstance(lenient, CaseFile)
    if lenient.problems:
        check_problems(lenient.problems, file, data)
        assert strict is None
    else:
        assert isinstance(strict, CaseFile) and len(strict.cases) == len(lenient.cases)
    # every line is accounted for: blank, the version line, a case, or a named problem
    with_problem = {p.line for p in lenient.problems}
    for line in lenient.lines:
        if line.case is None and line.text.strip() and line.number not in with_problem:
            assert orjson.loads(line.text).keys() == {"cases_version"}, line
    ids = [c.id for c in lenient.cases]
    assert len(ids) == len(set(ids))


@FUZZ
@given(data=st.binary(max_size=300))
def test_cases_from_arbitrary_bytes(data: bytes) -> None:
    check_casefile(data)


@FUZZ
@given(data=byte_edits(CASES_BYTES))
def test_cases_file_with_bytes_cut_inserted_or_removed(data: bytes) -> None:
    check_casefile(data)


@FUZZ
@given(data=st.data())
def test_cases_from_mutated_real_lines(data: Any) -> None:
    picked = data.draw(st.lists(st.sampled_from(CASE_LINES), min_size=1, max_size=4))
    lines = [mutate(data, case) for case in picked]
    text = b"\n".join(orjson.dumps(line) for line in lines) + b"\n"
    check_casefile(text)


def test_a_line_that_is_not_utf8_is_a_problem_of_that_line() -> None:
    data = CASES_BYTES.splitlines()[0] + b"\n" + b'{"id": "x\xff"}\n' + CASES_BYTES.splitlines()[1]
    with_bad = parse_cases(data, "c.jsonl", strict=False)
    assert [(p.line, p.path) for p in with_bad.problems] == [(2, "$")]
    assert "UTF-8" in with_bad.problems[0].message
    assert [c.id for c in with_bad.cases] == ["direct_lookup", "missing_id"]


# ---- contracts --------------------------------------------------------------------


def check_contract(data: bytes) -> None:
    contract = load(parse_contract, data, "contracts/fuzz.json")
    if contract is not None:
        assert isinstance(contract, Contract)
        assert len({t.name for t in contract.tools}) == len(contract.tools)


@FUZZ
@given(data=st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_contract_from_arbitrary_bytes(data: bytes) -> None:
    check_contract(data)


@FUZZ
@given(data=byte_edits(CONTRACT_BYTES))
def test_contract_file_with_bytes_cut_inserted_or_removed(data: bytes) -> None:
    check_contract(data)


@FUZZ
@given(data=st.data())
def test_contract_mutated(data: Any) -> None:
    value = mutate(data, orjson.loads(CONTRACT_BYTES), max_mutations=3)
    check_contract(orjson.dumps(value, option=orjson.OPT_INDENT_2))


def test_contract_problems_point_at_their_line() -> None:
    value = orjson.loads(CONTRACT_BYTES)
    value["tools"][1]["parameters"]["properties"]["weight_kg"]["type"] = "decimal"
    data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    try:
        parse_contract(data, "c.json")
    except LoadError as exc:
        problems = exc.problems
    else:
        raise AssertionError("an unknown JSON Schema type was accepted")
    check_problems(problems, "c.json", data)
    (p,) = problems
    assert p.path.startswith("$.tools[1].parameters.properties.weight_kg")
    assert p.line is not None and b'"type": "decimal"' in data.splitlines()[p.line - 1]


def test_not_utf8_names_the_line_of_the_bad_byte() -> None:
    data = CONFIG_BYTES.replace(b'"repetitions"', b'"repetitions\xff"')
    line = data[: data.index(b"\xff")].count(b"\n") + 1
    for parse in (parse_config, parse_contract):
        try:
            parse(data, "f.json")
        except LoadError as exc:
            assert [(p.line, p.path) for p in exc.problems] == [(line, "$")]
            assert "UTF-8" in exc.problems[0].message
        else:
            raise AssertionError("bytes that are not UTF-8 were accepted")


# ---- configs ----------------------------------------------------------------------


def check_config(data: bytes) -> None:
    config = load(parse_config, data, "fuzz-config.json")
    if config is not None:
        assert isinstance(config, Config) and config.runs


@FUZZ
@given(data=st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_config_from_arbitrary_bytes(data: bytes) -> None:
    check_config(data)


@FUZZ
@given(data=byte_edits(CONFIG_BYTES))
def test_config_file_with_bytes_cut_inserted_or_removed(data: bytes) -> None:
    check_config(data)


@FUZZ
@given(data=st.data())
def test_config_mutated(data: Any) -> None:
    value = mutate(data, orjson.loads(CONFIG_BYTES), max_mutations=3)
    check_config(orjson.dumps(value, option=orjson.OPT_INDENT_2))


def test_the_real_files_load() -> None:
    assert len(parse_cases(CASES_BYTES, "c").cases) == len(CASE_LINES)
    assert parse_contract(CONTRACT_BYTES, "t").tools
    assert parse_config(CONFIG_BYTES, "cfg").runs
