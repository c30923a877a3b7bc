"""addon/patches/body_relay.py: once mitmproxy streams a gateway answer to its client and has
passed on all it was handed, the rest of the body goes to the client's connection straight, framed
as mitmproxy's HTTP/1 server frames a chunk; where mitmproxy would write other bytes (TLS, HTTP/2,
a kept copy, another addon's stream) or still holds a piece, every piece goes through it. Through a
real mitmdump: tests/addon/e2e/test_body_relay.py."""

from __future__ import annotations

import asyncio
import gc
import socket
import types
import weakref
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.proxy.context import Context
from mitmproxy.proxy.layers.http import ResponseData
from mitmproxy.proxy.layers.http._http1 import Http1Server
from mitmproxy.test import taddons, tflow

from addon.patches.body_relay import BodyRelay
from addon.upstream.chunked import frame


@pytest.fixture(autouse=True)
def options() -> Iterator[Any]:
    with taddons.context() as tctx:
        # declared by mitmproxy's proxy server addon in a real mitmdump (mitmproxy/addons/proxyserver.py)
        tctx.options.add_option("store_streamed_bodies", bool, False, "")
        yield tctx


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), 10))


class Watchdog:
    def __init__(self) -> None:
        self.activity = 0

    def register_activity(self) -> None:
        self.activity += 1


class Handler:
    """The slice of mitmproxy's `ConnectionHandler` the relay reads: its client, its transports
    (the client's writer), its idle watchdog."""

    def __init__(self, client: Any, writer: Any) -> None:
        self.client = client
        self.transports = {client: type("IO", (), {"writer": writer})()}
        self.timeout_watchdog = Watchdog()


async def client_socket() -> tuple[asyncio.StreamWriter, socket.socket]:
    """A real `StreamWriter` on one end of a socket pair (mitmproxy's client connection), and the
    other end (the client)."""
    ours, theirs = socket.socketpair()
    _, writer = await asyncio.open_connection(sock=ours)
    theirs.setblocking(False)
    return writer, theirs


def streamed_flow() -> http.HTTPFlow:
    """A flow from a cleartext HTTP/1.1 client, its answer chunked for it."""
    flow = tflow.tflow(resp=True)
    flow.client_conn.timestamp_tls_setup = None  # tflow's client did a TLS handshake
    assert flow.response is not None
    flow.response.headers["transfer-encoding"] = "chunked"
    return flow


async def relay_for(flow: http.HTTPFlow) -> tuple[BodyRelay, Handler, socket.socket]:
    writer, theirs = await client_socket()
    handler = Handler(flow.client_conn, writer)
    relay = BodyRelay(handler)
    relay.reset()
    return relay, handler, theirs


@dataclass
class Streaming:
    flow: http.HTTPFlow
    relay: BodyRelay
    handler: Handler
    client: socket.socket
    """The client's end of its connection."""
    stream: Callable[[bytes], bytes]
    """The flow's stream, the relay's."""


async def first_piece_streamed(flow: http.HTTPFlow | None = None) -> Streaming:
    """A relay whose flow's stream passed the answer's first piece on (as mitmproxy does once the
    head went out), all it was handed: from here on the relay may carry the rest."""
    flow = flow or streamed_flow()
    relay, handler, theirs = await relay_for(flow)
    stream = relay.stream_for(flow)
    assert stream is not None and flow.response is not None
    flow.response.stream = stream
    relay.passed += len(b"first")
    stream(b"first")
    return Streaming(flow, relay, handler, theirs, stream)


def reachable(*start: object, depth: int) -> list[object]:
    """What `start` refers to, and so on, `depth` references deep (modules and classes not followed)."""
    seen: dict[int, object] = {}
    layer = list(start)
    for _ in range(depth):
        layer = [o for o in gc.get_referents(*layer)
                 if id(o) not in seen and not isinstance(o, (type, types.ModuleType))]
        seen.update((id(o), o) for o in layer)
    return list(seen.values())


async def received(sock: socket.socket, size: int) -> bytes:
    loop = asyncio.get_running_loop()
    got = b""
    while len(got) < size:
        got += await loop.sock_recv(sock, size - len(got))
    return got


