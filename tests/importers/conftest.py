"""The importer tests' fixture: run the CLI in-process and keep what it printed."""

from __future__ import annotations

import pytest

from tests.support.importers import Cli, Ran
from toolstand.cli import main


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    """``cli(*argv)``: run toolstand in-process, return its exit code, stdout and stderr."""

    def run(*argv: str) -> Ran:
        capsys.readouterr()
        code = main(list(argv))
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run
