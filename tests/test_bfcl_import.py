"""`toolstand import bfcl` on small BFCL-format files written for the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support import bfcl as fx
from toolstand.cli import main
from toolstand.decision import ModelDecision, ToolCall
from toolstand.importers.bfcl import check_categories, import_category
from toolstand.importers.bfcl_schema import convert_schema, to_tool
from toolstand.importers.bfcl_source import CATEGORIES, open_source
from toolstand.judge.verdict import judge
from toolstand.spec.cases import Case, load_case_set
from toolstand.spec.contract import Contract, tool_problems, validator_for
from toolstand.util.problems import LoadError


def imported(tmp_path: Path) -> dict[str, dict[str, Any]]:
    source = open_source(str(fx.write_folder(tmp_path / "data")))
    return {c["id"]: c for cat in CATEGORIES for c in import_category(source, cat)}


def test_bfcl_types_become_json_schema_with_declared_normalizers() -> None:
    plot = to_tool(fx.PLOT)
    assert plot.parameters["type"] == "object"
    points = plot.parameters["properties"]["points"]
    assert points["type"] == "array"
    assert points["items"]["type"] == "array"  # tuple
    assert points["items"]["items"] == {"type": "number", "x-normalize": ["int_as_float"]}
    assert "type" not in plot.parameters["properties"]["style"]  # any: no constraint
    assert plot.parameters["properties"]["labels"]["items"] == {
        "type": "string",
        "x-normalize": ["bfcl_string"],
    }
    nested = convert_schema(fx.ORDER["parameters"])["properties"]["new_preferences"]
    assert nested["type"] == "object"
    assert nested["properties"]["size"]["x-normalize"] == ["bfcl_string"]
    hypot = to_tool(fx.HYPOT).parameters["properties"]["z"]
    assert hypot == {"type": "number", "x-normalize": ["int_as_float"]}  # "optional" dropped
    assert plot.effect == "read"


def test_dotted_names_are_renamed_in_tools_and_answers_with_the_original_kept(
    tmp_path: Path,
) -> None:
    cases = imported(tmp_path)
    (tool,) = cases["simple_python_1"]["tools"]
    assert tool["name"] == "math_factorial" and tool["x-bfcl-name"] == "math.factorial"
    assert cases["simple_python_1"]["expect"]["tool"] == "math_factorial"
    (kept,) = cases["simple_python_0"]["tools"]
    assert kept["name"] == "calculate_triangle_area" and "x-bfcl-name" not in kept
    assert [c["tool"] for c in cases["parallel_multiple_0"]["expect"]["calls"]] == [
        "weather_get",
        "math_factorial",
    ]


def test_possible_answers_become_accept_and_may_omit(tmp_path: Path) -> None:
    cases = imported(tmp_path)
    tri = cases["simple_python_0"]["expect"]
    assert tri["accept"] == {"base": [10], "height": [5], "unit": ["units"]}
    assert tri["may_omit"] == ["unit"]
    plot = cases["simple_python_3"]["expect"]
    assert "style" not in plot["accept"]  # only "": may be left out, no value accepted
    assert plot["may_omit"] == ["style", "labels"]
    assert plot["accept"]["points"] == [[[1.0, 2.0], [3.0, 4.0]]]
    assert plot["accept"]["labels"] == [["a", "b"]]


def test_nested_dict_answers_expand_into_the_dicts_they_accept(tmp_path: Path) -> None:
    order = imported(tmp_path)["live_simple_0-0-0"]["expect"]
    assert order["accept"]["new_preferences"] == [
        {"size": "large", "milk_type": "coconut"},
        {"size": "large", "milk_type": "coconut milk"},
    ]
    assert order["accept"]["extras"] == [[{"name": "foam"}], [{"name": "milk foam"}]]
    assert order["may_omit"] == ["extras"]


def test_each_category_kind_has_its_expectation(tmp_path: Path) -> None:
    cases = imported(tmp_path)
    assert len(cases) == 15
    par = cases["parallel_0"]["expect"]
    assert par["order"] == "any" and [c["accept"] for c in par["calls"]] == [
        {"number": [5]},
        {"number": [6]},
    ]
    assert cases["irrelevance_0"]["expect"] == {"kind": "text", "must_not_call": True}
    assert cases["live_irrelevance_0-0-0"]["expect"] == {"kind": "text", "must_not_call": True}
    assert cases["live_relevance_0-0-0"]["expect"] == {"kind": "tool_call"}
    assert cases["multiple_0"]["expect"]["tool"] == "weather_get"
    assert [t["name"] for t in cases["multiple_0"]["tools"]] == ["weather_get", "math_factorial"]
    assert cases["live_parallel_0-0-0"]["expect"]["calls"][1]["accept"] == {"city": ["Quito"]}


def test_a_default_of_none_makes_the_parameter_nullable_and_says_so(tmp_path: Path) -> None:
    (tool, _) = imported(tmp_path)["live_multiple_1-5-0"]["tools"]
    props = tool["parameters"]["properties"]
    assert props["color"]["type"] == ["string", "null"] and props["color"]["x-bfcl-nullable"]
    assert props["size"]["enum"] == ["S", "M", "L", None]
    assert props["size"]["type"] == ["string", "null"]
    assert props["size"]["x-normalize"] == ["bfcl_string"]
    assert props["price_max"]["type"] == ["number", "null"]
    assert props["filters"]["type"] == ["object", "null"]
    assert props["filters"]["properties"]["sale"] == {"type": "boolean", "x-normalize": []}
    # no default, another default, or "any" (null is a value of it already): as they were
    for name in ("category", "brand", "tags"):
        assert "x-bfcl-nullable" not in props[name]
    assert props["category"]["type"] == "string" and "type" not in props["tags"]
    # the contract's meta-validation (Draft 2020-12 and toolstand's own keys) takes it
    assert tool_problems([to_tool(fx.SEARCH)], ("tools",)) == []


def test_integers_and_booleans_declare_no_leniency() -> None:
    """BFCL takes "10" for an integer as wrong: its integers declare no normalizer, so
    verdict_normalized does not repair them (design.md: declared leniencies only)."""
    given = {"type": "dict", "properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}}}
    props = convert_schema(given)["properties"]
    assert props == {
        "n": {"type": "integer", "x-normalize": []},
        "b": {"type": "boolean", "x-normalize": []},
    }


def test_a_declared_default_outside_the_schema_is_accepted_and_marked() -> None:
    """live_simple_152-95-9: unit's enum is seconds/milliseconds, its default "N/A", and
    BFCL's answer passes "N/A"; live_multiple_338-133-2: an integer year whose default
    (and description) is 'dontcare'. Each takes its own default, and only it."""
    unit = {"type": "string", "enum": ["seconds", "milliseconds"], "default": "N/A"}
    assert convert_schema(unit) == {
        "type": "string",
        "enum": ["seconds", "milliseconds", "N/A"],
        "default": "N/A",
        "x-normalize": ["bfcl_string"],
        "x-bfcl-default-member": True,
    }
    year = {"type": "integer", "description": "Use 'dontcare' for any.", "default": "dontcare"}
    widened = convert_schema(year)
    assert widened == {
        "description": "Use 'dontcare' for any.",
        "default": "dontcare",
        "x-normalize": [],
        "anyOf": [{"type": "integer"}, {"const": "dontcare"}],
        "x-bfcl-default-member": True,
    }
    check = validator_for(widened)
    assert [check.is_valid(v) for v in (2019, "dontcare", "2019", None)] == [
        True,
        True,
        False,
        False,
    ]
    # a default the schema takes already, or none at all: as it was
    kept = {"type": "string", "enum": ["a", "b"], "default": "a"}
    assert convert_schema(kept) == {**kept, "x-normalize": ["bfcl_string"]}


def test_an_enum_of_scalars_on_an_array_goes_onto_its_items() -> None:
    """live_multiple_146-58-0's metrics: as written no list is one of the strings."""
    given = {"type": "array", "items": {"type": "string"}, "enum": ["co2", "noise"]}
    assert convert_schema(given) == {
        "type": "array",
        "items": {"type": "string", "enum": ["co2", "noise"], "x-normalize": ["bfcl_string"]},
    }
    lists = {"type": "array", "enum": [["a"], ["b"]]}  # an enum of lists means what it says
    assert convert_schema(lists) == lists


