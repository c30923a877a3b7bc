"""mitmdump script for the reliability suite: no connection may leave the machine.

`server_connect` runs before mitmproxy opens (or resolves) any upstream connection, whatever
the addons did or failed to do before it: a connection to anything but loopback is refused there
and logged. The gateway's own upstream client (addon/upstream/client.py, which sends every
request the gateway sends upstream) gets the same stop: its connections to anything but loopback
fail before they are opened. That is the hard stop; it holds even when the gateway's own `request` hook raised
and the flow went on untranslated. `request` (this script is loaded after `addon/gateway.py`)
also answers such a flow with a 599, so a test can tell "blocked by the guard" from a real reply.
"""

from __future__ import annotations

import logging
from typing import Any

from mitmproxy import http
from mitmproxy.proxy import server_hooks

from addon.upstream import client as leg_client

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
MARK = "offline-guard blocked"


class OfflineGuard:
    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is None and flow.request.host not in LOOPBACK:
            logging.warning(f"{MARK} {flow.request.method} {flow.request.pretty_url}")
            flow.response = http.Response.make(
                599, f"{MARK}: {flow.request.pretty_url}".encode(), {"content-type": "text/plain"}
            )

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        address = data.server.address
        if address is not None and address[0] not in LOOPBACK:
            logging.warning(f"{MARK} a connection to {address[0]}:{address[1]}")
            data.server.error = f"{MARK}: {address[0]} is not loopback"


_OPEN = getattr(leg_client.Client._open, "_guarded", leg_client.Client._open)


async def _open(self: Any, origin: Any, via: Any = None) -> Any:
    for host, port in [(origin.host, origin.port), *([(via.host, via.port)] if via is not None else [])]:
        if host not in LOOPBACK:
            logging.warning(f"{MARK} a connection to {host}:{port}")
            raise leg_client.ConnectFailed(f"{MARK}: {host} is not loopback")
    return await _OPEN(self, origin, via)


_open._guarded = _OPEN  # type: ignore[attr-defined]
leg_client.Client._open = _open  # type: ignore[method-assign]

addons = [OfflineGuard()]
