"""The run matrix: runs × cases × modes × repetitions, appended to JSONL as they end.

Requests go out with up to ``parallelism`` in flight, spread over several httpx
clients (one client's pool slows down with many queued requests). Each finished
attempt is written and flushed at once; ``--resume`` skips the keys already on disk.
"""

from __future__ import annotations

import contextlib
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from toolstand.history import (
    KEPT,
    AttemptKey,
    HistoryLock,
    HistoryWriteError,
    IndexedWriter,
    attempt_key,
    iter_lines,
    repair_tail,
)
from toolstand.run.checks import nothing_to_run, refuse_foreign, run_refusals
from toolstand.run.inputs import Inputs, header, missing_keys, targets_for
from toolstand.run.matrix import WorkItem, plan, repetitions
from toolstand.run.work import Work, run_workers
from toolstand.spec.cases import load_case_set
from toolstand.spec.config import Config
from toolstand.spec.contract import load_contract
from toolstand.spec.identity import HeaderRuns, config_identity
from toolstand.types import AttemptRecord
from toolstand.util.canonical import sha256_hex
from toolstand.util.printable import visible
from toolstand.util.problems import LoadError, Problem

# what the commands and the TUI import from here (the rest of run/ stands below this)
__all__ = [
    "Inputs",
    "RunSummary",
    "WorkItem",
    "finished_keys",
    "header",
    "load_inputs",
    "missing_keys",
    "plan",
    "run",
    "targets_for",
]

RESUMABLE = f"{KEPT} (make room or fix the file, then --resume completes the run)"


def load_inputs(
    config: Config, config_path: str, cases: str | None = None, tools: str | None = None
) -> Inputs:
    """Load everything a run needs; any problem is a LoadError naming file:line."""
    contract_path = Path(tools) if tools else config.resolve(config.tools)
    assert contract_path is not None
    contract = load_contract(contract_path)
    casefile = load_case_set(Path(cases) if cases else config.cases_source)
    cases_path = Path(casefile.path)
    refused = run_refusals(contract, contract_path, casefile)
    if refused:
        raise LoadError(refused)
    system = prompt_version = prompt_hash = None
    if config.prompt_path is not None:
        try:
            raw = config.prompt_path.read_bytes()
        except OSError as exc:
            raise LoadError(
                [
                    Problem(
                        config_path,
                        None,
                        "$.system_prompt",
                        f"cannot read {config.prompt_path}: {exc.strerror}",
                    )
                ]
            ) from None
        system = raw.decode("utf-8")
        prompt_version = config.prompt_path.stem
        prompt_hash = sha256_hex(raw)
    return Inputs(
        config,
        config_path,
        contract,
        contract_path,
        casefile,
        cases_path,
        system,
        prompt_version,
        prompt_hash,
    )


def finished_keys(
    path: Path, warn: IO[str] | None = sys.stderr
) -> tuple[str | None, set[AttemptKey]]:
    """The run_id and the attempt keys already in an output file.

    A record written before run identities existed takes its run's from the headers
    of its run_id (spec/identity.HeaderRuns); when they list two runs it could belong
    to (same provider, model and api), it counts as done for each, as it did then,
    and ``warn`` is told."""
    run_id = None
    done: set[AttemptKey] = set()
    if not path.exists():
        return None, done
    runs = HeaderRuns()
    older: list[tuple[Any, ...]] = []  # (run_id, provider, model, api, key without identity)
    for _, rec in iter_lines(path, warn):
        if rec.get("type") == "run":
            run_id = run_id if run_id is not None else rec.get("run_id")
            runs.add(rec)
        elif rec.get("type") == "attempt":
            with contextlib.suppress(KeyError, TypeError, ValueError):
                key = attempt_key(rec)
                if key[3] is None:
                    older.append((rec.get("run_id"), *key[:3], key))
                else:
                    done.add(key)
    unsettled = 0
    for rid, provider, model, api, key in older:
        found: list[str | None] = [*runs.candidates(rid, provider, model, api)]
        unsettled += len(found) > 1
        done.update((*key[:3], ident, *key[4:]) for ident in (found or [None]))
    if unsettled and warn is not None:
        print(
            f"warning: {path}: {unsettled} attempt(s) written before run identities belong "
            "to one of two runs with the same provider, model and api; counted as done for both",
            file=warn,
        )
    return run_id, done