def test_bfcls_own_answer_with_none_for_a_default_none_parameter_passes(
    tmp_path: Path,
) -> None:
    """live_multiple_23-5-0's shape: search_products(price_max=None, ...). BFCL accepts
    BFCL's own answer; before the importer widened the type it was wrong_type."""
    case = Case.model_validate(imported(tmp_path)["live_multiple_1-5-0"])
    arguments = {"category": "shoes", "color": "red", "size": None, "price_max": None}
    call = ToolCall("search_products", arguments, orjson.dumps(arguments).decode(), "c0")
    empty = Contract(name="bfcl", version="t", tools=[])
    j = judge(case, ModelDecision(kind="tool_call", calls=[call]), case.contract_for(empty))
    assert (j["verdict"], j["verdict_normalized"], j["errors"]) == ("pass", "pass", [])
    # null is accepted where the default is null only: not for the required category
    arguments = {**arguments, "category": None}
    call = ToolCall("search_products", arguments, orjson.dumps(arguments).decode(), "c0")
    j = judge(case, ModelDecision(kind="tool_call", calls=[call]), case.contract_for(empty))
    assert [(e["code"], e.get("subcode")) for e in j["errors"]] == [
        ("invalid_arguments", "wrong_type"),
        ("argument_mismatch", None),
    ]


