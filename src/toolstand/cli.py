"""The command line. Imports stay lazy so `toolstand run` never loads Textual."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from toolstand.cli_parser import build_parser
from toolstand.util.problems import LoadError, Problem

if TYPE_CHECKING:
    from toolstand.spec.config import Config
    from toolstand.types import Mode


def _default_config(given: str | None, field: str, options: str, pronoun: str) -> Config:
    """The config --config names, else config.json or config.example.json in the current
    folder; none is a LoadError asking for the options instead."""
    from toolstand.spec.config import DEFAULT_CONFIGS, find_config, load_config

    path = find_config(Path("."), given)
    if path is None:
        message = (
            f"give {options}, or a config naming {pronoun} "
            f"(--config; none of {', '.join(DEFAULT_CONFIGS)} is in the current folder)"
        )
        raise LoadError([Problem(field, None, "$", message)])
    return load_config(path)


def contract_and_cases(args: argparse.Namespace) -> tuple[str, str | list[str]]:
    """--tools and --cases as given; what is not given, from the config (--config, else
    config.json or config.example.json in the current folder). No file is a default."""
    if args.tools is not None and args.cases is not None:
        return args.tools, args.cases
    config = _default_config(args.config, "--tools/--cases", "--tools and --cases", "them")
    source = config.cases_source  # a file, a folder, or a list of files
    cases = [_shown(p) for p in source] if isinstance(source, list) else _shown(source)
    return args.tools or _shown(config.resolve(config.tools)), args.cases or cases


def _shown(path: Path | None) -> str:
    """A path as short as it reads from the current folder."""
    assert path is not None
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def cmd_contract(args: argparse.Namespace) -> int:
    from toolstand.importers.commands import cmd_contract_export, cmd_contract_import

    if args.contract_command == "import":
        return cmd_contract_import(args)
    if args.server_command:
        raise LoadError([Problem("--", None, "$", "export takes no command after --")])
    args.tools = args.tools or _config_contract(args.config)
    return cmd_contract_export(args)


def _config_contract(config: str | None) -> str:
    """The contract the config names (--config, else config.json or config.example.json)."""
    loaded = _default_config(config, "--tools", "--tools", "it")
    return _shown(loaded.resolve(loaded.tools))


def cmd_import(args: argparse.Namespace) -> int:
    from toolstand.importers.bfcl import check_categories, write_import
    from toolstand.importers.bfcl_source import open_source
    from toolstand.util.printable import visible

    categories = check_categories(args.category)
    source = open_source(args.source)
    try:
        result = write_import(source, Path(args.out), categories)
    finally:
        source.close()
    for category, count in result.counts.items():
        print(f"{count:6d}  {visible(str(result.out / category))}.jsonl")
    total = sum(result.counts.values())
    print(
        f"imported {total} BFCL {visible(result.version)} cases "
        f"({result.renamed} tools renamed for the wire, original in x-bfcl-name; "
        f"{result.nullable} parameters with default None take null, marked x-bfcl-nullable; "
        f"{result.default_member} take their declared default outside their schema, marked "
        "x-bfcl-default-member); "
        f"run: toolstand run --config {visible(str(result.out / 'config.json'))}",
        file=sys.stderr,
    )
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    if args.server_command and not args.mcp:
        message = "a command after -- goes with --against-mcp"
        raise LoadError([Problem("--", None, "$", message)])
    # --from alone is a drift check lacking its file, not a lint that ignores the flag
    if args.mcp or args.mcp_url or args.source_file or args.api:
        from toolstand.importers.commands import cmd_check_drift

        # the drift's contract is seldom the config's one: its cases only when named
        status = 0 if args.cases is None else _lint(args, lock=False)
        args.tools = args.tools or _config_contract(args.config)
        return status or cmd_check_drift(args)
    return _lint(args, lock=args.lock)


def _lint(args: argparse.Namespace, *, lock: bool) -> int:
    from toolstand.lint.check import run_check
    from toolstand.util.printable import visible

    if args.no_cases:
        if args.cases is not None:
            raise LoadError([Problem("--no-cases", None, "$", "give --cases or --no-cases")])
        args.tools, args.cases = args.tools or _config_contract(args.config), "no cases"
        cases = None
    else:
        args.tools, args.cases = contract_and_cases(args)
        cases = [Path(c) for c in args.cases] if isinstance(args.cases, list) else Path(args.cases)
    result = run_check(Path(args.tools), cases, lock=lock)
    for problem in result.problems:
        if problem.severity == "error" or not args.quiet:
            print(visible(str(problem)))
    n_err, n_warn = len(result.errors), len(result.warnings)
    status = "FAILED" if n_err else "ok"
    print(
        f"check {status}: {n_err} errors, {n_warn} warnings ({args.tools}, {args.cases})",
        file=sys.stderr,
    )
    return 1 if n_err else 0


def cmd_run(args: argparse.Namespace) -> int:
    import asyncio
    from datetime import datetime

    from toolstand.spec.config import load_config
    from toolstand.util.printable import visible

    config = load_config(args.config)
    from toolstand.run.runner import load_inputs, missing_keys, run

    if args.modes is not None:
        config.modes = _modes(args.modes)
    for name in ("repetitions", "parallelism"):
        _override(config, name, getattr(args, name))
    only = _only(args.only)
    if args.resume_anyway and not args.resume:
        raise LoadError([Problem("--resume-anyway", None, "$", "it goes with --resume")])
    problems = missing_keys(config, args.config)
    if problems:
        raise LoadError(problems)
    inputs = load_inputs(config, args.config, args.cases, args.tools)
    output = (
        Path(args.output)
        if args.output
        else Path("runs") / f"{datetime.now():%Y-%m-%d-%H%M%S}.jsonl"
    )
    if only:
        unknown = only - set(inputs.casefile.by_id())
        if unknown:
            names = ", ".join(visible(x) for x in sorted(unknown))
            print(f"error: --only names unknown case ids: {names}", file=sys.stderr)
            return 2
    summary = asyncio.run(
        run(
            inputs,
            output,
            resume=args.resume,
            resume_anyway=args.resume_anyway,
            only=only,
            progress_out=sys.stderr,
        )
    )
    print(summary.line(), file=sys.stderr)
    print(output)
    # an attempt that crashed is not on disk: never a clean exit (issue 31 H4)
    return 1 if summary.crashed else 0


def _modes(text: str) -> list[Mode]:
    """--modes as a list of distinct known modes, or a LoadError naming the wrong ones."""
    from toolstand.types import MODES

    modes = [m.strip() for m in text.split(",") if m.strip()]
    wrong = [
        Problem(
            "--modes", None, f"$.modes[{i}]", f"unknown mode {m!r}; allowed: {', '.join(MODES)}"
        )
        for i, m in enumerate(modes)
        if m not in MODES
    ]
    if wrong or not modes or len(set(modes)) != len(modes):
        raise LoadError(wrong or [Problem("--modes", None, "$.modes", "give distinct modes")])
    return cast("list[Mode]", modes)


def _override(config: Config, name: str, value: int | None) -> None:
    """Set a config field from its flag, within the limits the config file has."""
    if value is None:
        return
    from pydantic import ValidationError

    from toolstand.util.problems import pydantic_message

    try:
        type(config).model_validate({**config.model_dump(), name: value})
    except ValidationError as exc:
        wrong = [e for e in exc.errors() if e["loc"][:1] == (name,)]
        if wrong:
            message = f"{pydantic_message(wrong[0])} (got {value})"
            raise LoadError([Problem(f"--{name}", None, f"$.{name}", message)]) from None
    setattr(config, name, value)


def _only(text: str | None) -> set[str] | None:
    """--only as a set of case ids; a value that names none is refused."""
    if text is None:
        return None
    ids = {x.strip() for x in text.split(",") if x.strip()}
    if not ids:
        raise LoadError([Problem("--only", None, "$", f"names no case id (got {text!r})")])
    return ids


def cmd_report(args: argparse.Namespace) -> int:
    from toolstand.reporting import cmd_report as report

    return report(args.runs, args.json, args.errors_csv, args.junit)


def cmd_compare(args: argparse.Namespace) -> int:
    from toolstand.reporting import cmd_compare as compare

    return compare(
        args.baseline,
        args.current,
        args.alpha,
        args.json,
        max_transport_errors=args.max_transport_errors,
    )


def cmd_rejudge(args: argparse.Namespace) -> int:
    from toolstand.run.rejudge import cmd_rejudge as rejudge

    return rejudge(args.run, args.output, tools=args.tools, cases=args.cases)


def cmd_sim(args: argparse.Namespace) -> int:
    from toolstand.sim import serve_forever
    from toolstand.util.printable import visible

    if not 0 <= args.port <= 65535:
        print(
            f"toolstand sim: --port is 0 (a free one) or 1-65535, got {args.port}", file=sys.stderr
        )
        return 2
    tools, cases = contract_and_cases(args)
    try:
        serve_forever(cases, tools, args.host, args.port, args.seed)
    except OSError as exc:  # a busy port, a host that is no address here (gaierror)
        reason = exc.strerror or str(exc)
        where = visible(f"{args.host}:{args.port}")
        print(f"toolstand sim: cannot listen on {where}: {reason}", file=sys.stderr)
        return 2
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
    from toolstand.util.printable import visible

    history = getattr(args, "history", None) or getattr(args, "history_opt", None)
    if history is not None and not Path(history).is_file():
        print(f"error: {visible(history)}: no such history file", file=sys.stderr)
        return 2
    from toolstand.tui.app import run_app

    return run_app(config=args.config, cases=args.cases, tools=args.tools, history=history)


COMMANDS = {
    "run": cmd_run,
    "report": cmd_report,
    "compare": cmd_compare,
    "rejudge": cmd_rejudge,
    "check": cmd_check,
    "contract": cmd_contract,
    "sim": cmd_sim,
    "tui": cmd_tui,
    "import": cmd_import,
}


# what Ctrl-C leaves behind, in each command's own words: only `run` leaves work to
# resume; the others write through a temporary file, or write nothing at all
INTERRUPTED = {
    "run": "finished attempts are on disk (use --resume)",
    "rejudge": "the output was not written; the input history is unchanged",
    "report": "no report or output file was written",
    "compare": "nothing was compared",
    "check": "nothing was checked to the end",
    "contract": "no contract was written",
    "import": "the files it finished stay whole; the others were not written",
    "sim": "the simulator stopped",
    "tui": "the app stopped",
}

# the subcommands whose --mcp / --against-mcp take a server's command after "--"
TAKES_A_COMMAND = ("contract", "check")


def _server_without_dashes(words: list[str]) -> bool:
    """``--mcp python server.py``: argparse alone would say only "unrecognized arguments"."""
    if not words or words[0] not in TAKES_A_COMMAND or "--" in words:
        return False
    if not {"--mcp", "--against-mcp"} & set(words):
        return False
    _, extra = build_parser().parse_known_args(words)
    return bool(extra)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # for the commands that start a server, everything after the first "--" is its
    # command; elsewhere "--" keeps argparse's meaning (what follows is positional)
    takes_tail = bool(words) and words[0] in TAKES_A_COMMAND and "--" in words
    cut = words.index("--") if takes_tail else len(words)
    if _server_without_dashes(words):
        print("toolstand: put the server's command after --: --mcp -- CMD ARGS...", file=sys.stderr)
        return 2
    args = build_parser().parse_args(words[:cut])
    args.server_command = words[cut + 1 :]
    command = args.command or "tui"
    if command == "tui" and args.command is None:
        args = argparse.Namespace(config=None, cases=None, tools=None)
    try:
        return COMMANDS[command](args)
    except LoadError as exc:
        from toolstand.util.printable import visible

        for problem in exc.problems:
            print(visible(str(problem)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted; {INTERRUPTED.get(command, 'nothing was written')}", file=sys.stderr)
        return 130
