"""addon/patches/websocket_served.py: a socket the gateway answered is served by its own layer on
the client's connection (no server connection, no hook per message): the client's messages go to
the endpoint's peer, pings are answered, frames injected for the client are sent as they are, a
message past its bound or a client's close ends the socket. Through real mitmdump:
tests/addon/e2e/test_websocket.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import wsproto
import wsproto.events
from mitmproxy.proxy import commands, events
from mitmproxy.proxy.context import Context
from mitmproxy.test import taddons, tflow

from addon.patches import websocket_bound, websocket_served
from addon.patches.websocket_served import Outgoing, Served


class Peer:
    def __init__(self) -> None:
        self.messages: list[str | bytes] = []
        self.pongs = 0
        self.left = False

    def message(self, data: str | bytes) -> None:
        self.messages.append(data)

    def pong(self) -> None:
        self.pongs += 1

    def gone(self) -> None:
        self.left = True


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Served, Peer, wsproto.Connection]]:
    peer = Peer()
    monkeypatch.setattr(websocket_served, "opened", lambda _flow, _socket: peer)
    monkeypatch.setattr(websocket_bound, "limits", lambda _flow, from_client: 1000 if from_client else None)
    websocket_bound.install()
    with taddons.context() as tctx:
        flow = tflow.twebsocketflow(messages=False)
        layer = Served(Context(flow.client_conn, tctx.options), flow)
        assert list(layer.handle_event(events.Start())) == []
        yield layer, peer, wsproto.Connection(wsproto.ConnectionType.CLIENT)


def feed(layer: Served, data: bytes) -> list[Any]:
    return list(layer.handle_event(events.DataReceived(layer.context.client, data)))


def sent(cmds: list[Any]) -> bytes:
    return b"".join(c.data for c in cmds if isinstance(c, commands.SendData))


def test_messages_go_to_the_peer_whole_and_pings_are_answered(served: Any) -> None:
    layer, peer, client = served
    data = client.send(wsproto.events.TextMessage("hel", message_finished=False))
    data += client.send(wsproto.events.TextMessage("lo"))
    assert feed(layer, data) == []  # no hook, nothing sent
    assert peer.messages == ["hello"]
    client.receive_data(sent(feed(layer, client.send(wsproto.events.Ping(b"are you there")))))
    assert [type(e) for e in client.events()] == [wsproto.events.Pong]
    feed(layer, client.send(wsproto.events.Pong(b"")))
    assert peer.pongs == 1


def test_frames_injected_for_the_client_are_sent_as_they_are_and_a_close_ends_it(served: Any) -> None:
    layer, peer, _client = served
    cmds = list(layer.handle_event(Outgoing(layer.flow, b"\x81\x02hi")))
    assert sent(cmds) == b"\x81\x02hi"
    cmds = list(layer.handle_event(Outgoing(layer.flow, b"\x88\x02\x03\xe8", close=True)))
    assert sent(cmds) == b"\x88\x02\x03\xe8"
    assert any(isinstance(c, commands.CloseConnection) for c in cmds)
    assert peer.left
    assert list(layer.handle_event(Outgoing(layer.flow, b"late"))) == []


def test_a_message_past_its_bound_closes_the_socket_with_1009(served: Any) -> None:
    layer, peer, client = served
    cmds = feed(layer, client.send(wsproto.events.TextMessage("x" * 2000)))
    client.receive_data(sent(cmds))
    (closed,) = list(client.events())
    assert isinstance(closed, wsproto.events.CloseConnection) and closed.code == 1009
    assert any(isinstance(c, commands.CloseConnection) for c in cmds)
    assert peer.messages == [] and peer.left
    assert layer.flow.metadata[websocket_bound.TOO_LARGE] == {"from": "client", "limit": 1000}


def test_a_clients_close_is_answered_and_its_dropped_connection_is_quiet(served: Any) -> None:
    layer, peer, client = served
    cmds = feed(layer, client.send(wsproto.events.CloseConnection(1000, "bye")))
    client.receive_data(sent(cmds))
    assert [e.code for e in client.events()] == [1000]
    assert peer.left
    assert not [c for c in cmds if isinstance(c, commands.Log)]


def test_a_dropped_connection_ends_the_socket_without_a_line(served: Any) -> None:
    layer, peer, _client = served
    cmds = list(layer.handle_event(events.ConnectionClosed(layer.context.client)))
    assert [type(c) for c in cmds] == [commands.CloseConnection]
    assert peer.left
