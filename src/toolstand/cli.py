"""The command line. Imports stay lazy so `toolstand run` never loads Textual."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from toolstand import __version__
from toolstand.problems import LoadError, Problem

if TYPE_CHECKING:
    from toolstand.config import Config
    from toolstand.types import Mode

# the configs `check` and `sim` read their contract and cases from when not told
DEFAULT_CONFIGS = ("config.json", "config.example.json")
FROM_CONFIG = "default: the config's"


def _sub(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str, example: str
) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with one example invocation."""
    return sub.add_parser(
        name,
        help=help,
        description=(help[0].upper() + help[1:]).replace("%%", "%") + ".",
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="toolstand",
        description="A test stand for LLM tool calling.",
        epilog="example:\n  toolstand run --config config.example.json --output runs/demo.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"toolstand {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = _sub(
        sub,
        "run",
        "run the case matrix; one JSONL line per attempt, progress on stderr",
        "toolstand run --config config.example.json --output runs/today.jsonl --only direct_lookup",
    )
    r.add_argument(
        "--config",
        required=True,
        help="the run configuration (required), e.g. config.example.json; a run's "
        "'options' may set strict (openai-chat, openai-responses, anthropic), store "
        "(openai-responses), max_tokens_param (openai-chat: max_tokens or "
        "max_completion_tokens) and gemini_schema (gemini: parametersJsonSchema or "
        "parameters)",
    )
    r.add_argument(
        "--cases",
        help="the case file, or folder of *.jsonl, to run instead of the config's 'cases'",
    )
    r.add_argument("--tools", help="the tool contract to use instead of the config's 'tools'")
    r.add_argument(
        "--output",
        help="the history to write; it must not exist yet unless --resume "
        "(default: runs/<date>-<time>.jsonl)",
    )
    r.add_argument(
        "--resume",
        action="store_true",
        help="complete an interrupted history: run only the attempts it lacks, under its run_id",
    )
    r.add_argument(
        "--resume-anyway",
        action="store_true",
        help="with --resume: go on even though the history's contract, cases or prompt hash "
        "differs from the current one (both end up under one run_id)",
    )
    r.add_argument(
        "--only",
        metavar="IDS",
        help="run only these case ids, comma-separated (default: every case), "
        "e.g. direct_lookup,missing_id",
    )
    r.add_argument(
        "--modes",
        help="comma-separated modes out of auto, forced, no_tools, reversed "
        "(default: the config's 'modes'), e.g. auto,forced",
    )
    r.add_argument(
        "--repetitions",
        type=int,
        metavar="N",
        help="attempts per case and mode, 1-1000 (default: the config's 'repetitions')",
    )
    r.add_argument(
        "--parallelism",
        type=int,
        metavar="N",
        help="requests in flight, 1-1024 (default: the config's 'parallelism')",
    )

    rep = _sub(
        sub,
        "report",
        "metrics with counts and 95%% intervals from JSONL histories",
        "toolstand report runs/demo.jsonl --junit runs/junit.xml --errors-csv runs/errors.csv",
    )
    rep.add_argument("runs", nargs="+", metavar="RUN.jsonl", help="one or more histories")
    rep.add_argument(
        "--json", action="store_true", help="print the report as JSON instead of a table"
    )
    rep.add_argument(
        "--errors-csv", metavar="PATH", help="also write the error table as CSV to PATH"
    )
    rep.add_argument("--junit", metavar="PATH", help="also write JUnit XML for CI to PATH")

    cmp_ = _sub(
        sub,
        "compare",
        "compare two runs; exit 1 only on a regression the counts make significant",
        "toolstand compare baselines/demo.report.json runs/current.jsonl",
    )
    cmp_.add_argument(
        "baseline", help="the baseline: a history (.jsonl) or a report saved with --json"
    )
    cmp_.add_argument("current", help="the run to judge against it: a history or a JSON report")
    cmp_.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="significance level of the regression test (default: %(default)s), e.g. 0.01",
    )
    cmp_.add_argument(
        "--json", action="store_true", help="print the comparison as JSON instead of a table"
    )
    cmp_.add_argument(
        "--max-transport-errors",
        type=float,
        default=0.2,
        metavar="SHARE",
        help="fail the gate when a current group lost more than this share of its attempts "
        "to transport errors (default: %(default)s), e.g. 0.05",
    )

    rj = _sub(
        sub,
        "rejudge",
        "re-parse and re-judge stored raw responses with the current code; list changed verdicts",
        "toolstand rejudge runs/demo.jsonl --output runs/demo.rejudged.jsonl",
    )
    rj.add_argument("run", metavar="RUN.jsonl", help="the history to re-judge (never modified)")
    rj.add_argument(
        "--output",
        required=True,
        help="the new history to write (required; must not exist yet)",
    )
    rj.add_argument(
        "--tools", help="the contract to judge with (default: the one the run header names)"
    )
    rj.add_argument(
        "--cases",
        help="the case file or folder to judge with (default: the one the run header names)",
    )

    c = _sub(
        sub,
        "check",
        "lint contracts and cases: file:line and JSON path for every problem",
        "toolstand check --tools contracts/delivery_tools.json --cases cases/delivery.jsonl",
    )
    _input_options(
        c,
        "the contract",
        "the case file or a folder of *.jsonl (with --against*: linted only when given)",
    )
    c.add_argument(
        "--lock",
        action="store_true",
        help="fail on a contract changed without a version bump (records hash and version "
        "in <contract>.lock.json); with --against*: record the source's hash beside them",
    )
    c.add_argument("--quiet", "-q", action="store_true", help="errors only, no per-API warnings")
    from toolstand.importers.parsers import add_contract_parser, add_drift_flags

    add_drift_flags(c)
    add_contract_parser(sub, _sub, FROM_CONFIG)

    s = _sub(
        sub,
        "sim",
        "serve the embedded simulator on loopback for other clients",
        "toolstand sim --port 8765 --seed 7",
    )
    s.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default: %(default)s)"
    )
    s.add_argument(
        "--port",
        type=int,
        default=0,
        help="the port to listen on; 0 picks a free one (default: %(default)s)",
    )
    _input_options(s, "the contract it answers with", "the case file or folder it answers from")
    s.add_argument(
        "--seed", type=int, default=0, help="seed of the personas' choices (default: %(default)s)"
    )

    _import_parser(sub)

    t = _sub(sub, "tui", "the terminal UI (the default)", "toolstand tui runs/demo.jsonl")
    t.add_argument(
        "history",
        nargs="?",
        metavar="HISTORY",
        help="a history (runs/*.jsonl) to open in History (default: none; opens on Cases)",
    )
    t.add_argument(
        "--history",
        dest="history_opt",
        metavar="PATH",
        help="the same as HISTORY, as an option, e.g. --history runs/demo.jsonl",
    )
    t.add_argument(
        "--config", help="the run configuration (default: config.json, else config.example.json)"
    )
    t.add_argument("--cases", help="the case file to open instead of the config's")
    t.add_argument("--tools", help="the contract to use instead of the config's")
    return p


