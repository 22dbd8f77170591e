"""Auth styles, error envelopes and request validation, per API."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.simwire import HEADERS, ask, build, for_case, path, send
from toolstand.sim import MODELS
from toolstand.spec.cases import Case
from toolstand.spec.contract import Contract
from toolstand.types import APIS


def envelope_message(api: str, data: dict) -> str:
    """The message of an error body, asserting the API's own envelope shape on the way."""
    if api == "anthropic":
        assert data["type"] == "error" and set(data["error"]) == {"type", "message"}
        assert data["request_id"].startswith("req_")
        return data["error"]["message"]
    if api == "gemini":
        assert set(data["error"]) >= {"code", "message", "status"}
        return data["error"]["message"]
    assert set(data["error"]) == {"message", "type", "param", "code"}
    return data["error"]["message"]


async def test_openai_needs_a_bearer_key(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    for api in ("openai-chat", "openai-responses"):
        body = for_case(api, "sim-careful", by_id["direct_lookup"], contract)
        for headers in ({}, {"Authorization": "Bearer"}, {"Authorization": "Basic abc"}):
            resp = await send(client, api, "sim-careful", body, headers)
            assert resp.status_code == 401
            assert "API key" in envelope_message(api, resp.json())
            assert resp.headers["x-toolstand-simulator"] == "1"


async def test_anthropic_accepts_both_auth_styles(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    body = for_case("anthropic", "sim-careful", by_id["direct_lookup"], contract)
    styles = {
        "x-api-key": {"x-api-key": "k", "anthropic-version": "2023-06-01"},
        "bearer": {"Authorization": "Bearer k", "anthropic-version": "2026-10-21"},
    }
    for style, headers in styles.items():
        resp = await send(client, "anthropic", "sim-careful", body, headers)
        assert resp.status_code == 200 and resp.headers["x-toolstand-sim-auth"] == style
    resp = await send(client, "anthropic", "sim-careful", body, {"anthropic-version": "2023-06-01"})
    assert resp.status_code == 401 and resp.json()["error"]["type"] == "authentication_error"
    resp = await send(client, "anthropic", "sim-careful", body, {"x-api-key": "k"})
    assert resp.status_code == 400 and "anthropic-version" in envelope_message(
        "anthropic", resp.json()
    )


async def test_gemini_key_in_header_or_query(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    body = for_case("gemini", "sim-careful", by_id["direct_lookup"], contract)
    url = path("gemini", "sim-careful")
    assert (await client.post(url, json=body, headers={"x-goog-api-key": "k"})).status_code == 200
    assert (await client.post(url, json=body, params={"key": "k"})).status_code == 200
    resp = await client.post(url, json=body)
    # Gemini answers a missing key with 403 PERMISSION_DENIED not 401
    assert resp.status_code == 403 and resp.json()["error"]["status"] == "PERMISSION_DENIED"


@pytest.mark.parametrize("api", APIS)
async def test_bad_json_unknown_model_and_unknown_path(api: str, client: httpx.AsyncClient) -> None:
    resp = await client.post(path(api, "sim-careful"), content=b"{not json", headers=HEADERS[api])
    assert resp.status_code == 400 and envelope_message(api, resp.json())
    body = build(api, "gpt-4o", [{"role": "user", "content": "hi"}])
    resp = await send(client, api, "gpt-4o", body)
    assert resp.status_code == 404
    assert all(m in envelope_message(api, resp.json()) for m in MODELS)
    wrong = {
        "openai-chat": "/v1/chat/complete",
        "openai-responses": "/v1/response",
        "anthropic": "/v1/message",
        "gemini": "/v1beta/models/sim-careful:streamGenerate",
    }[api]
    resp = await client.post(wrong, json={}, headers=HEADERS[api])
    assert resp.status_code == 404 and envelope_message(api, resp.json())
    resp = await client.get(path(api, "sim-careful"), headers=HEADERS[api])
    assert resp.status_code == 404


@pytest.mark.parametrize("api", APIS)
async def test_bad_stream_values_and_malformed_bodies_are_400(
    api: str, client: httpx.AsyncClient, contract: Contract
) -> None:
    body = build(
        api,
        "sim-careful",
        [{"role": "user", "content": "hi"}],
        contract.tools,
        choice="no_such_tool",
    )
    resp = await send(client, api, "sim-careful", body)
    assert resp.status_code == 400, resp.text
    if api != "gemini":
        body = build(api, "sim-careful", [{"role": "user", "content": "hi"}]) | {"stream": "yes"}
        assert (await send(client, api, "sim-careful", body)).status_code == 400
    if api == "openai-chat":  # stream_options only with stream: true
        body = build(api, "sim-careful", [{"role": "user", "content": "hi"}])
        body["stream_options"] = {"include_usage": True}
        resp = await send(client, api, "sim-careful", body)
        assert resp.status_code == 400 and "stream_options" in envelope_message(api, resp.json())
    empties: dict[str, dict[str, Any]] = {
        "openai-chat": {"model": "sim-careful", "messages": []},
        "openai-responses": {"model": "sim-careful"},
        "anthropic": {"model": "sim-careful", "max_tokens": 10},
        "gemini": {"contents": []},
    }
    empty = empties[api]
    assert (await send(client, api, "sim-careful", empty)).status_code == 400


async def test_openai_chat_tool_rules(client: httpx.AsyncClient) -> None:
    base = build("openai-chat", "sim-careful", [{"role": "user", "content": "hi"}])
    assert (
        await send(client, "openai-chat", "sim-careful", base | {"tools": []})
    ).status_code == 400
    assert (
        await send(client, "openai-chat", "sim-careful", base | {"tool_choice": "auto"})
    ).status_code == 400


async def test_anthropic_requires_max_tokens(client: httpx.AsyncClient) -> None:
    body = build("anthropic", "sim-careful", [{"role": "user", "content": "hi"}])
    del body["max_tokens"]
    resp = await send(client, "anthropic", "sim-careful", body)
    assert resp.status_code == 400 and "max_tokens" in envelope_message("anthropic", resp.json())


async def test_gemini_parameters_refuse_unknown_schema_keywords(
    client: httpx.AsyncClient, contract: Contract
) -> None:
    body = build(
        "gemini",
        "sim-careful",
        [{"role": "user", "content": "Где заказ ORD-123456?"}],
        contract.tools,
    )
    decl = body["tools"][0]["functionDeclarations"][0]
    decl["parameters"] = decl.pop("parametersJsonSchema")
    resp = await send(client, "gemini", "sim-careful", body)
    assert (
        resp.status_code == 400
        and 'Unknown name "additionalProperties"' in resp.json()["error"]["message"]
    )
    decl["parameters"] = {
        "type": "OBJECT",
        "properties": {"order_id": {"type": "STRING"}},
        "required": ["order_id"],
    }
    _, got = await ask(client, "gemini", "sim-careful", body)
    assert got.calls[0].arguments == {"order_id": "ORD-123456"}


async def test_stateful_responses_continue_with_previous_id(
    client: httpx.AsyncClient, by_id: dict[str, Case], contract: Contract
) -> None:
    api = "openai-responses"
    first = for_case(api, "sim-careful", by_id["recovery_not_found"], contract)
    data, got = await ask(client, api, "sim-careful", first)
    output = '{"ok": false, "error": {"code": "ORDER_NOT_FOUND"}}'
    body = {
        "model": "sim-careful",
        "previous_response_id": data["id"],
        "input": [
            {"type": "function_call_output", "call_id": got.calls[0].call_id, "output": output}
        ],
        "tools": first["tools"],
    }
    _, reply = await ask(client, api, "sim-careful", body)
    # the conversation is found by the id: the report is in the user's language
    assert reply.kind == "text" and reply.text.startswith("Не удалось выполнить get_order")
    assert "ORDER_NOT_FOUND" in reply.text
    body["previous_response_id"] = "resp_unknown"
    assert (await send(client, api, "sim-careful", body)).status_code == 400


async def test_root_describes_the_simulator(client: httpx.AsyncClient, sim) -> None:
    resp = await client.get("/")
    data = resp.json()
    assert resp.headers["x-toolstand-simulator"] == "1" and data["simulator"] == "toolstand"
    assert data["models"] == list(MODELS)
    assert (
        data["base_urls"]["openai-chat"] == sim.root + "/v1"
        and data["base_urls"]["gemini"] == sim.root
    )
