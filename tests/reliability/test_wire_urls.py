"""Issue 31, M13, L5 and M14: the URL a request goes to is the one the config names,
with the path where it belongs, the model id kept to its segment, and no proxy but
the run's own."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from toolstand.adapters import get_adapter
from toolstand.adapters.base import RequestSettings, endpoint
from toolstand.spec.config import load_config
from toolstand.transport import make_client
from toolstand.types import APIS

ROOT = Path(__file__).resolve().parents[2]
PATHS = {
    "openai-chat": "/openai/chat/completions",
    "openai-responses": "/openai/responses",
    "anthropic": "/openai/v1/messages",
    "gemini": "/openai/v1beta/models/m-1:generateContent",
}


@pytest.mark.parametrize("api", APIS)
def test_a_base_url_query_goes_after_the_path(api: str) -> None:
    built = get_adapter(api).build_request(
        base_url="https://h.example/openai/?api-version=2024-10-21#frag",
        model="m-1",
        system=None,
        messages=[{"role": "user", "content": "hi"}],
        tools=None,
        settings=RequestSettings(),
    )
    url = httpx.URL(built.http.url)
    assert url.path == PATHS[api]
    assert url.query == b"api-version=2024-10-21" and url.fragment == ""


def test_endpoint_without_a_query_is_the_plain_join() -> None:
    assert endpoint("http://h/v1/", "/chat/completions") == "http://h/v1/chat/completions"


@pytest.mark.parametrize("model", ["../../../evil", "a#b", "x?y=1", "models/../../z"])
def test_a_gemini_model_id_stays_one_path_segment(model: str) -> None:
    built = get_adapter("gemini").build_request(
        base_url="https://g.example",
        model=model,
        system=None,
        messages=[{"role": "user", "content": "hi"}],
        tools=None,
        settings=RequestSettings(),
    )
    url = httpx.URL(built.http.url)
    assert url.path.startswith("/v1beta/models/") and url.path.endswith(":generateContent")
    assert url.raw_path.count(b"/") == 3 and url.query == b"" and url.fragment == ""


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # the stdlib's naming
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def test_the_environments_proxy_is_never_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    # a proxy that sees every request: with the environment's proxy taken, the request
    # would go to it (and the origin would see nothing)
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    origin = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    seen: list[str] = []
    for server, name in ((proxy, "proxy"), (origin, "origin")):
        server.RequestHandlerClass = type(name, (_Ok,), {"do_GET": _counting(seen, name)})
        threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy_url = f"http://127.0.0.1:{proxy.server_address[1]}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy_url)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    target = f"http://127.0.0.1:{origin.server_address[1]}/v1/x"
    try:
        async with make_client(plain_http=True) as client:
            assert (await client.get(target)).status_code == 204
        assert seen == ["origin"]
        async with make_client(plain_http=True, proxy=proxy_url) as client:  # the run's own
            assert (await client.get(target)).status_code == 204
        assert seen == ["origin", "proxy"]
    finally:
        for server in (proxy, origin):
            server.shutdown()
            server.server_close()


def _counting(seen: list[str], name: str) -> Any:
    def do_GET(self: BaseHTTPRequestHandler) -> None:
        seen.append(name)
        self.send_response(204)
        self.end_headers()

    return do_GET


def test_a_run_names_its_proxy_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    def config(proxy: str) -> Path:
        run = {"provider": "p", "model": "m", "api": "openai-chat"}
        run |= {"base_url": "https://api.example/v1", "proxy": proxy}
        path = tmp_path / "config.json"
        path.write_bytes(
            orjson.dumps(
                {
                    "runs": [run],
                    "tools": str(ROOT / "contracts" / "delivery_tools.json"),
                    "cases": str(ROOT / "cases" / "delivery.jsonl"),
                }
            )
        )
        return path

    loaded = load_config(config("http://user:proxy-SECRET-1@proxy.example:3128"))
    assert loaded.runs[0].proxy is not None
    assert "proxy-SECRET-1" in loaded.secrets()
    assert "proxy-SECRET-1" not in orjson.dumps(loaded.runs[0].model_dump(mode="json")).decode()
    with pytest.raises(Exception, match="a proxy is an http\\(s\\) URL with a host"):
        load_config(config("socks5://nowhere"))
