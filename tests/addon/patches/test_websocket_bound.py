"""addon/patches/websocket_bound.py: the wsproto events mitmproxy's WebSocket relay reads, driven by
hand with real frames (issue 35, case 1)."""

from __future__ import annotations

import pytest
import wsproto
import wsproto.events
from mitmproxy import connection
from mitmproxy.proxy.layers.websocket import WebsocketConnection

from addon.patches import websocket_bound

LIMIT = "_gateway_limit"


@pytest.fixture(autouse=True)
def installed() -> None:
    websocket_bound.install()


def _frames(*parts: tuple[str, bool]) -> bytes:
    """Masked client frames: one per (text, last of its message)."""
    client = wsproto.Connection(wsproto.ConnectionType.CLIENT)
    return b"".join(client.send(wsproto.events.TextMessage(text, message_finished=last))
                    for text, last in parts)


def _server(limit: int | None) -> WebsocketConnection:
    conn = connection.Client(peername=("127.0.0.1", 50000), sockname=("127.0.0.1", 8080), timestamp_start=0)
    ws = WebsocketConnection(wsproto.ConnectionType.SERVER, [], conn=conn)
    setattr(ws, LIMIT, limit)
    return ws


def _feed(ws: WebsocketConnection, data: bytes, step: int) -> list[wsproto.events.Event]:
    """What the relay reads, `step` bytes at a time (one `events()` per read, as mitmproxy does)."""
    out: list[wsproto.events.Event] = []
    for at in range(0, len(data), step):
        ws.receive_data(data[at:at + step])
        out += list(ws.events())
        if out and isinstance(out[-1], wsproto.events.CloseConnection):
            break
    return out


def test_the_pieces_of_a_frame_are_handed_on_once_joined() -> None:
    """One event per frame whatever the reads: mitmproxy appends each into its buffer, which
    copied the whole frame so far for every read (quadratic in the frame's size)."""
    parts = [("a" * 10_000, False), ("b" * 10_000, False), ("c" * 10_000, True)]
    events = _feed(_server(None), _frames(*parts), 997)
    assert [type(e).__name__ for e in events] == ["TextMessage"] * 3
    assert [e.data for e in events] == [text for text, _ in parts]
    assert [e.frame_finished for e in events] == [True] * 3
    assert [e.message_finished for e in events] == [False, False, True]


def test_a_fragmented_message_past_the_bound_ends_in_a_1009_close_as_it_arrives() -> None:
    data = _frames(*[("x" * 10_000, i == 9) for i in range(10)])
    events = _feed(ws := _server(25_000), data, 1000)
    close = events[-1]
    assert isinstance(close, wsproto.events.CloseConnection) and close.code == 1009
    assert sum(len(e.data) for e in events if isinstance(e, wsproto.events.Message)) <= 25_000
    assert ws._gateway_closed == 25_000  # type: ignore[attr-defined]


def test_a_frame_whose_header_says_it_passes_the_bound_is_closed_before_its_payload() -> None:
    data = _frames(("y" * 100_000, True))
    fed = 0
    ws = _server(50_000)
    events: list[wsproto.events.Event] = []
    while not events:
        ws.receive_data(data[fed:fed + 1000])
        fed += 1000
        events = list(ws.events())
    assert isinstance(events[-1], wsproto.events.CloseConnection) and events[-1].code == 1009
    assert fed <= 2000, "the frame's length was known from its header"


def test_messages_within_the_bound_pass_and_the_count_starts_again_for_each() -> None:
    data = _frames(("z" * 20_000, True), ("z" * 20_000, True), ("z" * 20_000, True))
    events = _feed(_server(25_000), data, 4096)
    assert [len(e.data) for e in events] == [20_000] * 3