@dataclass
class RunSummary:
    run_id: str
    output: Path
    planned: int
    skipped: int
    written: int
    verdicts: Counter[str]
    seconds: float

    @property
    def crashed(self) -> int:
        """Attempts that crashed and are not recorded: ``run`` then exits 1."""
        return self.verdicts["crashed"]

    def line(self) -> str:
        v = self.verdicts
        return (
            f"run {self.run_id}: {self.written} attempts written to {visible(str(self.output))} "
            f"({self.skipped} already there), pass {v['pass']}, fail {v['fail']}, "
            f"transport errors {v['transport_error']}, {self.seconds:.1f}s"
            + (f", CRASHED {v['crashed']} (not recorded)" if v["crashed"] else "")
        )


async def run(
    inputs: Inputs,
    output: Path,
    *,
    resume: bool = False,
    resume_anyway: bool = False,
    only: set[str] | None = None,
    progress_out: IO[str] | None = None,
    on_record: Callable[[AttemptRecord], None] | None = None,
) -> RunSummary:
    """Run the matrix into ``output``, holding the history's lock throughout. Never
    raises for a provider's failure; a LoadError when the output cannot be used (another
    writer, a file --resume must not touch, a disk that refuses a line).
    ``progress_out``: where progress lines go (the CLI passes stderr); None for none."""
    items = plan(inputs, only)
    if not items:
        raise LoadError([nothing_to_run(inputs, only)])
    if resume:  # before the lock too, so a refused file gets no lock folder beside it
        refuse_foreign(output, inputs, anyway=resume_anyway)
    with HistoryLock(output):  # held from the first look at the file to the last line
        return await _run_locked(
            inputs, output, items, resume, resume_anyway, only, progress_out, on_record
        )


async def _run_locked(
    inputs: Inputs,
    output: Path,
    items: list[WorkItem],
    resume: bool,
    resume_anyway: bool,
    only: set[str] | None,
    progress_out: IO[str] | None,
    on_record: Callable[[AttemptRecord], None] | None,
) -> RunSummary:
    t0 = time.monotonic()
    run_id, done = _open_output(inputs, output, resume, resume_anyway, progress_out)
    config = inputs.config
    identities = [config_identity(config, spec) for spec in config.runs]
    todo = [
        it
        for it in items
        if it.key(config.runs[it.run_index], identities[it.run_index]) not in done
    ]
    with IndexedWriter(output, lock=False) as writer:
        writer.write(header(inputs, run_id, resumed=resume and bool(done)))
        work = Work(inputs, run_id, writer, repetitions(todo), len(todo), progress_out, on_record)
        await run_workers(work, targets_for(inputs))
    _finish(work, writer.index_error, output, progress_out)
    return RunSummary(
        run_id,
        output,
        len(items),
        len(items) - len(todo),
        # the records on disk: a crashed attempt wrote none (issue 31 L8)
        sum(n for verdict, n in work.verdicts.items() if verdict != "crashed"),
        work.verdicts,
        time.monotonic() - t0,
    )


def _open_output(
    inputs: Inputs,
    output: Path,
    resume: bool,
    resume_anyway: bool,
    progress_out: IO[str] | None,
) -> tuple[str, set[AttemptKey]]:
    """The run_id to write under and the keys already done; refuses an output in use."""
    run_id = None
    done: set[AttemptKey] = set()
    if resume:
        refuse_foreign(output, inputs, anyway=resume_anyway)  # again: it may have changed
        if repair_tail(output) and progress_out is not None:
            print(
                f"warning: {output}: cut a torn last line left by a killed run", file=progress_out
            )
        run_id, done = finished_keys(output)
    elif output.exists() and output.stat().st_size > 0:
        raise LoadError(
            [
                Problem(
                    str(output),
                    None,
                    "$",
                    "output exists; use --resume to complete it or choose another --output",
                )
            ]
        )
    run_id = run_id or f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
    return run_id, done


def _finish(work: Work, index_error: object, output: Path, progress_out: IO[str] | None) -> None:
    """End the progress line; raise the write failure that stopped the run, if any."""
    if work.progress is not None and work.progress.out.isatty():
        work.progress.out.write("\n")
    if work.stopped:
        exc = work.stopped[0]
        raise HistoryWriteError(exc.path, exc.os_error, RESUMABLE) from None
    if index_error is not None and progress_out is not None:
        print(
            f"warning: {output}: the History index was not kept ({index_error}); "
            "the History screen will index the file when it opens it",
            file=progress_out,
        )
