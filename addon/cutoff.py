"""An upstream that breaks a streamed answer mid-body still ends the client's stream properly.

mitmproxy 12 turns a connection lost in the middle of a chunked (or HTTP/2) response body into
a protocol error: the hooks see `error`, the stream callable is never told, and the client's
connection is simply dropped (`proxy/layers/http/__init__.py`, `handle_protocol_error`). Codex
then retries a turn whose output it may already have acted on. For gateway flows only, this
patch ends the body the way an upstream end would: the stream translator is closed, so the
client receives one `response.failed` and a well-formed end of body. Every other flow keeps
mitmproxy's own behaviour.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers.http._base import HttpEvent
from mitmproxy.proxy.layers.http._events import ResponseData, ResponseProtocolError

from addon.streaming import StreamHook

_ORIGINAL = http_layer.HttpStream.handle_protocol_error


def _handle_protocol_error(self: Any, event: HttpEvent) -> Generator[Any, Any, None]:
    response = self.flow.response if self.flow is not None else None
    hook = response.stream if response is not None else None
    if (isinstance(event, ResponseProtocolError) and isinstance(hook, StreamHook)
            and self.server_state == self.state_stream_response_body):
        tail = hook.cut(f"upstream connection lost mid-stream: {event.message}")
        if tail:
            yield http_layer.SendHttp(ResponseData(self.stream_id, tail), self.context.client)
        yield from self.send_response(already_streamed=True)
        return
    yield from _ORIGINAL(self, event)


def install() -> None:
    """Idempotent: reloading the script must not wrap the wrapper."""
    if http_layer.HttpStream.handle_protocol_error is not _handle_protocol_error:
        http_layer.HttpStream.handle_protocol_error = _handle_protocol_error  # type: ignore[method-assign]
