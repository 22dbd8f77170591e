"""Issue 13, items 4 and 15: what a provider, a history, a case or a config says never
drives the terminal, breaks the JUnit XML, or runs as a spreadsheet formula.

The hostile strings are the ones from the issue: an OSC title plus a screen clear, a
NUL, a bidi override, and a ``=HYPERLINK(...)`` case id.
"""

from __future__ import annotations

import contextlib
import csv
import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.records import attempt, err, header, judgement, transport, write_jsonl
from toolstand.cli import main
from toolstand.lint.check import run_check
from toolstand.reporting.commands import cmd_compare, cmd_report
from toolstand.reporting.formats import write_errors_csv, write_junit
from toolstand.reporting.metrics import compute_files
from toolstand.run import rejudge
from toolstand.run.rejudge import Change
from toolstand.spec.cases import parse_cases
from toolstand.spec.config import parse_config
from toolstand.util.problems import LoadError

ROOT = Path(__file__).resolve().parents[2]
ESC = "\x1b]0;TITLE\x07\x1b[2J"
RAW = ("\x1b", "\x07", "\x00", "\x9b")  # what must never reach a terminal or an XML file
FAIL = judgement(errors=[err("argument_mismatch", expected={"n": 1}, actual=ESC)])


def _no_raw(text: str) -> None:
    assert not [c for c in RAW if c in text], repr(text)


def _hostile_history(tmp_path: Path) -> Path:
    recs: list[dict[str, Any]] = [header(run_id=f"run{ESC}")]
    for n in (1, 2):
        recs.append(attempt(f"case{ESC}", n, provider=f"p{ESC}", model="m\x00\x9b", j=FAIL))
    recs.append(attempt("nul\x00bidi\u202e\ufffe", 1, provider=f"p{ESC}", model="m\x00\x9b"))
    recs.append(
        attempt("t", 1, provider=f"p{ESC}", model="m\x00\x9b", transport_error=transport("x", ESC))
    )
    return write_jsonl(tmp_path / "run.jsonl", recs)


def test_report_text_spells_control_characters(tmp_path: Path) -> None:
    path = _hostile_history(tmp_path)
    out = io.StringIO()
    assert cmd_report([str(path)], False, None, None, out=out) == 0
    text = out.getvalue()
    _no_raw(text)
    assert "p\\x1b]0;TITLE\\x07\\x1b[2J / m\\x00\\x9b (simulated) · mode auto" in text
    assert "run run\\x1b]0;TITLE\\x07\\x1b[2J" in text
    assert "case\\x1b]0;TITLE\\x07\\x1b[2J 0/2" in text


def test_report_json_stays_json(tmp_path: Path) -> None:
    out = io.StringIO()
    assert cmd_report([str(_hostile_history(tmp_path))], True, None, None, out=out) == 0
    _no_raw(out.getvalue())  # JSON escapes them itself
    assert orjson.loads(out.getvalue())["results"][0]["provider"] == f"p{ESC}"


def test_report_warnings_on_stderr_spell_them_too(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(orjson.dumps(header()) + b"\n" + orjson.dumps({"type": ESC}) + b"\n")
    err_out = io.StringIO()
    with contextlib.redirect_stderr(err_out):
        cmd_report([str(path)], False, None, None, out=io.StringIO())
    _no_raw(err_out.getvalue())
    assert "unknown record type '\\x1b]0;TITLE\\x07\\x1b[2J' skipped" in err_out.getvalue()


def test_compare_output_spells_control_characters(tmp_path: Path) -> None:
    path = _hostile_history(tmp_path)
    other = write_jsonl(tmp_path / "b.jsonl", [header(), attempt("a", provider=f"q{ESC}")])
    out, err_out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err_out):
        cmd_compare(str(path), str(path), 0.05, False, out=out)
        cmd_compare(str(path), str(other), 0.05, False, out=out)
    _no_raw(out.getvalue() + err_out.getvalue())
    assert "p\\x1b]0;TITLE\\x07\\x1b[2J/m\\x00\\x9b/auto" in out.getvalue() + err_out.getvalue()


