"""Shared helpers for the addon's unit tests: a taddons context with the options mitmdump has."""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.addons import proxyserver, serverplayback
from mitmproxy.test import taddons, tflow

from addon.gateway import Gateway, chain
from addon.serve.flow import context_of
from addon.serve.services import Services
from addon.serve.websocket.endpoint import Endpoint

CLIENT_URL = "https://api.openai.com/v1/responses"
UPSTREAM_KEY = "sk-ant-upstream-secret-0123456789"
CLIENT_KEY = "sk-proj-client-secret-0123456789"


@pytest.fixture
def listener() -> Iterator[str]:
    """A reachable upstream base URL: a listening socket (nothing is ever sent to it here)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"


@pytest.fixture
def dead_url() -> str:
    """A base URL nothing listens on."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class Chain:
    """The gateway's addons (addon/gateway.py `chain`, but the WebSocket endpoint, a process-wide
    server) as mitmproxy calls them: each hook of every addon in turn, an awaitable one awaited
    before the next addon's hook runs. Its attributes are the shared services' (`flows`, `router`,
    `turns`, ...). Load `members` into a `taddons.context`; `tctx.configure(chain, ...)` and
    `tctx.cycle(chain, flow)` work on it as on one addon."""

    name = "gateway-chain-under-test"

    def __init__(self) -> None:
        self.members = [a for a in chain() if not isinstance(a, Endpoint)]
        self.gateway = next(a for a in self.members if isinstance(a, Gateway))
        self.services: Services = self.gateway.services

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["services"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in Services.__dataclass_fields__:
            setattr(self.services, name, value)  # e.g. a Capabilities with a test's clock
        else:
            super().__setattr__(name, value)

    def _each(self, hook: str, *args: Any) -> Awaitable[None] | None:
        for n, member in enumerate(self.members):
            fn = getattr(member, hook, None)
            if fn is not None and inspect.isawaitable(result := fn(*args)):
                return self._rest(result, n + 1, hook, *args)
        return None

    async def _rest(self, pending: Awaitable[Any], start: int, hook: str, *args: Any) -> None:
        await pending
        for member in self.members[start:]:
            fn = getattr(member, hook, None)
            if fn is not None and inspect.isawaitable(result := fn(*args)):
                await result

    def http_connect(self, flow: http.HTTPFlow) -> None:
        self._each("http_connect", flow)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        assert self._each("requestheaders", flow) is None

    def request(self, flow: http.HTTPFlow) -> Awaitable[None]:
        result = self._each("request", flow)
        assert result is not None  # the gateway's `request` is a coroutine
        return result

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        assert self._each("responseheaders", flow) is None

    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._each("response", flow)

    def error(self, flow: http.HTTPFlow) -> None:
        assert self._each("error", flow) is None

    def running(self) -> None:
        assert self._each("running") is None

    def done(self) -> None:
        assert self._each("done") is None


@pytest.fixture
def gateway(listener: str, monkeypatch: pytest.MonkeyPatch,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Chain, taddons.context]]:
    """A Gateway routed to anthropic at a reachable local address, with the key in the env (named
    by gateway_key_env: a local address gets no key unless the route names one); the shipped
    capability tables only (the listener answers nothing; test_capabilities.py asks a fake models
    endpoint); its response store in a temporary folder."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", UPSTREAM_KEY)
    addon = Chain()
    # proxyserver and serverplayback declare connection_strategy and server_replay, as in mitmdump
    with taddons.context(proxyserver.Proxyserver(), serverplayback.ServerPlayback(), *addon.members) as tctx:
        tctx.configure(addon, gateway_upstream="anthropic", gateway_base_url=listener,
                       gateway_model="claude-sonnet-4-6", gateway_capabilities="table",
                       gateway_key_env="ANTHROPIC_API_KEY",
                       gateway_store_path=str(tmp_path_factory.mktemp("store") / "store.sqlite"))
        yield addon, tctx
        addon.done()  # as mitmproxy at shutdown: flows never finished let go of what they held


def client_flow(body: Any = None, *, url: str = CLIENT_URL, method: str = "POST",
                headers: dict[str, str] | None = None) -> http.HTTPFlow:
    """A client request as the `request` hook sees it: no response yet."""
    if body is None:
        body = {"model": "gpt-5.5", "input": "hi", "stream": True}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = http.Request.make(method, url, content if method == "POST" else b"", {
        "host": url.split("/")[2], "content-type": "application/json",
        "authorization": f"Bearer {CLIENT_KEY}",
        **(headers or {})})
    flow = tflow.tflow(req=request)
    flow.metadata.clear()
    return flow


def wire_headers(flow: http.HTTPFlow) -> dict[str, str]:
    """The request headers as they go upstream to the pool's first deployment (credentials
    included, addon/serve/sending.py `Sending.first`), lower-cased names; the flow itself shows
    `<redacted>` for each credential."""
    fc = context_of(flow)
    assert fc is not None and fc.sending is not None, "the flow was not sent upstream"
    shown = {k.lower(): v for k, v in flow.request.headers.items()}
    return {**shown, **{k.lower(): v for k, v in fc.sending.first.headers}}


def finish(result: Awaitable[None] | None) -> None:
    """Run to its end what a hook returned for mitmproxy to await (a large body's worker thread,
    addon/work/offload.py)."""
    if result is not None:
        asyncio.run(result)  # type: ignore[arg-type]


def run_request(addon: Chain, flow: http.HTTPFlow) -> None:
    """`requestheaders`, then the (async) `request` hook run to its end, as the proxy does."""
    addon.requestheaders(flow)
    finish(addon.request(flow))


def sse_events(data: bytes) -> list[dict[str, Any]]:
    """The `data:` payloads of an SSE body, parsed."""
    out = []
    for block in data.decode().split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data:"):
                out.append(json.loads(line[5:]))
    return out


def capture_messages_turn(addon: Any, tctx: Any, folder: Path, turn: dict[str, Any], upstream: bytes) -> Path:
    """One Messages-client (Claude Code) turn through the gateway's hooks with captures on,
    answered by the Anthropic stream `upstream` as a server replay; the capture folder it wrote."""
    tctx.configure(addon, gateway_capture_dir=str(folder))
    flow = client_flow(turn, url="https://api.anthropic.com/v1/messages?beta=true",
                       headers={"x-api-key": "sk-ant-client-0123456789", "anthropic-version": "2023-06-01"})
    run_request(addon, flow)
    flow.response = http.Response.make(200, upstream, {"content-type": "text/event-stream"})
    flow.is_replay = "response"
    addon.responseheaders(flow)
    finish(addon.response(flow))
    (written,) = folder.iterdir()
    return written