def test_a_system_message_goes_before_the_first_user_message(tmp_path: Path) -> None:
    msgs = imported(tmp_path)["live_simple_0-0-0"]["messages"]
    assert msgs == [
        {
            "role": "user",
            "content": "You take orders.\n\nA large latte with coconut milk, order 42.",
        }
    ]


def test_a_wheel_reads_as_the_folder_does(tmp_path: Path) -> None:
    folder = imported(tmp_path)
    source = open_source(str(fx.write_wheel(tmp_path)))
    assert source.version == "2099.1.1"
    wheel = {c["id"]: c for cat in CATEGORIES for c in import_category(source, cat)}
    source.close()
    assert wheel == folder


def test_refused_and_unknown_categories_say_why() -> None:
    with pytest.raises(LoadError) as exc:
        check_categories(["simple_java", "multi_turn_base", "nonsense"])
    messages = [p.message for p in exc.value.problems]
    assert "simple_java: not imported: answers are Java source" in messages[0]
    assert "multi-turn" in messages[1]
    assert messages[2].startswith("unknown 'nonsense'; allowed: simple_python, multiple")
    assert check_categories(None) == list(CATEGORIES)


def test_installed_is_refused_when_the_package_is_absent() -> None:
    with pytest.raises(LoadError, match="bfcl_eval package is not importable"):
        open_source("installed")


def test_import_check_run_report_end_to_end_on_the_simulator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = fx.write_wheel(tmp_path)
    out = tmp_path / "bfcl"
    assert main(["import", "bfcl", str(wheel), "--out", str(out)]) == 0
    said = capsys.readouterr().err
    assert "imported 15 BFCL 2099.1.1 cases" in said
    assert "4 parameters with default None take null, marked x-bfcl-nullable" in said
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{c}.jsonl" for c in CATEGORIES] + ["config.json", "contract.json"]
    )
    first = orjson.loads((out / "parallel.jsonl").read_bytes().splitlines()[0])
    assert first == {"cases_version": "bfcl-2099.1.1"}
    assert load_case_set(out).cases_version == "bfcl-2099.1.1"
    capsys.readouterr()
    args = ["check", "--tools", str(out / "contract.json"), "--cases", str(out)]
    assert main(args) == 0  # the meta-schema and toolstand's own checks take x-bfcl-nullable
    assert "x-bfcl-nullable" not in capsys.readouterr().out
    history = tmp_path / "run.jsonl"
    assert main(["run", "--config", str(out / "config.json"), "--output", str(history)]) == 0
    records = [orjson.loads(line) for line in history.read_bytes().splitlines()]
    attempts = [r for r in records if r["type"] == "attempt"]
    assert len(attempts) == 15
    assert {r["case_id"]: r["judgement"]["verdict"] for r in attempts} == dict.fromkeys(
        imported(tmp_path / "again"), "pass"
    )
    assert all(r["judgement"]["verdict_normalized"] == "pass" for r in attempts)
    capsys.readouterr()
    assert main(["report", str(history), "--json"]) == 0
    (result,) = orjson.loads(capsys.readouterr().out)["results"]
    assert result["normalized_pass_rate"]["numerator"] == 15
    assert result["pass_rate"]["denominator"] == 15
    # the import refuses to overwrite what it wrote
    assert main(["import", "bfcl", str(wheel), "--out", str(out)]) == 2


def test_installed_reads_the_importable_package_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "site" / "bfcl_eval"
    fx.write_folder(package / "data")
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    source = open_source("installed")
    assert source.folder == package / "data"
    cases = import_category(source, "parallel")
    assert [c["id"] for c in cases] == ["parallel_0"]


