"""The tool schemas an adapter sends: one loop for the four wire APIs.

Each adapter wraps every tool in its own envelope; what goes inside is the same steps
everywhere: the contract's parameters copied without private ``x-`` keywords, fitted
to the API when it needs a subset (Gemini's ``parameters``), rewritten for strict mode
when the run asks for it. ``SentTools`` keeps the notes of each step, the schemas the
sent-schema check compares against, and which properties strict mode made nullable.

The steps give the same result every time for the same tools, fit and strict flavor,
so they run once per distinct combination (``_BUILT``); each request gets its own deep
copy of the schemas, so no two bodies share a mutable object.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from toolstand.adapters.base import SchemaNote
from toolstand.adapters.schema import Parts, check_sent_tools, json_copy, strip_private
from toolstand.adapters.strict import StrictFlavor, StrictSchema, limit_notes, rewrite_strict
from toolstand.spec.contract import ToolSpec

Fit = Callable[[str, dict[str, Any]], tuple[dict[str, Any], list[SchemaNote]]]


@dataclass
class SentTools:
    """Each offered tool with the parameters to send, and what was done to them."""

    tools: list[tuple[ToolSpec, dict[str, Any]]]
    notes: list[SchemaNote] = field(default_factory=list)
    # tool name -> the schema the sent-schema check compares with (strict rewrites only)
    expected: dict[str, Any] = field(default_factory=dict)
    # tool name -> schema paths of the optional properties strict mode made nullable
    nullable: dict[str, list[Parts]] = field(default_factory=dict)

    def __iter__(self) -> Iterator[tuple[ToolSpec, dict[str, Any]]]:
        return iter(self.tools)

    # the serialized ``sent`` -> its check's notes, shared by every copy of one build
    checks: dict[bytes, list[SchemaNote]] = field(default_factory=dict, repr=False, compare=False)

    def check(self, sent: dict[str, tuple[Any, Any]]) -> list[SchemaNote]:
        """The sent-schema check over the body that goes out (``lost`` notes).

        The check is a pure function of the specs and ``expected`` (fixed for one build)
        and of ``sent``; ``sent`` holds only JSON values (the schemas are orjson copies),
        whose orjson serialization is one-to-one, so equal bytes mean an equal check:
        it runs once per distinct body the same tools are sent in."""
        try:
            key = orjson.dumps(sent)
        except TypeError:  # not JSON (integers beyond 64 bits): no key, check it afresh
            return self._check(sent)
        notes = self.checks.get(key)
        if notes is None:
            notes = self.checks[key] = self._check(sent)
        return _copied(notes)

    def _check(self, sent: dict[str, tuple[Any, Any]]) -> list[SchemaNote]:
        return check_sent_tools([spec for spec, _ in self.tools], sent, self.expected)

    def copy(self) -> SentTools:
        """Another request's copy: its own schemas, notes and nullable lists; ``expected``
        (read only by the check) and the check's notes are shared."""
        params = json_copy([p for _, p in self.tools])
        return SentTools(
            [(spec, p) for (spec, _), p in zip(self.tools, params, strict=True)],
            _copied(self.notes),
            self.expected,
            {name: list(paths) for name, paths in self.nullable.items()},
            self.checks,
        )


def _copied(notes: list[SchemaNote]) -> list[SchemaNote]:
    return [copy.copy(n) for n in notes]  # its fields are strings: a shallow copy is whole


# (ids of the tools, fit, strict flavor) -> the build; each entry holds its tools alive,
# so an id in a key cannot be reused by another object while the entry exists
_BUILT: dict[tuple[tuple[int, ...], Fit | None, StrictFlavor | None], SentTools] = {}
_BUILT_MAX = 256


def sent_tools(
    tools: list[ToolSpec], *, fit: Fit | None = None, strict: StrictFlavor | None = None
) -> SentTools:
    """The parameters of every tool as the API receives them, with the notes of each step:
    built once per distinct tools, fit and strict flavor (a ``ToolSpec`` is frozen and its
    schema never edited after loading), copied for every caller."""
    key = (tuple(map(id, tools)), fit, strict)
    built = _BUILT.get(key)
    if built is None:
        if len(_BUILT) >= _BUILT_MAX:
            _BUILT.clear()
        built = _BUILT[key] = _build(tools, fit, strict)
    return built.copy()


def _build(tools: list[ToolSpec], fit: Fit | None, strict: StrictFlavor | None) -> SentTools:
    out = SentTools([])
    rewritten: list[tuple[str, StrictSchema]] = []
    for spec in tools:
        params, notes = strip_private(spec.name, spec.parameters)
        out.notes += notes
        if fit is not None:
            params, notes = fit(spec.name, params)
            out.notes += notes
        if strict is not None:
            done = rewrite_strict(spec.name, params, strict)
            params = done.parameters
            out.notes += done.notes
            out.expected[spec.name] = params
            if done.nullable:
                out.nullable[spec.name] = done.nullable
            rewritten.append((spec.name, done))
        out.tools.append((spec, params))
    if strict == "anthropic":
        out.notes += limit_notes(rewritten)
    return out


def recorded_nullable(api: str, body: Any, specs: Mapping[str, ToolSpec]) -> dict[str, list[Parts]]:
    """The properties strict mode made nullable in a recorded OpenAI request body,
    recomputed from the contract's tools: what re-judging needs to read the answer's
    nulls as the live run did."""
    tools = body.get("tools") if isinstance(body, dict) else None
    if api not in ("openai-chat", "openai-responses") or not isinstance(tools, list):
        return {}
    names = []
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("strict") is True and fn.get("name") in specs:
            names.append(fn["name"])
    return sent_tools([specs[n] for n in names], strict="openai").nullable