def _input_options(p: argparse.ArgumentParser, tools: str, cases: str) -> None:
    p.add_argument("--tools", help=f"{tools} ({FROM_CONFIG})")
    p.add_argument("--cases", help=f"{cases} ({FROM_CONFIG})")
    p.add_argument(
        "--config",
        help="the config naming the contract and cases (default: config.json, else "
        "config.example.json, in the current folder)",
    )


def contract_and_cases(args: argparse.Namespace) -> tuple[str, str | list[str]]:
    """--tools and --cases as given; what is not given, from the config (--config, else
    config.json or config.example.json in the current folder). No file is a default."""
    if args.tools is not None and args.cases is not None:
        return args.tools, args.cases
    from toolstand.config import load_config

    path = args.config or next((n for n in DEFAULT_CONFIGS if Path(n).is_file()), None)
    if path is None:
        message = (
            "give --tools and --cases, or a config naming them "
            f"(--config; none of {', '.join(DEFAULT_CONFIGS)} is in the current folder)"
        )
        raise LoadError([Problem("--tools/--cases", None, "$", message)])
    config = load_config(path)
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
    from toolstand.config import load_config

    path = config or next((n for n in DEFAULT_CONFIGS if Path(n).is_file()), None)
    if path is None:
        message = (
            "give --tools, or a config naming it "
            f"(--config; none of {', '.join(DEFAULT_CONFIGS)} is in the current folder)"
        )
        raise LoadError([Problem("--tools", None, "$", message)])
    loaded = load_config(path)
    return _shown(loaded.resolve(loaded.tools))


