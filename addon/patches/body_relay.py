"""A streamed answer's body handed on by the loopback server itself, past mitmproxy's layers
(docs/pools.md "The leg, for maintainers", docs/benchmarks.md "The body relay").

Each piece of a streamed answer reaches mitmproxy through the pipe (loopback_pipe.py) as an HTTP/1
chunk: mitmproxy's HTTP/1 client parses it, its layers hand it to the flow's stream, and its HTTP/1
server frames it again, as the very same chunk, for the client. On a paced stream that round trip
cost more than the translation. Once mitmproxy has streamed a piece of the answer to the client (so
the head went out, after every `responseheaders` hook) and has passed on everything it was handed,
the loopback server hands the rest of the body on itself. The body's end still goes through
mitmproxy: the `response` hook, the last chunk and the connection's keep-alive are its own.

Where it goes (`_Target`), only where that is exactly what mitmproxy would do with the piece:

- `_Socket`: the client's connection, for an HTTP/1.1 client over cleartext TCP (TLS is one of
  mitmproxy's layers: the socket takes ciphertext), not `HEAD`, the answer chunked for it: the
  piece framed as the chunk mitmproxy's HTTP/1 server writes; the write counts as the connection's
  activity for mitmproxy's idle timeout, as its own writes do;
- `_StandIn`: a socket's turn run as a replay (replay_client.py `Turn`): where its stand-in client
  hands a piece (`Turn.hands_on`, the socket's relay).

Never with `store_streamed_bodies` on (mitmproxy would keep a copy), nor once the flow's stream
is not this relay's own (another addon's stream callable sees every later piece). A piece
mitmproxy still holds (its layers wait on a hook) keeps the next going through mitmproxy until the
stream has seen it: nothing overtakes it.

mitmproxy is pinned (`pyproject.toml`); `tests/addon/patches/test_patches.py` fails, naming the
attribute, when an internal used here changes, and `tests/addon/patches/test_body_relay.py` when
mitmproxy's HTTP/1 server frames a chunk otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Protocol

from mitmproxy import ctx

from addon.upstream.chunked import frame

INTERNALS = (
    "mitmproxy.proxy.server.ConnectionHandler.client",
    "mitmproxy.proxy.server.ConnectionHandler.transports",
    "mitmproxy.proxy.server.ConnectionHandler.timeout_watchdog",
    "mitmproxy.proxy.server.TimeoutWatchdog.register_activity",
    "mitmproxy.proxy.server.ConnectionIO.writer",
    "mitmproxy.proxy.layers.http._http1.Http1Server.send",
    "mitmproxy.proxy.layers.http.HttpStream.state_stream_response_body",
)
"""What this module uses of mitmproxy's internals (tests/addon/patches/test_patches.py)."""

Stream = Callable[[bytes], bytes]


class _Target(Protocol):
    def opens(self, response: Any) -> bool:
        """The answer, as its head went out, may be relayed here."""

    def open(self) -> bool:
        """Still there to take a piece."""

    async def send(self, data: bytes) -> None: ...


class _Socket:
    """The client's connection: a piece goes out framed as mitmproxy's HTTP/1 server frames it,
    waiting while its buffer is full as mitmproxy drains its writers after each read."""

    __slots__ = ("watchdog", "writer")

    def __init__(self, writer: asyncio.StreamWriter, watchdog: Any) -> None:
        self.writer = writer
        self.watchdog = watchdog

    def opens(self, response: Any) -> bool:
        return "chunked" in response.headers.get("transfer-encoding", "").lower()

    def open(self) -> bool:
        return not self.writer.is_closing()

    async def send(self, data: bytes) -> None:
        """A client that left is no error of the answer's: later pieces go to mitmproxy (`open`),
        which ends the flow."""
        self.watchdog.register_activity()
        self.writer.write(frame(data))
        with contextlib.suppress(OSError):  # the client left: mitmproxy reads its end, closes the flow
            await self.writer.drain()


