"""The argparse tree of the ``toolstand`` command: every subcommand, flag and example.

cli.py runs the commands; this module only describes them, so ``--help`` stays in one
place and tests can read the tree without running anything.
"""

from __future__ import annotations

import argparse

from toolstand import __version__

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


def build_parser() -> argparse.ArgumentParser:
    """The whole ``toolstand`` command line."""
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
    c.add_argument(
        "--no-cases",
        action="store_true",
        help="lint the contract alone (a project's config would otherwise add its cases)",
    )
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
