"""A 3xx is transport code ``redirect``, recorded with its Location (keys scrubbed) and
never followed (issue 31 L3): before, it was ``bad_request`` "HTTP 307" with no headers."""

from __future__ import annotations

import random

import httpx
import pytest

from toolstand.adapters import get_adapter
from toolstand.adapters.base import RequestSettings
from toolstand.transport import Exchange, RetryPolicy, exchange, make_client
from toolstand.util.redact import REDACTED

KEY = "sk-rt-SECRETSECRET-0001"


async def answer(response: httpx.Response, seen: list[httpx.Request]) -> Exchange:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return response

    adapter = get_adapter("openai-chat")
    built = adapter.build_request(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        system="s",
        messages=[{"role": "user", "content": "hi"}],
        tools=None,
        settings=RequestSettings(),
    )
    async with make_client(transport=httpx.MockTransport(handler)) as client:
        return await exchange(
            client, adapter, built, KEY, RequestSettings(), RetryPolicy(jitter=0.0),
            rng=random.Random(1),
        )  # fmt: skip


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_is_recorded_with_its_location_and_not_followed(status: int) -> None:
    seen: list[httpx.Request] = []
    location = f"http://127.0.0.1:18999/x?key={KEY}&v=1"
    ex = await answer(httpx.Response(status, headers={"location": location}), seen)
    assert len(seen) == 1  # neither followed nor retried
    assert ex.error is not None and ex.error.code == "redirect"
    kept = ex.headers["location"]
    assert KEY not in kept and kept.startswith("http://127.0.0.1:18999/x?")
    assert ex.error.message == f"HTTP {status} redirect (not followed) to {kept}"
    record = ex.response_record()
    assert record["headers"]["location"] == kept
    assert KEY not in repr(record) and KEY not in repr(ex.transport_error_record())


async def test_a_key_echoed_in_the_location_path_is_scrubbed() -> None:
    ex = await answer(httpx.Response(302, headers={"location": f"/v1/{KEY}/x"}), [])
    assert ex.headers["location"] == f"/v1/{REDACTED}/x"
    assert ex.error is not None and ex.error.code == "redirect"


async def test_a_redirect_without_location_says_so() -> None:
    ex = await answer(httpx.Response(307), [])
    assert ex.error is not None
    assert (ex.error.code, ex.error.message) == ("redirect", "HTTP 307 redirect without a Location")
