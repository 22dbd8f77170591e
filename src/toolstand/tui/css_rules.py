"""One parse of each piece of Textual CSS per process, instead of one per stylesheet.

Textual keeps its parsed rules in a cache of the ``Stylesheet`` object, and makes new
ones: the app's own at start, and a fresh one each time it reparses (a theme set, a
screen's CSS added, ``refresh_css``), whose cache starts empty. The TUI's first mode
switch so parsed all of its CSS four times before the first paint (the app's parse,
``refresh_css`` in ``App._init_mode`` and again in ``App.switch_mode``, then the app's
sheet, its cache cleared by ``set_variables``): some 50 ms, where once is 13. This keeps
the rules across stylesheets, keyed on everything ``Stylesheet._parse_rules`` reads: the
CSS text, where it was read from, its defaults flag, tie-breaker and scope, and the CSS
variables the text is parsed with (a theme's colours are substituted while parsing). A
CSS text with an error still raises each time: ``Stylesheet.parse`` checks the rules it
gets back. ``install`` puts it in place (the app's module does, at import).
"""

from __future__ import annotations

from typing import Any

from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.css.types import CSSLocation

_parse_rules = Stylesheet._parse_rules
_parsed: dict[tuple[Any, ...], list[RuleSet]] = {}
# the variables dicts seen last (each refresh_css sets a new one), by id, with their key
_frozen: dict[int, tuple[dict[str, str], tuple[tuple[str, str], ...]]] = {}
_FROZEN_MAX = 16


def _variables_key(sheet: Stylesheet) -> tuple[tuple[str, str], ...]:
    """The sheet's variables as a key, built once per variables dict it holds."""
    variables = sheet._variables
    seen = _frozen.get(id(variables))
    if seen is None or seen[0] is not variables:
        if len(_frozen) >= _FROZEN_MAX:
            del _frozen[next(iter(_frozen))]  # the oldest
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


def install() -> None:
    """Every ``Stylesheet`` of this process parses through ``shared_parse_rules``."""
    Stylesheet._parse_rules = shared_parse_rules  # type: ignore[method-assign]
