"""The request head mitmproxy sends upstream carries the credentials kept beside the flow
(addon/upstream/credentials.py), while the flow itself shows `<redacted>`.

mitmproxy 12 has no hook between the `request` hook and the moment the request head is
serialised (docs/mitmproxy.md): `HttpStream` sends `RequestHeaders(stream_id, flow.request, ...)`
to the server connection, which turns that request object into bytes at once
(`proxy/layers/http/_http1.py` `Http1Client.send`, `_http2.py` `Http2Client`). `install()` wraps
`HttpStream._handle_event` so that, for a flow with credentials, that one command carries a
copy of the request with the real values instead; the flow's own request is never touched.
`tests/addon/patches/test_wire_credentials.py` fails, naming the attribute, if those internals change.
"""

from __future__ import annotations

import functools
from collections.abc import Generator
from typing import Any

from mitmproxy.proxy.layers import http as http_layer

from addon.upstream import credentials

_WRAPS = "_gateway_wraps"
"""The attribute that marks a wrapper of ours and holds what it wraps (cutoff.py too)."""
_ORIGINAL = getattr(http_layer.HttpStream._handle_event, _WRAPS, http_layer.HttpStream._handle_event)
"""mitmproxy's own method, never a wrapper of ours left by another copy of this module (loaded by
path, or under another name: its `install` must replace that wrapper, not wrap it)."""


@functools.wraps(_ORIGINAL)
def _handle_event(self: Any, event: Any) -> Generator[Any, Any, None]:
    commands = _ORIGINAL(self, event)
    try:
        command = next(commands)
        while True:
            result = yield _with_credentials(self, command)
            command = commands.send(result)
    except StopIteration:
        return


def _with_credentials(stream: Any, command: Any) -> Any:
    event = getattr(command, "event", None)
    if not isinstance(command, http_layer.SendHttp) or not isinstance(event, http_layer.RequestHeaders):
        return command
    flow = getattr(stream, "flow", None)
    if flow is None or not credentials.carries(flow) or command.event.request is not flow.request:
        return command
    return http_layer.SendHttp(
        http_layer.RequestHeaders(event.stream_id, credentials.wire_request(flow), event.end_stream,
                                  event.replay_flow),
        command.connection,
    )


def install() -> None:
    """Idempotent, and safe from the addon's `load` at every (re)load of the script: the method
    is set to this wrapper, which always wraps mitmproxy's own (`_ORIGINAL`), never a wrapper."""
    setattr(_handle_event, _WRAPS, _ORIGINAL)
    if http_layer.HttpStream._handle_event is not _handle_event:
        http_layer.HttpStream._handle_event = _handle_event  # type: ignore[method-assign]
