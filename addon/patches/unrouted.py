"""A model no route takes, passed on untranslated, whose destination cannot be reached: a 502 in
the client's shape naming the route to add (docs/console.md "When a setup is wrong").

Gateway flows never meet this: they reach only the gateway's loopback server, and the upstream
leg answers their failures (docs/pools.md). A flow the gateway passes on untranslated
(addon/serve/client_side.py `pass_on`) is sent by mitmproxy itself, and when its connection fails
(`CONNECT_FAILED` from `HttpStream.make_server_connection`: refused, DNS, TLS) mitmproxy 12 writes
its HTML 502 page from `HttpStream.handle_protocol_error`, which neither Codex nor Claude Code can
read. mitmproxy 12.3 offers no public way to answer instead: the `error` hook runs once
`flow.error` is set and cannot supply a response, `server_connect_error` carries no flow, and the
page is written by the HTTP/1 server connection itself (docs/mitmproxy.md "Error hooks"). So this
module wraps that method for such flows only (every other flow keeps mitmproxy's behaviour),
mitmproxy is pinned (`pyproject.toml`) and `tests/addon/patches/test_unrouted.py` fails, naming
the attribute, if the internals used here change.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

from mitmproxy import http
from mitmproxy.connection import Server
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers.http._base import HttpEvent
from mitmproxy.proxy.layers.http._events import ErrorCode, ResponseProtocolError

from addon.serve import misconfigured
from addon.serve.flow import context_of

_WRAPS = "_gateway_wraps"
"""The attribute that marks a wrapper of ours and holds what it wraps."""
_ORIGINAL = getattr(http_layer.HttpStream.handle_protocol_error, _WRAPS,
                    http_layer.HttpStream.handle_protocol_error)
"""mitmproxy's own method, never a wrapper of ours left by another copy of this module (loaded by
path, or under another name: its `install` must replace that wrapper, not wrap it)."""

INTERNALS = (
    "mitmproxy.proxy.layers.http.HttpStream.handle_protocol_error",
    "mitmproxy.proxy.layers.http.HttpStream.make_server_connection",
    "mitmproxy.proxy.layers.http.HttpStream.state_done",
    "mitmproxy.proxy.layers.http.HttpStream.state_wait_for_response_headers",
    "mitmproxy.proxy.layers.http.HttpStream.send_response",
    "mitmproxy.proxy.layers.http.HttpStream.check_killed",
    "mitmproxy.proxy.layers.http.HttpResponseHeadersHook",
    "mitmproxy.proxy.layers.http.HttpLayer.get_connection",
    "mitmproxy.proxy.layers.http._events.ErrorCode.CONNECT_FAILED",
    "mitmproxy.connection.Server.error",
)
"""What the wrapper uses inside mitmproxy (checked by name in tests/addon/patches/test_patches.py)."""


def _handle_protocol_error(self: Any, event: HttpEvent) -> Generator[Any, Any, None]:
    flow: http.HTTPFlow | None = getattr(self, "flow", None)
    fc = context_of(flow) if flow is not None else None
    if (isinstance(event, ResponseProtocolError) and event.code == ErrorCode.CONNECT_FAILED and fc is not None
            and misconfigured.passed_unrouted(fc) and self.client_state == self.state_done
            and self.server_state == self.state_wait_for_response_headers):
        misconfigured.unrouted_unreachable(fc, event.message)
        _forget_failed_connection(self, fc.flow)
        assert fc.flow.response is not None
        fc.flow.response.timestamp_start = time.time()
        # sent the way mitmproxy sends a response an addon set in `request`: the `responseheaders`
        # and `response` hooks, then `send_response()`; no `error` hook
        yield http_layer.HttpResponseHeadersHook(fc.flow)
        if (yield from self.check_killed(True)):
            return
        yield from self.send_response()
        return
    yield from _ORIGINAL(self, event)


def _forget_failed_connection(stream: Any, flow: http.HTTPFlow) -> None:
    """The HTTP layer keeps a failed server connection and fails every later request to that
    address on the same client connection at once, without trying again
    (`HttpLayer.get_connection`, "elif connection.error"). After its HTML 502 mitmproxy closes
    an HTTP/1 client connection, so that rarely shows; the JSON answer keeps the client
    connection (and an HTTP/2 one always stays), so the failure is forgotten here and the next
    request connects afresh once the destination is back."""
    address = (flow.request.host, flow.request.port)
    layers = stream.context.layers
    parent = layers[layers.index(stream) - 1] if stream in layers else None
    if not isinstance(parent, http_layer.HttpLayer):
        return
    for connection in parent.connections:
        if isinstance(connection, Server) and connection.address == address and connection.error \
                and not connection.connected and connection not in parent.waiting_for_establishment:
            connection.error = None


def install() -> None:
    """Idempotent, and safe from the addon's `load` at every (re)load of the script: the method
    is set to this wrapper, which always wraps mitmproxy's own (`_ORIGINAL`), never a wrapper."""
    setattr(_handle_protocol_error, _WRAPS, _ORIGINAL)
    if http_layer.HttpStream.handle_protocol_error is not _handle_protocol_error:
        http_layer.HttpStream.handle_protocol_error = _handle_protocol_error  # type: ignore[method-assign]
