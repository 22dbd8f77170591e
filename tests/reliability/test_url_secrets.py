"""Issue 31, H8: a key in the base URL's query (``?key=``, ``?api-key=``) never reaches
the run header, a record or a message; it is scrubbed wherever it echoes."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from toolstand.spec.config import load_config
from toolstand.util.redact import REDACTED, url_secrets

SECRET = "qs-SECRET-0123456789"
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("param", ["key", "api-key", "api_key", "KEY"])
def test_a_query_key_is_neither_dumped_nor_left_out_of_the_secrets(
    tmp_path: Path, param: str
) -> None:
    url = f"https://user:pw-SECRET-999@example.test/v1?{param}={SECRET}&api-version=2024"
    run = {"provider": "p", "model": "m", "api": "openai-chat", "base_url": url}
    cfg = tmp_path / "config.json"
    cfg.write_bytes(
        orjson.dumps(
            {
                "runs": [run],
                "tools": str(ROOT / "contracts" / "delivery_tools.json"),
                "cases": str(ROOT / "cases" / "delivery.jsonl"),
            }
        )
    )
    config = load_config(cfg)
    dumped = orjson.dumps([r.model_dump(mode="json") for r in config.runs]).decode()
    assert SECRET not in dumped and "pw-SECRET-999" not in dumped
    assert "api-version=2024" in dumped  # what is no secret stays
    assert set(config.secrets()) >= {SECRET, "pw-SECRET-999"}


def test_url_secrets_reads_a_bad_url_without_raising() -> None:
    assert url_secrets("http://[::1/v1?key=abc") == []
    assert url_secrets(f"http://h/v1?key={SECRET}") == [SECRET]
    assert REDACTED not in url_secrets("http://h/v1")