def test_rejudge_listing_spells_control_characters(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    change = Change(f"p{ESC}/m case{ESC}#1", "pass", "fail", [], ["x"])
    monkeypatch.setattr(rejudge, "rejudge_file", lambda *a, **k: [change])
    assert rejudge.cmd_rejudge("in.jsonl", "out.jsonl") == 0
    got = capsys.readouterr()
    _no_raw(got.out + got.err)
    assert got.out.startswith("p\\x1b]0;TITLE\\x07\\x1b[2J/m case\\x1b]0;TITLE")


def test_junit_is_valid_xml_whatever_the_history_holds(tmp_path: Path) -> None:
    report = compute_files([_hostile_history(tmp_path)], collect_failures=True)
    buf = io.BytesIO()
    write_junit(report, buf)
    root = ET.fromstring(buf.getvalue())  # raises on a character XML 1.0 forbids
    cases = [tc.get("name") for tc in root.iter("testcase")]
    assert "case\\x1b]0;TITLE\\x07\\x1b[2J" in cases
    assert "nul\\x00bidi\u202e\\ufffe" in cases
    suite = next(root.iter("testsuite"))
    assert suite.get("name") == "p\\x1b]0;TITLE\\x07\\x1b[2J/m\\x00\\x9b/auto"


def test_error_csv_quotes_formulas_and_keeps_its_columns(tmp_path: Path) -> None:
    recs = [
        header(),
        attempt(
            '=HYPERLINK("http://evil","x")',
            j=judgement(
                errors=[
                    err("argument_mismatch", expected=-5, actual="+1+cmd|' /C calc'!A0"),
                    err("argument_mismatch", expected="@SUM(1)", actual="\tx"),
                ]
            ),
        ),
    ]
    report = compute_files([write_jsonl(tmp_path / "r.jsonl", recs)], collect_failures=True)
    buf = io.StringIO(newline="")
    assert write_errors_csv(report, buf) == 2
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    assert rows[0] == [
        *("provider", "model", "mode", "case_id", "attempt", "error_code", "expected", "actual")
    ]
    assert rows[1][3] == '\'=HYPERLINK("http://evil","x")'
    assert rows[1][6:] == ["-5", "'+1+cmd|' /C calc'!A0"]  # a plain number is no formula
    assert rows[2][6:] == ["'@SUM(1)", "'\tx"]


@pytest.mark.parametrize(
    "case_id", ["a\x1b[2J", "a\x00b", "bidi\u202eevil", "a\x9bb", "tab\tid", "line\u2028sep"]
)
def test_check_refuses_an_id_that_does_not_print(tmp_path: Path, case_id: str) -> None:
    cases = tmp_path / "cases.jsonl"
    line = {"id": case_id, "user": "x", "expect": {"kind": "text"}}
    cases.write_bytes(b'{"id":"ok","user":"x","expect":{"kind":"text"}}\n' + orjson.dumps(line))
    result = run_check(ROOT / "contracts/delivery_tools.json", cases)
    assert [(p.line, p.path) for p in result.errors] == [(2, "$.id")]
    assert "an id must be printable text: character" in result.errors[0].message
    _no_raw(str(result.errors[0]))
    with pytest.raises(LoadError):
        parse_cases(cases.read_bytes(), str(cases))


def test_check_cli_fails_and_prints_no_raw_escape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(orjson.dumps({"id": ESC, "user": "x", "expect": {"kind": "text"}}))
    tools = str(ROOT / "contracts/delivery_tools.json")
    assert main(["check", "--tools", tools, "--cases", str(cases), "--quiet"]) == 1
    got = capsys.readouterr()
    _no_raw(got.out + got.err)
    assert "$.id: an id must be printable text: character 1 is U+001B" in got.out


def test_loader_errors_quote_outside_text_visibly() -> None:
    # a key from the file lands in the path, a value in the message
    bad_case = orjson.dumps({"id": "a", "user": "x", "expect": {"kind": "text"}, f"k{ESC}": 1})
    with pytest.raises(LoadError) as exc:
        parse_cases(bad_case, "c.jsonl")
    _no_raw(str(exc.value))
    assert "$.k\\x1b]0;TITLE\\x07\\x1b[2J: unknown key" in str(exc.value)
    config = orjson.dumps({"runs": [{"provider": "p", "model": "m", "api": f"x{ESC}"}]})
    with pytest.raises(LoadError) as exc:
        parse_config(config, "cfg.json", ROOT)
    _no_raw(str(exc.value))
    assert all("\x1b" not in str(p) for p in exc.value.problems)
