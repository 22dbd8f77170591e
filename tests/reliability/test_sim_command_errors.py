"""Issue 31, M16: `toolstand sim` answers a busy port, a port out of range and a bad
host with one line and exit 2, and a negative Content-Length with a 400."""

from __future__ import annotations

import asyncio
import socket

import pytest

from toolstand.cli import main
from toolstand.sim.http import HttpError, read_request


def test_a_busy_port_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["sim", "--port", str(port)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"toolstand sim: cannot listen on 127.0.0.1:{port}")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--port", "99999"], "toolstand sim: --port is 0 (a free one) or 1-65535, got 99999"),
        (["--port", "-1"], "toolstand sim: --port is 0 (a free one) or 1-65535, got -1"),
        (["--host", "256.1.1.1"], "toolstand sim: cannot listen on 256.1.1.1:0"),
    ],
)
def test_an_address_that_cannot_be_listened_on_is_one_line(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sim", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(said)


def test_a_negative_content_length_is_a_400() -> None:
    async def read() -> None:
        reader = asyncio.StreamReader()
        reader.feed_data(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
        reader.feed_data(b"Content-Length: -5\r\n\r\n")
        reader.feed_eof()
        await read_request(reader)

    with pytest.raises(HttpError) as info:
        asyncio.run(read())
    assert info.value.status == 400
