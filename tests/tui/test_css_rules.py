"""Each piece of Textual CSS is parsed once per process (tui/css_rules.py): the TUI's
start reparses its whole stylesheet on its first mode switch, twice, into fresh sheets."""

from __future__ import annotations

import subprocess
import sys

import pytest
from textual.css.stylesheet import Stylesheet, StylesheetParseError

from toolstand.tui import css_rules

CSS = "CaseTable { background: $primary; height: 1fr; }"


def sheet(variables: dict[str, str], css: str = CSS) -> Stylesheet:
    out = Stylesheet(variables=variables)
    out.add_source(css, read_from=("test_css_rules.py", "CSS"))
    out.parse()
    return out


def test_the_app_s_module_puts_the_shared_parse_in_place() -> None:
    code = (
        "from textual.css.stylesheet import Stylesheet\n"
        "import toolstand.tui.app\n"
        "from toolstand.tui import css_rules\n"
        "print(Stylesheet._parse_rules is css_rules.shared_parse_rules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_fresh_sheet_gets_the_rules_parsed_once_for_the_same_variables() -> None:
    css_rules.install()
    first = sheet({"primary": "#112233"})
    again = sheet({"primary": "#112233"})  # a new dict, equal: as refresh_css makes
    assert again.rules[0] is first.rules[0]
    other = sheet({"primary": "#445566"})  # a theme's colours are substituted in parsing
    assert other.rules[0] is not first.rules[0]
    assert other.rules[0].styles.background != first.rules[0].styles.background


def test_css_with_an_error_raises_each_time() -> None:
    css_rules.install()
    for _ in range(2):
        with pytest.raises(StylesheetParseError):
            sheet({"primary": "#112233"}, "CaseTable { height: nonsense; }")
