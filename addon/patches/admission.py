"""Every client connection asks the gateway's connections addon before mitmproxy serves it.

mitmproxy 12.3 serves every connection its listener accepts (`proxy/server.py`,
`ConnectionHandler.handle_client`): there is no bound on connections, per address or in all, and
its `client_connected` hook runs only after the connection has its layers, its hooks and two log
lines. A stranger holding 19,985 connections that never finished their headers reached the
20,000-descriptor limit; then every accept failed, other clients timed out, and asyncio logged a
traceback per failed accept (125,000 in a minute; docs/mitmproxy.md "Descriptors").

`handle_client` is wrapped: the door (addon/serve/connections.py, set while the proxy runs) admits
the connection, or gives the bytes of a refusal, which are written before the connection is
closed, without a hook, a layer or a log line of its own; an admitted one is let go of by the door
when it ends. Without a door (no gateway loaded, or a test) mitmproxy's own method runs.

mitmproxy is pinned (`pyproject.toml`); `tests/addon/patches/test_patches.py` fails, naming the
attribute, when an internal used here changes.
"""

from __future__ import annotations

from typing import Any, Protocol

from mitmproxy.proxy import server

INTERNALS = (
    "mitmproxy.proxy.server.ConnectionHandler.handle_client",
    "mitmproxy.proxy.server.ConnectionHandler.transports",
    "mitmproxy.proxy.server.ConnectionHandler.client",
    "mitmproxy.proxy.server.ConnectionHandler.timeout_watchdog",
    "mitmproxy.proxy.server.TimeoutWatchdog.last_activity",
    "mitmproxy.proxy.server.ConnectionIO.handler",
    "mitmproxy.proxy.server.ConnectionIO.writer",
)
"""What this module uses of mitmproxy's internals (tests/addon/patches/test_patches.py)."""
_WRAPS = "_gateway_wraps"
_HANDLER = server.ConnectionHandler
_ORIGINAL = getattr(_HANDLER.handle_client, _WRAPS, _HANDLER.handle_client)


class Door(Protocol):
    def admit(self, handler: Any) -> bytes | None:
        """None: serve the connection; else the refusal to write before closing it."""

    def leave(self, handler: Any) -> None:
        """An admitted connection ended."""


door: Door | None = None
"""The connections addon while the proxy runs (addon/serve/connections.py)."""


async def _handle_client(self: Any) -> None:
    current = door
    if current is None or self.client.transport_protocol != "tcp":
        await _ORIGINAL(self)
        return
    refusal = current.admit(self)
    if refusal is not None:
        io = self.transports.pop(self.client, None)
        writer = io.writer if io is not None else None
        if writer is not None:
            try:
                writer.write(refusal)
                writer.close()  # after the refusal is written
            except OSError:
                pass
        return
    try:
        await _ORIGINAL(self)
    finally:
        current.leave(self)


def install() -> None:
    """Idempotent; every copy of this module wraps mitmproxy's own method (`_WRAPS`)."""
    setattr(_handle_client, _WRAPS, _ORIGINAL)
    _HANDLER.handle_client = _handle_client  # type: ignore[method-assign]
