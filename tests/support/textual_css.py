"""One parse of each piece of Textual CSS per test process, instead of one per app.

Textual keeps its parsed rules in a cache of the ``Stylesheet`` object, and every app
makes new ones: its own at start, and a fresh one each time it reparses (a theme set, a
screen's CSS added, ``refresh_css``). A Pilot test so parsed the same CSS text a dozen
times; parsing was a tenth of a TUI test's CPU. This keeps the rules across stylesheets,
keyed on everything ``Stylesheet._parse_rules`` reads: the CSS text, where it was read
from, its defaults flag, tie-breaker and scope, and the CSS variables the text is
parsed with (a theme's colours are substituted while parsing). A CSS text with an
error still raises each time: ``Stylesheet.parse`` checks the rules it gets back.
"""

from __future__ import annotations

from typing import Any

from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.css.types import CSSLocation

_parse_rules = Stylesheet._parse_rules
_parsed: dict[tuple[Any, ...], list[RuleSet]] = {}
_frozen: dict[int, tuple[dict[str, str], tuple[tuple[str, str], ...]]] = {}


def _variables_key(sheet: Stylesheet) -> tuple[tuple[str, str], ...]:
    """The sheet's variables as a key, built once per variables dict it holds."""
    variables = sheet._variables
    seen = _frozen.get(id(variables))
    if seen is None or seen[0] is not variables:
        # keeping the dict alive keeps its id from being reused by another dict
        seen = _frozen[id(variables)] = (variables, tuple(sorted(variables.items())))
    return seen[1]


def shared_parse_rules(
    self: Stylesheet,
    css: str,
    read_from: CSSLocation,
    is_default_rules: bool = False,
    tie_breaker: int = 0,
    scope: str = "",
) -> list[RuleSet]:
    key = (css, read_from, is_default_rules, tie_breaker, scope, _variables_key(self))
    rules = _parsed.get(key)
    if rules is None:
        rules = _parsed[key] = _parse_rules(
            self, css, read_from, is_default_rules, tie_breaker, scope
        )
    return rules
