"""addon/serve/websocket/endpoint.py in process: the one-time path, the prewarm on a real socket, the idle
close, and the bound on what a socket's flow keeps. (Requests through the gateway, which need the
proxy core: tests/addon/e2e/test_websocket.py.)"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mitmproxy.test import tflow
from mitmproxy.websocket import WebSocketMessage
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosedOK, InvalidStatus
from wsproto.frame_protocol import Opcode

from addon.observe import flowinfo
from addon.serve.websocket import endpoint as endpoint_module
from addon.serve.websocket.endpoint import Connection, Endpoint
from addon.work import limits
from tests.addon.conftest import Chain, client_flow

Ctx = tuple[Chain, Any]
UPGRADE = {"upgrade": "websocket", "connection": "Upgrade", "sec-websocket-version": "13",
           "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ=="}


def served(gateway: Ctx, scenario: Callable[[Endpoint, str], Awaitable[Any]], idle: float = 600) -> Any:
    """Run `scenario(endpoint, url)` with a running endpoint and one upgrade re-targeted to it."""
    addon, _ = gateway

    async def main() -> Any:
        endpoint = Endpoint(idle_seconds=idle)
        await endpoint.start(max_size=1 << 20)
        try:
            flow = client_flow(method="GET", headers=UPGRADE)
            endpoint.take(flow, addon.router.routes)
            return await scenario(endpoint, f"ws://127.0.0.1:{flow.request.port}{flow.request.path}")
        finally:
            await endpoint.done()

    return asyncio.run(asyncio.wait_for(main(), 30))


def test_a_prewarm_is_answered_on_the_socket(gateway: Ctx) -> None:
    async def scenario(_endpoint: Endpoint, url: str) -> list[Any]:
        async with connect(url, proxy=None) as ws:
            await ws.send(json.dumps({"type": "response.create", "model": "gpt-5.5", "generate": False,
                                      "input": []}))
            return [json.loads(await ws.recv()) for _ in range(2)]

    created, completed = served(gateway, scenario)
    assert (created["type"], completed["type"]) == ("response.created", "response.completed")


def test_a_path_the_gateway_did_not_hand_out_is_refused_and_each_path_serves_once(gateway: Ctx) -> None:
    async def scenario(endpoint: Endpoint, url: str) -> tuple[int, int]:
        with pytest.raises(InvalidStatus) as unknown:
            async with connect(f"ws://127.0.0.1:{endpoint.port}/guessed", proxy=None):
                pass
        async with connect(url, proxy=None):
            pass
        with pytest.raises(InvalidStatus) as again:
            async with connect(url, proxy=None):
                pass
        return unknown.value.response.status_code, again.value.response.status_code

    assert served(gateway, scenario) == (404, 404)


def test_a_binary_or_non_json_message_gets_an_error_event_and_the_socket_lives_on(gateway: Ctx) -> None:
    async def scenario(_endpoint: Endpoint, url: str) -> list[Any]:
        async with connect(url, proxy=None) as ws:
            await ws.send(b"\x00\x01")
            await ws.send("not json")
            return [json.loads(await ws.recv()) for _ in range(2)]

    binary, text = served(gateway, scenario)
    assert (binary["type"], binary["status"]) == ("error", 400)
    assert (text["type"], text["status"], text["error"]["code"]) == ("error", 400, "invalid_json")


def test_an_idle_connection_is_closed_by_the_gateway(gateway: Ctx) -> None:
    async def scenario(_endpoint: Endpoint, url: str) -> tuple[int | None, str]:
        async with connect(url, proxy=None) as ws:
            with pytest.raises(ConnectionClosedOK) as closed:
                await ws.recv()
            return closed.value.rcvd.code if closed.value.rcvd else None, closed.value.rcvd.reason

    assert served(gateway, scenario, idle=0.2) == (1000, "idle")


def test_a_socket_flow_keeps_only_its_latest_messages_within_kept_bytes(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_max_kept_bytes=250)
    endpoint = Endpoint()
    flow = tflow.twebsocketflow(messages=False)
    flow.websocket.messages = []
    flow.metadata[flowinfo.WEBSOCKET] = "https://api.openai.com/v1/responses"
    for i in range(10):
        flow.websocket.messages.append(WebSocketMessage(Opcode.TEXT, i % 2 == 0, b"%02d" % i * 50))
        endpoint.websocket_message(flow)
    kept = flow.websocket.messages
    assert [m.content[:2] for m in kept] == [b"08", b"09"]
    assert flow.metadata[flowinfo.WEBSOCKET_DROPPED] == 8


def test_other_websocket_flows_keep_every_message(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_max_kept_bytes=250)
    flow = tflow.twebsocketflow(messages=False)
    flow.websocket.messages = []
    for _ in range(10):
        flow.websocket.messages.append(WebSocketMessage(Opcode.TEXT, True, b"x" * 100))
        Endpoint().websocket_message(flow)
    assert len(flow.websocket.messages) == 10


def test_a_client_that_does_not_read_is_closed_once_its_backlog_passes_the_bound(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory per connection stays bounded (docs/websocket.md "Limits"): frames a client leaves
    unread pile up only to `limits.SOCKET_BACKLOG_BYTES`, then the connection closes with 1008."""
    monkeypatch.setattr(limits, "SOCKET_BACKLOG_BYTES", 1000)

    class NeverRead:
        """A socket whose client reads nothing: every write waits for good."""

        def __init__(self) -> None:
            self.closed: tuple[int, str] | None = None

        async def send(self, _frame: str) -> None:
            await asyncio.Event().wait()

        async def close(self, code: int, reason: str) -> None:
            self.closed = (code, reason)

    async def main() -> tuple[Any, int]:
        ws = NeverRead()
        connection = Connection(ws, None, 600)  # type: ignore[arg-type]
        writer = asyncio.create_task(connection._write())
        for _ in range(100):  # 10 kB of answer, ten times the bound
            connection._put("x" * 100)
        assert connection._closing is not None
        await connection._closing
        queued = connection._out.qsize()
        writer.cancel()
        return ws.closed, queued

    closed, queued = asyncio.run(asyncio.wait_for(main(), 30))
    assert closed is not None and closed[0] == 1008
    assert queued <= 10  # what fit within the bound; the rest was never queued


def test_pending_upgrades_are_bounded_per_client_with_a_clear_refusal(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35, case 9: a burst from one client used to push out the table's oldest entries, shared
    by every client (their sockets then got 404); one client past its own bound is refused at once."""
    addon, _ = gateway
    monkeypatch.setattr(endpoint_module, "PENDING_PER_CLIENT", 3)

    async def main() -> list[Any]:
        endpoint = Endpoint()
        await endpoint.start(max_size=1 << 20)
        try:
            flows = [client_flow(method="GET", headers=UPGRADE) for _ in range(4)]
            other = client_flow(method="GET", headers=UPGRADE)
            other.client_conn.peername = ("192.0.2.7", 40000)
            for flow in (*flows, other):
                endpoint.take(flow, addon.router.routes)
            endpoint.error(flows[0])  # its client left: its place is free again
            again = client_flow(method="GET", headers=UPGRADE)
            endpoint.take(again, addon.router.routes)
            return [*flows, other, again]
        finally:
            await endpoint.done()

    *first, refused, other, again = asyncio.run(main())
    assert all(f.response is None for f in (*first, other, again))
    assert refused.response is not None and refused.response.status_code == 429
    assert refused.response.headers["retry-after"] == "1"
    assert refused.response.json()["error"]["code"] == "too_many_websocket_upgrades"