@pytest.mark.parametrize("size", [1, 15, 16, 255, 4096, 70_000])
def test_mitmproxys_http1_server_frames_a_piece_as_the_chunk_the_relay_writes(size: int) -> None:
    """The relay writes to the client what mitmproxy would: if mitmproxy frames a streamed piece
    otherwise, this fails (and the relay must change with it)."""
    flow = streamed_flow()
    with taddons.context() as tctx:
        server = Http1Server(Context(flow.client_conn, tctx.options))
        server.request, server.response, server.stream_id = flow.request, flow.response, 1
        data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        (command,) = server.send(ResponseData(1, data))
    assert command.data == frame(data)


def test_nothing_goes_straight_until_the_flows_stream_passed_a_piece_on() -> None:
    async def scenario() -> list[bool]:
        flow = streamed_flow()
        relay, _, _ = await relay_for(flow)
        stream = relay.stream_for(flow)
        assert stream is not None
        assert flow.response is not None
        flow.response.stream = stream
        before = relay.ready()  # the head is not out yet: mitmproxy sends it after the hooks
        relay.passed += 5
        handed = relay.ready()  # handed to mitmproxy, not yet streamed
        assert stream(b"first") == b"first"
        return [before, handed, relay.ready()]

    assert run(scenario) == [False, False, True]


def test_a_piece_mitmproxy_still_holds_keeps_the_next_going_through_it() -> None:
    """Its layers may hold pieces (a hook still running): the next may not overtake them."""
    async def scenario() -> list[bool]:
        flow = streamed_flow()
        relay, _, _ = await relay_for(flow)
        assert flow.response is not None
        flow.response.stream = stream = relay.stream_for(flow)
        assert stream is not None
        relay.passed += len(b"first") + len(b"second")
        stream(b"first")
        held = relay.ready()
        stream(b"second")
        return [held, relay.ready()]

    assert run(scenario) == [False, True]


def test_the_chunk_reaches_the_client_and_counts_as_the_connections_activity() -> None:
    async def scenario() -> tuple[bytes, int]:
        streaming = await first_piece_streamed()
        await streaming.relay.send(b"second")
        return (await received(streaming.client, len(frame(b"second"))),
                streaming.handler.timeout_watchdog.activity)

    assert run(scenario) == (b"6\r\nsecond\r\n", 1)


def test_a_client_gone_mid_stream_is_no_error_and_its_later_pieces_go_through_mitmproxy() -> None:
    """mitmproxy reads the client's end itself and closes the flow; the answer is cancelled then."""
    async def scenario() -> bool:
        streaming = await first_piece_streamed()
        relay = streaming.relay
        streaming.client.close()
        for _ in range(50):  # until the writer's transport has seen the connection fail
            await relay.send(b"x" * 65536)
            if not relay.ready():
                break
            await asyncio.sleep(0.01)
        return relay.ready()

    assert run(scenario) is False


def test_another_addons_stream_gets_every_later_piece_through_mitmproxy() -> None:
    async def scenario() -> list[bool]:
        streaming = await first_piece_streamed()
        armed = streaming.relay.ready()
        assert streaming.flow.response is not None
        streaming.flow.response.stream = lambda data: data.upper()  # a script's, after the first piece
        return [armed, streaming.relay.ready()]

    assert run(scenario) == [True, False]


def test_a_stream_replaced_before_its_first_piece_never_opens_the_relay() -> None:
    async def scenario() -> bool:
        flow = streamed_flow()
        relay, _, _ = await relay_for(flow)
        assert flow.response is not None
        stream = relay.stream_for(flow)
        assert stream is not None
        flow.response.stream = True  # ours was replaced: if mitmproxy still held a reference...
        relay.passed += 5
        stream(b"first")
        return relay.ready()

    assert run(scenario) is False


def test_a_client_that_is_closing_gets_its_pieces_through_mitmproxy() -> None:
    async def scenario() -> bool:
        streaming = await first_piece_streamed()
        streaming.handler.transports[streaming.flow.client_conn].writer.close()
        return streaming.relay.ready()

    assert run(scenario) is False


def test_a_new_answer_on_the_connection_starts_over() -> None:
    async def scenario() -> bool:
        relay = (await first_piece_streamed()).relay
        assert relay.ready()
        relay.reset()  # the answer ended, or the loopback server writes the next one's head
        return relay.ready()

    assert run(scenario) is False


