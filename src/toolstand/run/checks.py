"""What `toolstand run` refuses before it sends a request or touches its output.

A run that goes ahead on a case `check` rejects scores the case's own bug against the
model; a run with nothing to do exits 0 with a summary that reads like success; a
`--resume` onto a file that is not this run's history appends a header and attempts to
it, or mixes two runs under one run_id. Each is refused with a one-line reason instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from toolstand.lint.check import case_problems
from toolstand.run.inputs import Inputs
from toolstand.spec.cases import CaseFile
from toolstand.spec.contract import Contract
from toolstand.util.problems import LoadError, Problem

_FIRST_LINE_MAX = 1 << 24  # a run header is a few KB; a longer first line is not one


def run_refusals(contract: Contract, contract_path: Path, casefile: CaseFile) -> list[Problem]:
    """Files that hold nothing to run (said once, not once per case), else the errors
    `check` reports on them (its warnings stay warnings)."""
    empty = []
    own_tools = bool(casefile.cases) and all(c.tools is not None for c in casefile.cases)
    if not contract.tools and not own_tools:
        empty.append(Problem(str(contract_path), None, "$.tools", "the contract has no tools"))
    if not casefile.cases:
        empty.append(Problem(casefile.path, None, "$", "the case file holds no case"))
    return empty or [p for p in case_problems(casefile, contract) if p.severity == "error"]


def nothing_to_run(inputs: Inputs, only: set[str] | None) -> Problem:
    """Why a plan came out empty, in the user's terms."""
    modes = ", ".join(inputs.config.modes)
    which = f"the cases --only names ({', '.join(sorted(only))})" if only else "no case"
    return Problem(
        str(inputs.cases_path),
        None,
        "$",
        f"nothing to run: {which} applies to the modes {modes} "
        "(forced runs only cases that expect a call)",
    )


def refuse_foreign(output: Path, inputs: Inputs, *, anyway: bool = False) -> None:
    """Refuse to --resume a file that is not a toolstand history, or whose run header
    records another contract, case file or prompt (unless ``anyway``). Reads only the
    first line, so nothing is touched before the verdict."""
    head = _first_line(output)
    if head is None:
        return  # nothing there yet: resuming it is starting it
    run = _run_header(head)
    if run is None:
        raise LoadError(
            [
                Problem(
                    str(output),
                    1,
                    "$",
                    "not a toolstand history (its first line is not a run header); "
                    "--resume completes only a file that `toolstand run` wrote",
                )
            ]
        )
    differ = _differences(run, inputs)
    if differ and not anyway:
        raise LoadError(
            [
                Problem(
                    str(output),
                    1,
                    "$",
                    f"this history was run with another {', '.join(differ)}; "
                    "--resume would mix both under one run_id "
                    "(--resume-anyway does it, or choose another --output)",
                )
            ]
        )


def _first_line(path: Path) -> bytes | None:
    """The file's first line; None when the file is absent, empty, or only a torn header
    (a run killed while writing its first line: repair_tail cuts it)."""
    try:
        with path.open("rb") as fh:
            line = fh.readline(_FIRST_LINE_MAX)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LoadError([Problem(str(path), None, "$", f"cannot read: {exc.strerror}")]) from None
    if not line.strip():
        return None
    if not line.endswith(b"\n") and _run_header(line) is None and line.startswith(b'{"type":"run"'):
        return None
    return line


def _run_header(line: bytes) -> dict[str, Any] | None:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) and obj.get("type") == "run" else None


def _differences(run: dict[str, Any], inputs: Inputs) -> list[str]:
    """What the header records differently from the inputs now, each with both hashes."""
    now = {
        "contract": inputs.contract.hash,
        "cases file": inputs.casefile.sha256,
        "prompt": inputs.prompt_hash,
    }
    then = {
        "contract": _hash(run, "contract"),
        "cases file": _hash(run, "cases"),
        "prompt": _hash(run, "prompt"),
    }
    return [
        f"{name} (hash {_short(then[name])} in the file, {_short(now[name])} now)"
        for name in now
        if then[name] != now[name]
    ]


def _hash(run: dict[str, Any], key: str) -> Any:
    part = run.get(key)
    return part.get("hash") if isinstance(part, dict) else None


def _short(value: Any) -> str:
    return str(value)[:12] if value else "none"
