"""addon/serve/websocket/endpoint.py in process: the upgrade answered 101, a connection's frames on a
stand-in for the client's end (addon/patches/websocket_served.py `Handover`), the idle close, the
ping, the backlog bound and the bound on what a socket's flow keeps. (Requests through the gateway,
which need the proxy core: tests/addon/e2e/test_websocket.py.)"""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mitmproxy.test import tflow

from addon.observe import flowinfo
from addon.patches import websocket_served
from addon.patches.websocket_served import Gone
from addon.serve.websocket import endpoint as endpoint_module
from addon.serve.websocket import frames
from addon.serve.websocket.endpoint import Connection, Endpoint, keep
from addon.work import limits
from tests.addon.conftest import Chain, client_flow

Ctx = tuple[Chain, Any]
UPGRADE = {"upgrade": "websocket", "connection": "Upgrade", "sec-websocket-version": "13",
           "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ=="}
PREWARM = {"type": "response.create", "model": "gpt-5.5", "generate": False, "input": []}


def parse(data: bytes) -> list[tuple[int, bytes]]:
    """Server frames (RFC 6455 5.2, unmasked): [(opcode, payload)]."""
    out, at = [], 0
    while at < len(data):
        opcode, size = data[at] & 0x0F, data[at + 1] & 0x7F
        at += 2
        if size == 126:
            (size,) = struct.unpack_from("!H", data, at)
            at += 2
        elif size == 127:
            (size,) = struct.unpack_from("!Q", data, at)
            at += 8
        out.append((opcode, data[at:at + size]))
        at += size
    return out


class Client:
    """The client's end as the endpoint sees it: what it was sent, whether it was closed."""

    def __init__(self) -> None:
        self.frames: list[tuple[int, bytes]] = []
        self.closed = False
        self.arrived = asyncio.Event()

    async def send(self, data: bytes, close: bool = False) -> None:
        if self.closed:
            raise Gone
        self.frames += parse(data)
        self.closed = close
        self.arrived.set()

    def texts(self) -> list[Any]:
        return [json.loads(p) for op, p in self.frames if op == 0x1]

    def close_frame(self) -> tuple[int, str] | None:
        found = [p for op, p in self.frames if op == 0x8]
        return (struct.unpack("!H", found[0][:2])[0], found[0][2:].decode()) if found else None

    async def until(self, condition: Callable[[], bool]) -> None:
        while not condition():
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 10)


def served(gateway: Ctx, scenario: Callable[[Connection, Client], Awaitable[Any]], idle: float = 600) -> Any:
    """Run `scenario(connection, client)` on a socket the endpoint answered and opened."""
    addon, _ = gateway

    async def main() -> Any:
        endpoint = Endpoint(idle_seconds=idle)
        endpoint.running()
        flow = client_flow(method="GET", headers=UPGRADE)
        endpoint.take(flow, addon.router.routes)
        assert flow.response is not None and flow.response.status_code == 101
        client = Client()
        try:
            connection = endpoint.open(flow, client)  # type: ignore[arg-type]
            return await scenario(connection, client)
        finally:
            await endpoint.done()

    return asyncio.run(asyncio.wait_for(main(), 30))


def test_an_upgrade_is_answered_101_with_its_accept_token_and_served_here(gateway: Ctx) -> None:
    addon, _ = gateway
    endpoint = Endpoint()
    endpoint.load(None)
    endpoint.running()
    flow = client_flow(method="GET", headers=UPGRADE)
    endpoint.take(flow, addon.router.routes)
    assert flow.response is not None and flow.response.status_code == 101
    # RFC 6455 1.3's own example key and answer
    assert flow.response.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    assert "sec-websocket-extensions" not in flow.response.headers  # permessage-deflate declined
    assert flow.metadata[flowinfo.WEBSOCKET] == "https://api.openai.com/v1/responses"
    assert websocket_served.served(flow)
    assert not websocket_served.served(client_flow(method="GET", headers=UPGRADE))


def test_an_upgrade_of_another_version_is_426_naming_13(gateway: Ctx) -> None:
    addon, _ = gateway
    endpoint = Endpoint()
    endpoint.running()
    flow = client_flow(method="GET", headers={**UPGRADE, "sec-websocket-version": "8"})
    endpoint.take(flow, addon.router.routes)
    assert flow.response is not None and flow.response.status_code == 426
    assert flow.response.headers["sec-websocket-version"] == "13"


def test_a_prewarm_is_answered_on_the_socket(gateway: Ctx) -> None:
    async def scenario(connection: Connection, client: Client) -> list[Any]:
        connection.message(json.dumps(PREWARM))
        await client.until(lambda: len(client.texts()) == 2)
        return client.texts()

    created, completed = served(gateway, scenario)
    assert (created["type"], completed["type"]) == ("response.created", "response.completed")


def test_a_binary_or_non_json_message_gets_an_error_event_and_the_socket_lives_on(gateway: Ctx) -> None:
    async def scenario(connection: Connection, client: Client) -> list[Any]:
        connection.message(b"\x00\x01")
        connection.message("not json")
        connection.message(json.dumps(PREWARM))
        await client.until(lambda: len(client.texts()) == 4)
        return client.texts()

    binary, text, created, _completed = served(gateway, scenario)
    assert (binary["type"], binary["status"]) == ("error", 400)
    assert (text["type"], text["status"], text["error"]["code"]) == ("error", 400, "invalid_json")
    assert created["type"] == "response.created"


