"""Upstream failures the HTTP layer sees, answered in the client's dialect for gateway flows.

mitmproxy 12 handles them in `HttpStream.handle_protocol_error`
(`proxy/layers/http/__init__.py`); this module wraps that method, for gateway flows only
(every other flow keeps mitmproxy's own behaviour):

- **No answer yet** (the connection to the upstream failed: refused, DNS, TLS handshake, which
  all arrive as `CONNECT_FAILED` from `make_server_connection`; or the upstream broke off before
  its answer was complete: `GENERIC_SERVER_ERROR`, or an HTTP/2 stream reset). mitmproxy would
  send its HTML 502 page (or, to an HTTP/2 client, an HTML body on the stream), or for some
  resets nothing but a closed connection, none of which Codex or Claude Code can read. The flow
  gets a 502 in its client's error shape instead (addon/serve/upstream_answer.py `unreachable`:
  Responses' for Codex, Anthropic's `api_error` for a Messages client, docs/claude-code.md
  "Errors"), a turn and a token count alike, sent the way mitmproxy sends a response an addon set:
  `responseheaders` and `response` hooks, then `send_response()`; no `error` hook.
- **A model no route takes** (passed on untranslated, addon/serve/client_side.py `pass_on`) whose
  destination cannot be reached (`CONNECT_FAILED`): a 502 in the client's shape naming the route
  to add (addon/serve/misconfigured.py `unrouted_unreachable`), sent the same way.
- **Mid-stream** (the upstream connection is lost inside a streamed body): the hooks would see
  `error`, the stream callable would never be told, and the client's connection would simply
  be dropped, so Codex would retry a turn whose output it may already have acted on. The body
  is ended the way an upstream end would end it: the stream translator is closed, so the client
  receives one `response.failed` and a well-formed end of body.

mitmproxy 12.3 offers no public way to do this: the `error` hook runs once `flow.error` is set and
cannot supply a response, `server_connect_error` carries no flow, and the HTML page is written by
the HTTP/1 server connection itself (docs/mitmproxy.md "Error hooks"). So mitmproxy is pinned
(`pyproject.toml`) and `tests/addon/patches/test_cutoff.py` fails, naming the attribute, if the internals
used here change.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

from mitmproxy import http
from mitmproxy.connection import Server
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers.http._base import HttpEvent
from mitmproxy.proxy.layers.http._events import ErrorCode, ResponseData, ResponseProtocolError

from addon.serve import misconfigured, upstream_answer
from addon.serve.flow import FlowCtx, Stage, context_of
from addon.serve.streaming import StreamHook

_WRAPS = "_gateway_wraps"
"""The attribute that marks a wrapper of ours and holds what it wraps (credentials.py too)."""
_ORIGINAL = getattr(http_layer.HttpStream.handle_protocol_error, _WRAPS,
                    http_layer.HttpStream.handle_protocol_error)
"""mitmproxy's own method, never a wrapper of ours left by another copy of this module (loaded by
path, or under another name: its `install` must replace that wrapper, not wrap it)."""
_BEFORE_ANSWER = (ErrorCode.CONNECT_FAILED, ErrorCode.GENERIC_SERVER_ERROR, ErrorCode.CANCEL,
                  ErrorCode.HTTP_1_1_REQUIRED)
"""The upstream failures that reach a flow before its answer. An HTTP/2 upstream that resets the
stream arrives as CANCEL or HTTP_1_1_REQUIRED for those two reset codes and as GENERIC_SERVER_ERROR
for any other (`layers/http/_http2.py`, StreamReset); mitmproxy would send its HTML 502 page for
the last, and for the first two no answer at all, only a closed connection."""


def _handle_protocol_error(self: Any, event: HttpEvent) -> Generator[Any, Any, None]:
    flow: http.HTTPFlow | None = getattr(self, "flow", None)
    fc = context_of(flow) if flow is not None else None
    if isinstance(event, ResponseProtocolError) and fc is not None and _sent(fc):
        assert flow is not None
        hook = flow.response.stream if flow.response is not None else None
        if isinstance(hook, StreamHook) and self.server_state == self.state_stream_response_body:
            tail = hook.cut(f"upstream connection lost mid-stream: {event.message}")
            if tail:
                yield http_layer.SendHttp(ResponseData(self.stream_id, tail), self.context.client)
            yield from self.send_response(already_streamed=True)
            return
        if (event.code in _BEFORE_ANSWER and self.client_state == self.state_done
                and self.server_state in (self.state_wait_for_response_headers,
                                          self.state_consume_response_body)):
            yield from _answer_failure(self, fc, event)
            return
    if (isinstance(event, ResponseProtocolError) and event.code == ErrorCode.CONNECT_FAILED and fc is not None
            and misconfigured.passed_unrouted(fc) and self.client_state == self.state_done
            and self.server_state == self.state_wait_for_response_headers):
        yield from _answer_unrouted(self, fc, event)
        return
    yield from _ORIGINAL(self, event)


def _sent(fc: FlowCtx) -> bool:
    """Sent upstream by the gateway (a turn, or a token count sent to the upstream's counter), and
    not answered yet (addon/serve/flow.py `Stage`)."""
    return fc.stage in (Stage.SENT, Stage.STREAMING)


def _answer_failure(stream: Any, fc: FlowCtx, event: ResponseProtocolError) -> Generator[Any, Any, None]:
    flow = fc.flow
    where = f"the {fc.info.get('upstream')} upstream at {flow.request.url}"
    had_headers = flow.response is not None
    if event.code == ErrorCode.CONNECT_FAILED:
        code, message = "upstream_unreachable", f"cannot reach {where}: {event.message}"
        _forget_failed_connection(stream, flow)
    else:
        code, message = "upstream_error", f"{where} broke off before its answer was complete: {event.message}"
        if had_headers:  # the headers came, the body did not: keep what did for the saved flow
            fc.keep_upstream_response(bytes(stream.response_body_buf))
            stream.response_body_buf.clear()
    upstream_answer.unreachable(fc, code, message)
    assert flow.response is not None
    flow.response.timestamp_start = time.time()
    if not had_headers:  # as for a response an addon set in `request` (state_consume_request_body)
        yield http_layer.HttpResponseHeadersHook(flow)
        if (yield from stream.check_killed(True)):
            return
    yield from stream.send_response()


def _answer_unrouted(stream: Any, fc: FlowCtx, event: ResponseProtocolError) -> Generator[Any, Any, None]:
    """A model no route takes went on untranslated and its destination cannot be reached: a 502
    in the client's shape naming the route to add (addon/serve/misconfigured.py), sent as
    `_answer_failure` sends one."""
    misconfigured.unrouted_unreachable(fc, event.message)
    _forget_failed_connection(stream, fc.flow)
    assert fc.flow.response is not None
    fc.flow.response.timestamp_start = time.time()
    yield http_layer.HttpResponseHeadersHook(fc.flow)
    if (yield from stream.check_killed(True)):
        return
    yield from stream.send_response()


def _forget_failed_connection(stream: Any, flow: http.HTTPFlow) -> None:
    """The HTTP layer keeps a failed server connection and fails every later request to that
    address on the same client connection at once, without trying again
    (`HttpLayer.get_connection`, "elif connection.error"). After its HTML 502 mitmproxy closes
    an HTTP/1 client connection, so that rarely shows; the JSON answer keeps the client
    connection (and an HTTP/2 one always stays), so the failure is forgotten here and the next
    request connects afresh once the upstream is back."""
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