def test_an_answer_that_ended_is_let_go_of() -> None:
    """The pipe outlives the flow (kept for the client's next request): its relay must not keep
    the flow's response, body and all (tests/reliability/test_load.py watches the memory); and
    a finished flow kept elsewhere (mitmweb's list) holds, through its stream, neither the pipe's
    connection handler nor the client's writer."""
    async def scenario() -> list[bool]:
        streaming = await first_piece_streamed()
        handler, stream = streaming.handler, streaming.stream
        assert streaming.flow.response is not None
        response = weakref.ref(streaming.flow.response)
        writer = handler.transports[streaming.flow.client_conn].writer
        streaming.relay.reset()  # the loopback server wrote the answer's end
        reached = reachable(*(cell.cell_contents for cell in stream.__closure__ or ()), depth=3)
        del streaming, stream
        gc.collect()
        return [response() is None, any(o is writer for o in reached), any(o is handler for o in reached)]

    assert run(scenario) == [True, False, False]


class Turn:
    """The slice of a socket's turn (addon/patches/replay_client.py `Turn`) the relay reads: its
    flow, and where its stand-in client hands a piece."""

    def __init__(self, flow: http.HTTPFlow) -> None:
        self.flow = flow
        self.client = flow.client_conn.copy()  # a replay's client is a copy of the flow's
        self.transports: dict[Any, Any] = {}
        self.handed: list[bytes] = []

    def hands_on(self, data: bytes) -> None:
        self.handed.append(data)


def test_a_sockets_turn_gets_its_later_pieces_where_its_stand_in_client_hands_them() -> None:
    async def scenario() -> list[bytes]:
        flow = streamed_flow()
        turn = Turn(flow)
        relay = BodyRelay(turn)
        relay.reset()
        assert flow.response is not None
        flow.response.stream = stream = relay.stream_for(flow)
        assert stream is not None
        relay.passed += 5
        stream(b"first")  # mitmproxy handed it to the stand-in client
        assert relay.ready()
        await relay.send(b"second")
        return turn.handed

    assert run(scenario) == [b"second"]


def test_a_sockets_turn_relays_only_its_own_flow() -> None:
    async def scenario() -> Any:
        turn = Turn(streamed_flow())
        return BodyRelay(turn).stream_for(streamed_flow())

    assert run(scenario) is None


def _tls(flow: http.HTTPFlow) -> None:
    flow.client_conn.tls = True
    flow.client_conn.timestamp_tls_setup = 1.0


def _http2(flow: http.HTTPFlow) -> None:
    flow.request.http_version = "HTTP/2.0"


def _head(flow: http.HTTPFlow) -> None:
    flow.request.method = "HEAD"


def _kept_copy(flow: http.HTTPFlow) -> None:
    from mitmproxy import ctx
    ctx.options.update(store_streamed_bodies=True)


@pytest.mark.parametrize("otherwise", [_tls, _http2, _head, _kept_copy],
                         ids=["tls client", "http2", "HEAD", "store_streamed_bodies"])
def test_no_relay_where_mitmproxy_writes_other_bytes_than_the_chunk(
        otherwise: Callable[[http.HTTPFlow], None]) -> None:
    async def scenario() -> Any:
        flow = streamed_flow()
        relay, _, _ = await relay_for(flow)
        otherwise(flow)
        return relay.stream_for(flow)

    assert run(scenario) is None


def test_no_relay_for_a_client_of_another_connection_or_without_a_socket_writer() -> None:
    async def scenario() -> list[Any]:
        flow = streamed_flow()
        _, handler, _ = await relay_for(flow)
        other = BodyRelay(Handler(tflow.tclient_conn(), handler.transports[flow.client_conn].writer))
        no_socket = BodyRelay(Handler(flow.client_conn, object()))  # e.g. a WireGuard mode's stream
        return [other.stream_for(flow), no_socket.stream_for(flow)]

    assert run(scenario) == [None, None]


def test_an_answer_not_chunked_for_its_client_never_opens_the_relay() -> None:
    """mitmproxy writes such a body as it is, not as chunks (HTTP/1.1 with a length, say)."""
    async def scenario() -> bool:
        flow = streamed_flow()
        assert flow.response is not None
        del flow.response.headers["transfer-encoding"]
        return (await first_piece_streamed(flow)).relay.ready()

    assert run(scenario) is False
