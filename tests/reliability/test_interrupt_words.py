"""Issue 31, L1: Ctrl-C says what it left behind in each command's own words; only
`run` speaks of --resume."""

from __future__ import annotations

import pytest

from toolstand import cli


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["run", "--config", "c.json"],
            "interrupted; finished attempts are on disk (use --resume)",
        ),
        (["rejudge", "h.jsonl", "--output", "n.jsonl"], "interrupted; the output was not written"),
        (["report", "h.jsonl"], "interrupted; no report or output file was written"),
        (["import", "bfcl", "x", "--out", "d"], "interrupted; the files it finished stay whole"),
        (["check"], "interrupted; nothing was checked to the end"),
    ],
)
def test_ctrl_c_says_what_each_command_left(
    argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, argv[0], interrupted)
    assert cli.main(argv) == 130
    err = capsys.readouterr().err
    assert err.startswith(said)
    assert ("--resume" in err) == (argv[0] == "run")
