"""Control characters from outside text are shown, never sent to the terminal."""

from hypothesis import given
from hypothesis import strategies as st

from toolstand.util.printable import visible, visible_lines


def test_an_escape_sequence_is_spelled_out() -> None:
    hostile = "ok\x1b]0;TITLE\x07\x1b[2Jdone"
    assert visible(hostile) == "ok\\x1b]0;TITLE\\x07\\x1b[2Jdone"


def test_one_line_text_spells_newlines_and_tabs() -> None:
    assert visible("a\nb\tc") == "a\\x0ab\\x09c"


def test_multi_line_text_keeps_newlines_and_tabs_only() -> None:
    assert visible_lines("a\nb\tc\x1b[31m\x7f\x9b") == "a\nb\tc\\x1b[31m\\x7f\\x9b"


def test_printable_text_is_unchanged() -> None:
    text = "Самара [bold]not markup[/] ORD-123456 ✓"
    assert visible(text) is text
    assert visible_lines(text) == text


@given(st.text())
def test_no_control_character_survives(text: str) -> None:
    shown = visible(text)
    assert not any(0x00 <= ord(c) <= 0x1F or 0x7F <= ord(c) <= 0x9F for c in shown)
    kept = visible_lines(text)
    assert not any((ord(c) <= 0x1F and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in kept)
