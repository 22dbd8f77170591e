"""The command line. Imports stay lazy so `toolstand run` never loads Textual."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from toolstand import __version__
from toolstand.problems import LoadError, Problem

DEFAULT_TOOLS = "contracts/delivery_tools.json"
DEFAULT_CASES = "cases/delivery.jsonl"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="toolstand", description="A test stand for LLM tool calling.")
    p.add_argument("--version", action="version", version=f"toolstand {__version__}")
    sub = p.add_subparsers(dest="command")

    r = sub.add_parser("run", help="run the case matrix; one JSONL line per attempt")
    r.add_argument("--config", required=True)
    r.add_argument("--cases")
    r.add_argument("--tools")
    r.add_argument("--output", help="default: runs/<date>-<time>.jsonl")
    r.add_argument("--resume", action="store_true", help="complete an interrupted output file")
    r.add_argument("--only", help="comma-separated case ids")
    r.add_argument("--modes", help="comma-separated modes: auto,forced,no_tools,reversed")
    r.add_argument("--repetitions", type=int)
    r.add_argument("--parallelism", type=int)

    rep = sub.add_parser("report", help="metrics with counts and 95%% intervals from JSONL")
    rep.add_argument("runs", nargs="+")
    rep.add_argument("--json", action="store_true")
    rep.add_argument("--errors-csv")
    rep.add_argument("--junit")

    cmp_ = sub.add_parser("compare", help="exit 1 only on a significant regression")
    cmp_.add_argument("baseline")
    cmp_.add_argument("current")
    cmp_.add_argument("--alpha", type=float, default=0.05)
    cmp_.add_argument("--json", action="store_true")

    rj = sub.add_parser("rejudge", help="re-parse and re-judge stored raw responses")
    rj.add_argument("run")
    rj.add_argument("--output", required=True)
    rj.add_argument("--tools")
    rj.add_argument("--cases")

    c = sub.add_parser("check", help="lint contracts and cases")
    c.add_argument("--tools", default=DEFAULT_TOOLS)
    c.add_argument("--cases", default=DEFAULT_CASES)
    c.add_argument(
        "--lock", action="store_true", help="fail on a contract changed without a version bump"
    )
    c.add_argument("--quiet", "-q", action="store_true", help="errors only, no per-API warnings")

    s = sub.add_parser("sim", help="serve the embedded simulator on loopback")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--cases", default=DEFAULT_CASES)
    s.add_argument("--tools", default=DEFAULT_TOOLS)
    s.add_argument("--seed", type=int, default=0)

    t = sub.add_parser("tui", help="the terminal UI (the default)")
    t.add_argument("history", nargs="?", help="a run file (JSONL) to open in History")
    t.add_argument("--history", dest="history_opt", metavar="PATH", help="the same, as an option")
    t.add_argument("--config")
    t.add_argument("--cases")
    t.add_argument("--tools")
    return p


def cmd_check(args: argparse.Namespace) -> int:
    from toolstand.check import run_check

    result = run_check(Path(args.tools), Path(args.cases), lock=args.lock)
    for problem in result.problems:
        if problem.severity == "error" or not args.quiet:
            print(problem)
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

    config = load_config(args.config)
    from toolstand.runner import load_inputs, missing_keys, run

    if args.modes:
        from toolstand.config import MODES

        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        wrong = [
            Problem(
                "--modes", None, f"$.modes[{i}]", f"unknown mode {m!r}; allowed: {', '.join(MODES)}"
            )
            for i, m in enumerate(modes)
            if m not in MODES
        ]
        if wrong or not modes or len(set(modes)) != len(modes):
            raise LoadError(wrong or [Problem("--modes", None, "$.modes", "give distinct modes")])
        config.modes = modes
    if args.repetitions:
        config.repetitions = args.repetitions
    if args.parallelism:
        config.parallelism = args.parallelism
    problems = missing_keys(config, args.config)
    if problems:
        raise LoadError(problems)
    inputs = load_inputs(config, args.config, args.cases, args.tools)
    output = (
        Path(args.output)
        if args.output
        else Path("runs") / f"{datetime.now():%Y-%m-%d-%H%M%S}.jsonl"
    )
    only = {x.strip() for x in args.only.split(",")} if args.only else None
    if only:
        unknown = only - set(inputs.casefile.by_id())
        if unknown:
            print(
                f"error: --only names unknown case ids: {', '.join(sorted(unknown))}",
                file=sys.stderr,
            )
            return 2
    summary = asyncio.run(
        run(inputs, output, resume=args.resume, only=only, progress_out=sys.stderr)
    )
    print(summary.line(), file=sys.stderr)
    print(output)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from toolstand.report_cli import cmd_report as report

    return report(args.runs, args.json, args.errors_csv, args.junit)


def cmd_compare(args: argparse.Namespace) -> int:
    from toolstand.report_cli import cmd_compare as compare

    return compare(args.baseline, args.current, args.alpha, args.json)


def cmd_rejudge(args: argparse.Namespace) -> int:
    from toolstand.rejudge import cmd_rejudge as rejudge

    return rejudge(args.run, args.output, tools=args.tools, cases=args.cases)


def cmd_sim(args: argparse.Namespace) -> int:
    from toolstand.sim import serve_forever

    serve_forever(args.cases, args.tools, args.host, args.port, args.seed)
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
    "sim": cmd_sim,
    "tui": cmd_tui,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command = args.command or "tui"
    if command == "tui" and args.command is None:
        args = argparse.Namespace(config=None, cases=None, tools=None)
    try:
        return COMMANDS[command](args)
    except LoadError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished attempts are on disk (use --resume)", file=sys.stderr)
        return 130
