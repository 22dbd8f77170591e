"""The case-file chooser's counts (spec.cases.count_rows, no case parsed) are the rows the
case list shows (parse_cases: its cases and broken lines), on hostile case files too."""

from __future__ import annotations

import pytest

from toolstand.spec.cases import count_rows, parse_cases

CASE = b'{"id": "%d", "user": "hi", "expect": {"kind": "text"}}'

FILES = {
    "cases and a version line": b'{"cases_version": "3"}\n' + CASE % 1 + b"\n" + CASE % 2 + b"\n",
    "no final newline": CASE % 1 + b"\n" + CASE % 2,
    "a BOM before the version line": b'\xef\xbb\xbf{"cases_version": "3"}\n' + CASE % 1,
    "a BOM alone on line 1": b"\xef\xbb\xbf\n" + CASE % 1,
    "a version line with another key (a broken case)": b'{"cases_version": "3", "x": 1}\n',
    "a version line that is no JSON": b'{"cases_version": \n' + CASE % 1,
    "a version line with a byte that is no UTF-8": b'{"cases_version": "\xff"}\n' + CASE % 1,
    "blank lines of every kind": b"\n  \n\t\r\n\x0b\x0c\n\x1c\n\xc2\xa0\n\xe3\x80\x80\n" + CASE % 1,
    "a carriage return inside a line": CASE % 1 + b"\r" + CASE % 2 + b"\n",
    "control characters": b"\x00\n\x1b[2J\n" + CASE % 1,
    "a truncated UTF-8 sequence before a newline": b"\xe2\x82\n" + CASE % 1,
    "a duplicate id": CASE % 1 + b"\n" + CASE % 1 + b"\n",
    "empty": b"",
    "a later version line": CASE % 1 + b'\n{"cases_version": "4"}\n',
}


def listed(data: bytes) -> int:
    """The case list's rows (case_rows.rows): lines with a case or a problem."""
    casefile = parse_cases(data, "c.jsonl", strict=False)
    problems = {p.line for p in casefile.problems}
    return sum(1 for line in casefile.lines if line.case is not None or line.number in problems)


@pytest.mark.parametrize("data", FILES.values(), ids=FILES.keys())
def test_the_count_is_the_rows_the_case_list_shows(data: bytes) -> None:
    assert count_rows(data) == listed(data)