def test_an_imported_run_rejudges_to_the_same_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bfcl"
    assert main(["import", "bfcl", str(fx.write_wheel(tmp_path)), "--out", str(out)]) == 0
    config = orjson.loads((out / "config.json").read_bytes())
    config["runs"][0]["model"] = "sim-sloppy"  # some fail: the verdicts say something
    config["repetitions"] = 3
    (out / "config.json").write_bytes(orjson.dumps(config))
    history, again = tmp_path / "h.jsonl", tmp_path / "again.jsonl"
    assert main(["run", "--config", str(out / "config.json"), "--output", str(history)]) == 0
    capsys.readouterr()
    assert main(["rejudge", str(history), "--output", str(again)]) == 0
    assert "0 attempts changed verdict" in capsys.readouterr().err

    def verdicts(path: Path) -> list[tuple[str, str, str]]:
        records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
        return [
            (r["case_id"], r["judgement"]["verdict"], r["judgement"]["verdict_normalized"])
            for r in records
            if r["type"] == "attempt" and r["judgement"]
        ]

    before = verdicts(history)
    assert before == verdicts(again)
    assert {v for _, v, _ in before} == {"pass", "fail"}


def _one_entry(root: Path, question: Any, truth: Any) -> str:
    """A data folder whose simple_python holds one entry with ``question`` and ``truth``."""
    function = {
        "name": "f",
        "parameters": {"type": "dict", "properties": {"a": {"type": "string"}}},
    }
    entry = {"id": "simple_python_0", "question": question, "function": [function]}
    (root / "possible_answer").mkdir(parents=True)
    (root / "BFCL_v4_simple_python.json").write_bytes(orjson.dumps(entry) + b"\n")
    answer = {"id": "simple_python_0", "ground_truth": truth}
    (root / "possible_answer" / "BFCL_v4_simple_python.json").write_bytes(orjson.dumps(answer))
    return str(root)


ASKED = [[{"role": "user", "content": "hi"}]]


@pytest.mark.parametrize(
    ("question", "truth", "said"),
    [
        (ASKED, [{"f": {"a": "xyz"}}], "ground_truth: f: each parameter lists its values"),
        (ASKED, [{"f": ["xyz"]}], "ground_truth: f: each parameter lists its values"),
        (ASKED, [["f"]], "ground_truth: each item is {function: {parameter: [values]}}"),
        (ASKED, {"f": 1}, "ground_truth: a list of {function: {parameter: [values]}}"),
        ([["hi"]], [{"f": {"a": ["x"]}}], "question: a turn is a list of {role, content} objects"),
        (ASKED[0], [{"f": {"a": ["x"]}}], "question: a turn is a list of {role, content} objects"),
    ],
)
def test_an_entry_of_another_shape_is_refused_naming_it(
    tmp_path: Path, question: Any, truth: Any, said: str
) -> None:
    source = open_source(_one_entry(tmp_path / "data", question, truth))
    with pytest.raises(LoadError) as caught:
        import_category(source, "simple_python")
    (problem,) = caught.value.problems
    assert (problem.line, problem.message) == (1, f"simple_python_0: {said}")


def test_a_system_text_that_is_not_a_string_is_kept_as_text(tmp_path: Path) -> None:
    question = [[{"role": "system", "content": 7}, {"role": "user", "content": "hi"}]]
    source = open_source(_one_entry(tmp_path / "data", question, [{"f": {"a": ["x"]}}]))
    (case,) = import_category(source, "simple_python")
    assert case["messages"] == [{"role": "user", "content": "7\n\nhi"}]


@pytest.mark.parametrize("parameters", ["x", {"type": "dict", "properties": [1]}])
def test_a_function_whose_parameters_are_no_object_is_refused(parameters: Any) -> None:
    with pytest.raises(ValueError, match="f: 'parameters' is an object, its 'properties' one too"):
        to_tool({"name": "f", "parameters": parameters})


def test_an_id_given_twice_is_refused_rather_than_written(tmp_path: Path) -> None:
    root = Path(_one_entry(tmp_path / "data", ASKED, [{"f": {"a": ["x"]}}]))
    questions = root / "BFCL_v4_simple_python.json"
    questions.write_bytes(questions.read_bytes() * 2)
    with pytest.raises(LoadError) as caught:
        import_category(open_source(str(root)), "simple_python")
    (problem,) = caught.value.problems
    assert (problem.line, problem.path) == (2, "$.id")
    assert problem.message == "duplicate id 'simple_python_0' (first on line 1)"


def test_a_refused_entry_is_named_by_its_line_past_blank_lines(tmp_path: Path) -> None:
    root = Path(_one_entry(tmp_path / "data", [["hi"]], [{"f": {"a": ["x"]}}]))
    questions = root / "BFCL_v4_simple_python.json"
    questions.write_bytes(b"\n\n" + questions.read_bytes())
    with pytest.raises(LoadError) as caught:
        import_category(open_source(str(root)), "simple_python")
    assert caught.value.problems[0].line == 3
