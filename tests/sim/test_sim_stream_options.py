"""The simulator's stream options: sim.stream_chunks in the config, OpenAI's obfuscation
padding, and the unstreamed twin whose bytes a streamed request's draws are keyed on."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.support.simstream import streamed
from tests.support.simwire import for_case
from toolstand.sim.streaming import unstreamed
from toolstand.spec.cases import Case
from toolstand.spec.config import parse_config
from toolstand.spec.contract import Contract
from toolstand.util.problems import LoadError


def test_stream_chunks_config_names_path_and_allowed_values() -> None:
    base = '{"runs": [{"provider": "s", "model": "sim-careful", "api": "openai-chat", "base_url": "sim"}], "tools": "t.json", "cases": "c.jsonl", "sim": %s}'
    assert parse_config(base % "{}").sim.stream_chunks == "token"
    assert parse_config(base % '{"stream_chunks": "random"}').sim.stream_chunks == "random"
    with pytest.raises(LoadError) as exc:
        parse_config(base % '{"stream_chunks": "bytes"}', "cfg.json")
    text = str(exc.value)
    assert "cfg.json:1" in text and "$.sim.stream_chunks" in text
    assert all(m in text for m in ("'token'", "'whole'", "'random'", "bytes"))
    with pytest.raises(LoadError) as exc:
        parse_config(base % '{"stream_faults": {"call_dropped": 1.0}}', "cfg.json")
    assert "$.sim.stream_faults" in str(exc.value) and "call_lost" in str(exc.value)


@pytest.mark.parametrize("indent", [None, 2])
def test_the_unstreamed_twin_is_the_same_bytes_without_the_stream_members(
    indent: int | None,
) -> None:
    body: dict[str, Any] = {
        "model": "m",
        "input": [{"content": 'say "stream":true', "stream": True}],
        "tools": [{"parameters": {"stream_options": {"x": [1, {"y": "}"}]}}}],
    }
    keys: list[tuple[str, Any]] = [("stream", True), ("stream_options", {"include_usage": True})]
    twin = json.dumps(body, indent=indent, ensure_ascii=False).encode()
    for at in (0, 1, 3):  # first, middle, last
        for extra in (keys, keys[:1]):
            items = list(body.items())
            items[at:at] = extra
            raw = json.dumps(dict(items), indent=indent, ensure_ascii=False).encode()
            assert unstreamed(raw) == twin
    assert unstreamed(twin) == twin
    assert unstreamed(b'{"stream": true}') == b"{}"


async def test_openai_streams_carry_obfuscation_unless_turned_off(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    for api in ("openai-chat", "openai-responses"):
        body = for_case(api, "sim-careful", by_id["direct_lookup"], contract)
        _, _, events = await streamed(client, api, "sim-careful", body)
        data = [e.json for e in events if e.data != "[DONE]"]
        padded = [d for d in data if "obfuscation" in d]
        if api == "openai-chat":
            assert padded == data
        else:
            assert padded == [d for d in data if d["type"].endswith(".delta")] and padded
        assert len({len(d["obfuscation"]) for d in padded}) > 1  # its length varies
        body["stream_options"] = {"include_obfuscation": False}
        if api == "openai-chat":
            body["stream_options"]["include_usage"] = True
        _, _, events = await streamed(client, api, "sim-careful", body, usage=False)
        assert not any(b"obfuscation" in e.data.encode() for e in events)