class _StandIn:
    """A replayed turn's stand-in client: a piece goes where it hands one."""

    __slots__ = ("hand_on",)

    def __init__(self, hand_on: Callable[[bytes], None]) -> None:
        self.hand_on = hand_on

    def opens(self, response: Any) -> bool:
        return True

    def open(self) -> bool:
        return True

    async def send(self, data: bytes) -> None:
        self.hand_on(data)


class _Answer:
    """What the flow's stream of one answer holds: its count and, once mitmproxy streams the
    answer, where the relay hands pieces; nothing of the pipe or its connection handler, and
    nothing once the answer ended (`BodyRelay.reset`), since a finished flow may be kept
    (mitmweb's list)."""

    __slots__ = ("open", "response", "seen", "stream", "target")

    def __init__(self, response: Any, target: _Target) -> None:
        self.response = response
        self.target: _Target | None = target
        self.open: _Target | None = None
        """The target, once the relay may hand it the body."""
        self.seen = 0
        """Body bytes mitmproxy passed through the flow's stream (and on)."""
        self.stream: Stream | None = None


class BodyRelay:
    """One pipe's relay: for the answer being sent on it, whether the next piece of its body may
    go past mitmproxy (`ready`), and there (`send`). The loopback server counts what it hands
    mitmproxy (`passed`); the flow's stream counts what mitmproxy passed on (`_Answer.seen`)."""

    __slots__ = ("_answer", "_handler", "passed")

    def __init__(self, handler: Any) -> None:
        self._handler = handler
        self._answer: _Answer | None = None
        self.passed = 0
        """Body bytes of this answer handed to mitmproxy's layers."""

    def reset(self) -> None:
        """No answer relayed: a new answer's body goes through mitmproxy until its stream says
        mitmproxy is streaming it; an answer that ended is let go of."""
        answer, self._answer = self._answer, None
        if answer is not None:
            answer.target = answer.open = answer.response = None
        self.passed = 0

    def stream_for(self, flow: Any) -> Stream | None:
        """The stream callable for `flow`'s body when the relay may carry it (its
        `responseheaders`), else None (mitmproxy relays every piece, as for any flow)."""
        target = None if ctx.options.store_streamed_bodies else self._target(flow)
        if target is None:
            return None
        answer = self._answer = _Answer(flow.response, target)

        def stream(data: bytes) -> bytes:
            """mitmproxy's stream of the flow: every piece passed on as it is, counted; the first
            one shows the head went out, after which the relay may carry the rest."""
            answer.seen += len(data)
            response, target = answer.response, answer.target
            if (data and answer.open is None and target is not None and response.stream is stream
                    and target.opens(response)):
                answer.open = target
            return data

        answer.stream = stream
        return stream

    def _target(self, flow: Any) -> _Target | None:
        handler = self._handler
        hands_on = getattr(handler, "hands_on", None)
        if hands_on is not None:  # a socket's turn (replay_client.py)
            return _StandIn(hands_on) if getattr(handler, "flow", None) is flow else None
        client = flow.client_conn
        if handler.client is not client or client.tls or client.tls_established:
            return None
        if flow.request.http_version != "HTTP/1.1" or flow.request.method == "HEAD":
            return None
        io = handler.transports.get(client)
        writer = io.writer if io is not None else None
        if not isinstance(writer, asyncio.StreamWriter):
            return None
        return _Socket(writer, handler.timeout_watchdog)

    def ready(self) -> bool:
        """The next piece may go past mitmproxy: it streams this answer, has passed on all it was
        handed, the flow's stream is still the relay's, and the client is there."""
        answer = self._answer
        if answer is None or (target := answer.open) is None:
            return False
        return answer.seen == self.passed and target.open() and answer.response.stream is answer.stream

    async def send(self, data: bytes) -> None:
        """One piece of the body, to where the relay hands it (only when `ready`)."""
        assert self._answer is not None and self._answer.open is not None
        await self._answer.open.send(data)