def _import_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`toolstand import bfcl SOURCE --out DIR [--category C ...]`."""
    imp = _sub(
        sub,
        "import",
        "turn another benchmark's questions and answers into case files and a config",
        "toolstand import bfcl bfcl_eval-2026.3.23-py3-none-any.whl --out bfcl",
    )
    kinds = imp.add_subparsers(
        dest="source_kind",
        metavar="KIND",
        required=True,
        help="what to import from; bfcl is the one kind so far",
    )
    b = _sub(
        kinds,
        "bfcl",
        "BFCL's questions and possible answers into DIR/<category>.jsonl and DIR/config.json",
        "toolstand import bfcl bfcl_eval-2026.3.23-py3-none-any.whl --out bfcl "
        "--category simple_python parallel",
    )
    b.add_argument(
        "source",
        metavar="SOURCE",
        help="a BFCL data folder, a bfcl_eval-*.whl file (read as a zip), or 'installed'",
    )
    b.add_argument("--out", required=True, help="the folder to write (its files must not exist)")
    b.add_argument(
        "--category",
        nargs="+",
        metavar="C",
        help="the categories to import (default: all eleven that toolstand can judge)",
    )


def cmd_import(args: argparse.Namespace) -> int:
    from toolstand.importers.bfcl import check_categories, write_import
    from toolstand.importers.bfcl_source import open_source
    from toolstand.printable import visible

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
        f"({result.renamed} tools renamed for the wire, original in x-bfcl-name); "
        f"run: toolstand run --config {visible(str(result.out / 'config.json'))}",
        file=sys.stderr,
    )
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    if args.server_command and not args.mcp:
        message = "a command after -- goes with --against-mcp"
        raise LoadError([Problem("--", None, "$", message)])
    if args.mcp or args.mcp_url or args.source_file:
        from toolstand.importers.commands import cmd_check_drift

        # the drift's contract is seldom the config's one: its cases only when named
        status = 0 if args.cases is None else _lint(args, lock=False)
        args.tools = args.tools or _config_contract(args.config)
        return status or cmd_check_drift(args)
    return _lint(args, lock=args.lock)


def _lint(args: argparse.Namespace, *, lock: bool) -> int:
    from toolstand.check import run_check
    from toolstand.printable import visible

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

    from toolstand.config import load_config
    from toolstand.printable import visible

    config = load_config(args.config)
    from toolstand.runner import load_inputs, missing_keys, run

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
    return 0


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

    from toolstand.problems import pydantic_message

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
    from toolstand.rejudge import cmd_rejudge as rejudge

    return rejudge(args.run, args.output, tools=args.tools, cases=args.cases)


def cmd_sim(args: argparse.Namespace) -> int:
    from toolstand.sim import serve_forever

    tools, cases = contract_and_cases(args)
    serve_forever(cases, tools, args.host, args.port, args.seed)
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
    from toolstand.printable import visible

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


# the subcommands whose --mcp / --against-mcp take a server's command after "--"
TAKES_A_COMMAND = ("contract", "check")


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # for the commands that start a server, everything after the first "--" is its
    # command; elsewhere "--" keeps argparse's meaning (what follows is positional)
    takes_tail = bool(words) and words[0] in TAKES_A_COMMAND and "--" in words
    cut = words.index("--") if takes_tail else len(words)
    args = _parser().parse_args(words[:cut])
    args.server_command = words[cut + 1 :]
    command = args.command or "tui"
    if command == "tui" and args.command is None:
        args = argparse.Namespace(config=None, cases=None, tools=None)
    try:
        return COMMANDS[command](args)
    except LoadError as exc:
        from toolstand.printable import visible

        for problem in exc.problems:
            print(visible(str(problem)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished attempts are on disk (use --resume)", file=sys.stderr)
        return 130
