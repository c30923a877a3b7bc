"""Revocation of open WebSockets (docs/team.md "Revoking a key"): a client removed from the clients
file, or given a new key (`python -m addon clients remove | rotate`), loses its open sockets
within seconds, and a `response.create` that still arrives on one is refused.

The WebSocket endpoint (addon/serve/websocket/) registers each open socket here with its client's
name and a way to close it (`SOCKETS.register`, `unregister`). The socket remembers the key hash
its client had when it opened; the `Revocations` addon looks at the clients file once a second
(`Keys.fresh`, which re-reads it when it changed) and closes every socket whose client is gone or
holds another key now: close code 1008 (policy violation, RFC 6455 7.4.1) with a reason that says
so. A request of such a socket is refused 401 by the client keys (`Keys.identify`, `revoked`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)

CLOSE_CODE = 1008
"""Policy violation (RFC 6455 7.4.1): the client may not go on on this socket."""
CLOSE_REASON = "gateway client key revoked"
LOOK_EVERY = 1.0
"""Seconds between two looks at the clients: a revoked key's sockets close within about this."""


@dataclass(slots=True)
class Socket:
    client: str
    key_sha256: str | None
    """The client's key hash when the socket opened; None: unknown (keys off)."""
    close: Callable[[int, str], Any]
    revoked: bool = False
    closed: bool = False


class Sockets:
    """The open sockets, by connection id (`flowinfo.WEBSOCKET` of each of its requests)."""

    def __init__(self) -> None:
        self._open: dict[str, Socket] = {}
        self._closing: set[asyncio.Future[Any]] = set()
        self.key_of: Callable[[str], str | None] = lambda _name: None
        """A client's key hash now, None when it has none (set by `Revocations`)."""

    def register(self, socket_id: str, client: str | None, close: Callable[[int, str], Any]) -> None:
        """An open socket of `client` (None: client keys off, never revoked); `close(code, reason)`
        closes it (a coroutine function is run on the loop)."""
        if client:
            self._open[socket_id] = Socket(client, self.key_of(client), close)

    def unregister(self, socket_id: str) -> None:
        self._open.pop(socket_id, None)

    def revoked(self, socket_id: object) -> bool:
        """The socket's client was removed or given another key since it opened."""
        socket = self._open.get(socket_id) if isinstance(socket_id, str) else None
        if socket is None:
            return False
        if not socket.revoked and self.key_of(socket.client) != socket.key_sha256:
            socket.revoked = True
        return socket.revoked

    def sweep(self) -> list[str]:
        """Close every socket whose client's key was revoked; their ids."""
        closed = []
        for socket_id, socket in list(self._open.items()):
            if socket.closed or not self.revoked(socket_id):
                continue
            socket.closed = True  # registered until the endpoint lets go of it: its requests are refused
            closed.append(socket_id)
            log.info("gateway_clients: the key of %r was revoked: its WebSocket %s is closed", socket.client,
                     socket_id)
            result = socket.close(CLOSE_CODE, CLOSE_REASON)
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
        return closed

    def __len__(self) -> int:
        return len(self._open)


SOCKETS = Sockets()
"""The one registry: the WebSocket endpoint is one per process (addon/serve/websocket/ENDPOINT)."""


class Keys(Protocol):
    """What `Revocations` needs of the client keys (addon/team/keys.py `Keys`)."""

    sockets: Sockets

    @property
    def on(self) -> bool: ...

    def key_of(self, name: str) -> str | None: ...


class Revocations:
    """The addon that closes revoked clients' sockets (after the client keys in the chain)."""

    name = "gateway-revocations"

    def __init__(self, keys: Keys, sockets: Sockets = SOCKETS, every: float = LOOK_EVERY) -> None:
        self.keys = keys
        self.sockets = sockets
        self.every = every
        self._task: asyncio.Task[None] | None = None
        sockets.key_of = keys.key_of
        keys.sockets = sockets

    def running(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # hooks called by hand, without the proxy's loop (tests)
        if self._task is None:
            self._task = loop.create_task(self._look())

    async def _look(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            if self.keys.on and len(self.sockets):
                try:
                    self.sockets.sweep()
                except Exception:  # the next look tries again; the loop never ends on a bug
                    log.exception("gateway_clients: revoking sockets failed")

    def done(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