def test_an_idle_connection_is_closed_by_the_gateway(gateway: Ctx) -> None:
    async def scenario(_connection: Connection, client: Client) -> tuple[int, str] | None:
        await client.until(lambda: client.closed)
        return client.close_frame()

    assert served(gateway, scenario, idle=0.2) == (1000, "idle")


def test_a_peer_that_answers_no_ping_is_closed_and_one_that_answers_is_kept(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint_module, "PING_SECONDS", 0.1)

    async def scenario(connection: Connection, client: Client) -> tuple[Any, ...]:
        for _ in range(3):  # three pings answered: still open
            await client.until(lambda: sum(op == 0x9 for op, _ in client.frames) > 0)
            client.frames.clear()
            connection.pong()
        answered = client.closed
        await client.until(lambda: client.closed)  # the next one is not answered
        return answered, client.close_frame()

    answered, closed = served(gateway, scenario)
    assert answered is False
    assert closed == (1011, "keepalive ping timeout")


def test_the_client_leaving_ends_the_connection_quietly(gateway: Ctx,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    async def scenario(connection: Connection, client: Client) -> bool:
        connection.gone()
        for _ in range(100):
            await asyncio.sleep(0.01)
        return client.closed

    assert served(gateway, scenario) is False  # nothing more is written to a client that left
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]


def test_a_socket_flow_keeps_only_its_latest_messages_within_kept_bytes(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_max_kept_bytes=250)
    flow = tflow.twebsocketflow(messages=False)
    flow.websocket.messages = []
    flow.metadata[flowinfo.WEBSOCKET] = "https://api.openai.com/v1/responses"
    for i in range(10):
        keep(flow, b"%02d" % i * 50)
    kept = flow.websocket.messages
    assert [m.content[:2] for m in kept] == [b"08", b"09"]
    assert all(m.from_client for m in kept)
    assert flow.metadata[flowinfo.WEBSOCKET_DROPPED] == 8


def test_a_client_that_does_not_read_is_closed_once_its_backlog_passes_the_bound(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory per connection stays bounded (docs/websocket.md "Limits"): frames a client leaves
    unread pile up only to `limits.SOCKET_BACKLOG_BYTES`, then the connection closes with 1008."""
    monkeypatch.setattr(limits, "SOCKET_BACKLOG_BYTES", 1000)

    class NeverRead:
        """A client that reads nothing: a batch's write waits for good; the close goes at once."""

        def __init__(self) -> None:
            self.closed: bytes | None = None

        async def send(self, data: bytes, close: bool = False) -> None:
            if close:
                self.closed = data
                return
            await asyncio.Event().wait()

    async def main() -> tuple[Any, int]:
        client = NeverRead()
        connection = Connection(client, None, 600)  # type: ignore[arg-type]
        writer = asyncio.create_task(connection._write())
        connection._put(b"x" * 100)
        await asyncio.sleep(0)  # the writer takes the first frame and waits
        for _ in range(100):  # 10 kB of answer, ten times the bound
            connection._put(b"x" * 100)
        assert connection._closing is not None
        await connection._closing
        queued = len(connection._out)
        writer.cancel()
        return client.closed, queued

    closed, queued = asyncio.run(asyncio.wait_for(main(), 30))
    assert closed is not None and parse(closed)[0][0] == 0x8
    assert struct.unpack("!H", parse(closed)[0][1][:2])[0] == 1008
    assert queued <= 10  # what fit within the bound; the rest was never queued


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 70000])
def test_a_text_frame_is_read_back_by_a_websocket_client_whatever_its_length(size: int) -> None:
    import wsproto
    import wsproto.events

    client = wsproto.Connection(wsproto.ConnectionType.CLIENT)
    payload = b"x" * size
    client.receive_data(frames.text(payload) + frames.close(1000, "bye"))
    got = list(client.events())
    assert isinstance(got[0], wsproto.events.TextMessage) and got[0].data == payload.decode()
    assert isinstance(got[-1], wsproto.events.CloseConnection) and got[-1].code == 1000


def test_a_client_that_sends_without_waiting_for_its_answers_is_closed(gateway: Ctx) -> None:
    """Messages read and not yet served are bounded (`WAITING_MESSAGES`, and their bytes by
    `gateway_max_request_bytes`): mitmproxy reads a client without pause, so a client that sends
    request after request without reading its answers would otherwise pile them up in memory."""
    async def scenario(connection: Connection, client: Client) -> tuple[int, str] | None:
        hold = asyncio.get_running_loop().create_future()
        connection._turn = asyncio.ensure_future(hold)  # a request in flight: the next ones wait
        for _ in range(endpoint_module.WAITING_MESSAGES + 5):
            connection.message(json.dumps(PREWARM))
        await client.until(lambda: client.closed)
        return client.close_frame()

    code, _reason = served(gateway, scenario)
    assert code == 1008
