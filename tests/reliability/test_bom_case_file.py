"""Issue 31, L11: a case file that starts with a UTF-8 BOM loads, line 1 included, and
its text holds no BOM for an editor to see as a change."""

from __future__ import annotations

from toolstand.spec.cases import parse_cases

LINE = '{"id": "a", "user": "hi", "expect": {"kind": "text"}}'


def test_a_bom_is_not_part_of_line_one() -> None:
    casefile = parse_cases(b"\xef\xbb\xbf" + LINE.encode() + b"\n", "c.jsonl")
    assert [c.id for c in casefile.cases] == ["a"]
    assert casefile.lines[0].text == LINE


def test_a_bom_later_in_the_file_is_still_refused() -> None:
    casefile = parse_cases(
        LINE.encode() + b"\n\xef\xbb\xbf" + LINE.encode(), "c.jsonl", strict=False
    )
    assert len(casefile.problems) == 1 and casefile.problems[0].line == 2
