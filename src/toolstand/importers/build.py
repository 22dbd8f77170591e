"""An imported tool list made into a contract: effects decided, source recorded, written.

``effect`` is the one thing no provider's tool JSON says. A tool the user did not name in
``--effect`` gets what its MCP annotations imply, or ``execute`` — never ``read`` by
default: a stand that silently calls a tool harmless is wrong in the dangerous
direction — and the warning lists every tool that was defaulted that way.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from toolstand.importers.mcp import effect_of
from toolstand.importers.merge import Previous, kept_overrides, merge
from toolstand.importers.providers import RawTool, SourceTools
from toolstand.spec.contract import Contract, parse_contract
from toolstand.types import EFFECTS
from toolstand.util.canonical import canonical_hash
from toolstand.util.problems import LoadError, Problem


def parse_effects(items: list[str]) -> dict[str, str]:
    """``--effect name=execute ...`` as {tool: effect}; a malformed item, or two effects
    for one tool, is refused."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, effect = item.partition("=")
        if not sep or not name or effect not in EFFECTS:
            raise LoadError(
                [
                    Problem(
                        "--effect",
                        None,
                        "$",
                        f"{item!r}: write NAME=EFFECT with EFFECT one of {', '.join(EFFECTS)}",
                    )
                ]
            )
        if out.setdefault(name, effect) != effect:
            message = f"{name!r} is given {out[name]} and {effect}: give one effect"
            raise LoadError([Problem("--effect", None, "$", message)])
    return out


def source_hash(tools: list[RawTool]) -> str:
    """What drift compares: the source's tools, before any effect is decided."""
    return canonical_hash(tools)


def decide_effects(
    tools: list[RawTool], overrides: dict[str, str]
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Each tool with its effect, and a warning listing those made ``execute`` by their
    server's ``readOnlyHint: false`` and those made so by default."""
    names = {t["name"] for t in tools}
    unknown = sorted(set(overrides) - names)
    if unknown:
        allowed = ", ".join(sorted(names)) or "none"
        raise LoadError(
            [
                Problem(
                    "--effect",
                    None,
                    "$",
                    f"no such tool: {', '.join(unknown)}; the source has: {allowed}",
                )
            ]
        )
    out: list[dict[str, Any]] = []
    said: list[str] = []  # the server's readOnlyHint: false
    defaulted: list[str] = []  # nothing said it is read-only
    for tool in tools:
        effect = overrides.get(tool["name"])
        if effect is None:
            effect = effect_of(tool.get("x-mcp"))
            if effect == "execute":
                hint = (tool.get("x-mcp") or {}).get("readOnlyHint")
                (said if hint is False else defaulted).append(tool["name"])
        spec = {
            "name": tool["name"],
            "description": tool["description"],
            "effect": effect,
            "parameters": tool["parameters"],
        }
        for key in ("x-mcp", "x-mcp-name"):
            if key in tool:
                spec[key] = tool[key]
        out.append(spec)
    warnings = []
    if said or defaulted:
        parts = []
        if said:
            whose = "its server's" if len(said) == 1 else "their server's"
            parts.append(f"for: {', '.join(said)} ({whose} readOnlyHint: false)")
        if defaulted:
            by = "by default " if said else ""
            parts.append(f"{by}for: {', '.join(defaulted)} (no readOnlyHint: true)")
        warnings.append(
            Problem(
                "--effect",
                None,
                "$",
                f"effect execute (state-changing) {'; '.join(parts)}; "
                "say otherwise with --effect NAME=read|prepare",
                "warning",
            )
        )
    return out, warnings


def build_contract(
    source: SourceTools,
    *,
    name: str,
    version: str,
    effects: dict[str, str],
    out: str,
    previous: Previous | None = None,
) -> tuple[Contract, bytes, list[Problem], list[str]]:
    """The contract, its file's bytes, the warnings, and (over a ``previous`` contract)
    the lines saying what the merge kept, changed and dropped; refused if the source had
    errors or the result does not meta-validate (each problem naming where it came from)."""
    if source.errors:
        raise LoadError(source.errors)
    kept = kept_overrides(previous, [t["name"] for t in source.tools], effects)
    tools, warnings = decide_effects(source.tools, {**kept, **effects})
    summary: list[str] = []
    if previous is not None:
        tools, merged = merge(tools, previous, kept)
        summary = merged.lines()
    record = {**source.source, "imported_version": version, "hash": source_hash(source.tools)}
    data = {"name": name, "version": version, "tools": tools, "x-source": record}
    text = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    try:
        contract = parse_contract(text, out)
    except LoadError as exc:
        # nothing was written: the paths mean something to the user, the lines do not
        unwritten = f"{out} (not written)"
        raise LoadError([replace(p, file=unwritten, line=None) for p in exc.problems]) from None
    return contract, text, [*source.warnings, *warnings], summary


def write_new(path: Path, data: bytes, *, force: bool = False) -> None:
    """Write through a temporary file; an existing file is kept unless ``force``, also
    one another process made meanwhile. A path that cannot be written is a LoadError."""
    if path.exists() and not force:
        raise exists_error(path)
    # this process's own: two imports writing at once never share a temporary file
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        if force:
            os.replace(tmp, path)
        elif not _placed_new(tmp, path):
            raise exists_error(path)
    except OSError as exc:
        raise LoadError([Problem(str(path), None, "$", f"cannot write: {exc.strerror}")]) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def _placed_new(tmp: Path, path: Path) -> bool:
    """``tmp`` put at ``path`` unless a file is there (made since the check); False then."""
    try:
        os.link(tmp, path)  # unlike a rename, refuses an existing file
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: the check before is all there is
        os.replace(tmp, path)
    return True


def exists_error(path: Path) -> LoadError:
    return LoadError(
        [Problem(str(path), None, "$", "already exists; not overwritten (use --force)")]
    )
