"""addon/patches/cutoff.py: mitmproxy's `HttpStream.handle_protocol_error`, driven by hand; and the
mitmproxy internals the wrapper rests on (a changed one fails here, by name).

A real HttpStream under a real HttpLayer (mitmproxy 12.3.1), in the state the proxy core leaves
it in when the upstream fails; the commands it yields are what the proxy core would execute.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from anthropic.types.shared import ErrorResponse
from mitmproxy import connection, http, options
from mitmproxy.proxy.context import Context
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers.http import HTTPMode, _http2
from mitmproxy.proxy.layers.http._events import ErrorCode, ResponseHeaders, ResponseProtocolError
from mitmproxy.test import tflow

from addon.observe import flowinfo
from addon.patches import cutoff
from addon.serve.flow import Flows, Kind, Stage, context_of, speaks_of

Layer = http_layer.HttpLayer
CONNECT_FAILED = ResponseProtocolError(1, "[Errno 111] Connect call failed", ErrorCode.CONNECT_FAILED)
SERVER_CLOSED = ResponseProtocolError(1, "server closed connection", ErrorCode.GENERIC_SERVER_ERROR)


@pytest.fixture(autouse=True)
def installed() -> None:
    cutoff.install()


@pytest.fixture
def layer() -> http_layer.HttpLayer:
    client = connection.Client(peername=("127.0.0.1", 50000), sockname=("127.0.0.1", 8080), timestamp_start=0)
    return http_layer.HttpLayer(Context(client, options.Options()), HTTPMode.regular)


def _stream(layer: http_layer.HttpLayer, flow: http.HTTPFlow) -> http_layer.HttpStream:
    """The stream after the `request` hook: the request is done, no answer yet."""
    stream = http_layer.HttpStream(layer.context.fork(), 1)
    stream.flow = flow
    stream.client_state = stream.state_done
    stream.server_state = stream.state_wait_for_response_headers
    return stream


_FLOWS = Flows()


def _gateway_flow(stage: Stage = Stage.SENT, kind: Kind = "turn", **metadata: Any) -> http.HTTPFlow:
    """A flow the gateway sent upstream (its context at `stage`, addon/serve/flow.py)."""
    flow = tflow.tflow()
    flow.request.url = "http://127.0.0.1:9/v1/messages"
    flow.request.headers["x-api-key"] = "sk-ant-secret-0123456789"
    flow.metadata.update({"gateway": {"upstream": "anthropic", "model": "claude-haiku-4-5", "dropped": [],
                                      "notes": []}, "gateway.translation": {}, **metadata})
    _FLOWS.open(flow, speaks_of(flow.metadata), kind=kind).stage = stage
    return flow


def _sealed(flow: http.HTTPFlow) -> bool:
    """Answered and sealed: the addon's `response` hook leaves it alone."""
    fc = context_of(flow)
    return fc is not None and fc.stage is Stage.SEALED and flow.metadata[flowinfo.SEALED] is True


def _run(stream: http_layer.HttpStream, event: ResponseProtocolError) -> list[Any]:
    return list(stream.handle_protocol_error(event))


def _names(commands: list[Any]) -> list[str]:
    return [type(c).__name__ + (f":{type(c.event).__name__}" if hasattr(c, "event") else "")
            for c in commands]


def test_failed_connect_of_a_gateway_flow_is_answered_like_an_addon_response(layer: Layer) -> None:
    commands = _run(_stream(layer, flow := _gateway_flow()), CONNECT_FAILED)
    assert _names(commands) == ["HttpResponseHeadersHook", "HttpResponseHook", "SendHttp:ResponseHeaders",
                                "SendHttp:ResponseData", "DropStream", "SendHttp:ResponseEndOfMessage"]
    assert flow.error is None  # a response, not an error: the `error` hook never runs
    sent = next(c.event.response for c in commands if isinstance(getattr(c, "event", None), ResponseHeaders))
    assert sent is flow.response and sent.status_code == 502
    assert sent.headers["content-type"] == "application/json"
    error = sent.json()["error"]
    assert (error["type"], error["code"]) == ("server_error", "upstream_unreachable")
    assert error["message"] == ("cannot reach the anthropic upstream at http://127.0.0.1:9/v1/messages: "
                                "[Errno 111] Connect call failed")


def _messages_flow(kind: str) -> http.HTTPFlow:
    """A Claude Code flow sent upstream: a turn (translated) or a token count (sent to the
    upstream's own counter, addon/serve/pipeline.py: no translation in its metadata, its kind recorded)."""
    flow = _gateway_flow(kind="count" if kind == "count_tokens" else "turn",
                         **{flowinfo.CLIENT_DIALECT: "messages"})
    if kind == "count_tokens":
        del flow.metadata[flowinfo.TRANSLATION]
        flow.metadata[flowinfo.KEY]["kind"] = "count_tokens"
    return flow


@pytest.mark.parametrize("kind", ["turn", "count_tokens"])
def test_a_messages_client_that_cannot_reach_its_upstream_gets_anthropics_api_error(
        layer: Layer, kind: str) -> None:
    commands = _run(_stream(layer, flow := _messages_flow(kind)), CONNECT_FAILED)
    assert _names(commands)[:3] == ["HttpResponseHeadersHook", "HttpResponseHook", "SendHttp:ResponseHeaders"]
    assert flow.error is None and flow.response is not None
    assert flow.response.status_code == 502  # the SDK's InternalServerError, retried (docs/claude-code.md)
    error = ErrorResponse.model_validate(flow.response.json())
    assert error.type == "error" and error.error.type == "api_error"
    assert error.error.message == ("cannot reach the anthropic upstream at http://127.0.0.1:9/v1/messages: "
                                   "[Errno 111] Connect call failed")
    assert _sealed(flow)  # Restyle and the count reader leave it as it is


def test_a_messages_turn_the_upstream_broke_off_is_anthropics_api_error(layer: Layer) -> None:
    _run(_stream(layer, flow := _messages_flow("turn")), SERVER_CLOSED)
    assert flow.response is not None and flow.response.status_code == 502
    error = ErrorResponse.model_validate(flow.response.json()).error
    assert error.type == "api_error" and error.message.endswith("server closed connection")


def test_failed_connect_is_recorded_commented_and_the_key_redacted(layer: Layer) -> None:
    _run(_stream(layer, flow := _gateway_flow()), CONNECT_FAILED)
    assert flow.metadata["gateway"]["error"].startswith("cannot reach the anthropic upstream")
    assert _sealed(flow)
    assert flow.comment.startswith("-> anthropic claude-haiku-4-5 | error: cannot reach")
    assert flow.marked == ":warning:"
    assert flow.request.headers["x-api-key"] == "<redacted>"


def test_failed_connection_is_forgotten_so_the_next_request_connects_again(layer: Layer) -> None:
    dead = connection.Server(address=("127.0.0.1", 9))
    dead.error = "[Errno 111] Connect call failed"
    other = connection.Server(address=("127.0.0.1", 10))
    other.error = "refused"
    layer.connections.update({dead: layer, other: layer})
    _run(_stream(layer, _gateway_flow()), CONNECT_FAILED)
    assert dead.error is None
    assert other.error == "refused"  # another address: not this flow's business


def test_upstream_closing_before_its_answer_is_an_upstream_error(layer: Layer) -> None:
    _run(_stream(layer, flow := _gateway_flow()), SERVER_CLOSED)
    assert flow.response.status_code == 502
    error = flow.response.json()["error"]
    assert error["code"] == "upstream_error"
    assert error["message"].endswith("broke off before its answer was complete: server closed connection")


@pytest.mark.parametrize("code", [ErrorCode.CANCEL, ErrorCode.HTTP_1_1_REQUIRED])
def test_an_http2_upstream_resetting_the_stream_before_its_answer_is_an_upstream_error(
        layer: Layer, code: ErrorCode) -> None:
    reset = ResponseProtocolError(1, f"stream reset by client ({code.name})", code)
    commands = _run(_stream(layer, flow := _gateway_flow()), reset)
    assert "SendHttp:ResponseProtocolError" not in _names(commands)  # mitmproxy would just close
    assert flow.response.status_code == 502
    error = flow.response.json()["error"]
    assert error["code"] == "upstream_error"
    assert error["message"].endswith(f"broke off before its answer was complete: stream reset by client "
                                     f"({code.name})")


def test_body_cut_while_buffered_keeps_the_part_that_came(layer: Layer) -> None:
    stream = _stream(layer, flow := _gateway_flow())
    flow.response = http.Response.make(200, b"", {"content-type": "application/json"})
    stream.server_state = stream.state_consume_response_body
    stream.response_body_buf += b'{"type": "message", "con'
    commands = _run(stream, SERVER_CLOSED)
    assert "HttpResponseHeadersHook" not in _names(commands)  # it ran for the upstream's headers
    assert flow.response.status_code == 502
    assert flow.metadata["gateway.upstream_response"] == b'{"type": "message", "con'


def test_other_flows_keep_mitmproxys_own_error(layer: Layer) -> None:
    flow = tflow.tflow()
    commands = _run(_stream(layer, flow), CONNECT_FAILED)
    assert _names(commands) == ["HttpErrorHook", "SendHttp:ResponseProtocolError", "DropStream"]
    assert flow.response is None and flow.error is not None


def test_a_flow_the_proxy_answered_itself_keeps_mitmproxys_own_error(layer: Layer) -> None:
    commands = _run(_stream(layer, _gateway_flow(Stage.SEALED)), CONNECT_FAILED)
    assert "SendHttp:ResponseProtocolError" in _names(commands)


def test_a_client_that_is_gone_gets_nothing(layer: Layer) -> None:
    stream = _stream(layer, flow := _gateway_flow())
    stream.client_state = stream.state_errored
    commands = _run(stream, CONNECT_FAILED)
    assert not [c for c in commands if isinstance(c, http_layer.SendHttp)]
    assert flow.response is None


def test_install_does_not_wrap_twice() -> None:
    cutoff.install()
    patched = http_layer.HttpStream.handle_protocol_error
    cutoff.install()
    assert http_layer.HttpStream.handle_protocol_error is patched


# -- the mitmproxy internals this module relies on (mitmproxy is pinned in pyproject.toml) --------
# mitmproxy 12.3 has no public way to answer a failed upstream: the `error` hook runs after
# `flow.error` is set and cannot supply a response, `server_connect_error` has no flow, and the
# HTML page comes from `_http1.make_error_response` (docs/mitmproxy.md "Error hooks").


def test_mitmproxy_httpstream_handle_protocol_error_is_wrapped() -> None:
    cutoff.install()  # as the gateway does when loaded (tests/addon/patches/test_patches.py)

    assert http_layer.HttpStream.handle_protocol_error is cutoff._handle_protocol_error, (
        "mitmproxy.proxy.layers.http.HttpStream.handle_protocol_error is not the wrapper: "
        "an unreachable upstream would get mitmproxy's HTML page")
    assert cutoff._ORIGINAL.__qualname__ == "HttpStream.handle_protocol_error", (
        "cutoff._ORIGINAL is not mitmproxy's HttpStream.handle_protocol_error")


def test_mitmproxy_reports_upstream_failures_through_handle_protocol_error() -> None:
    """A connect failure is reported by `make_server_connection`; a failure of the upstream
    connection arrives as a `ResponseProtocolError` event, which `_handle_event` dispatches."""
    connect = inspect.getsource(http_layer.HttpStream.make_server_connection)
    assert "self.handle_protocol_error(" in connect and "ErrorCode.CONNECT_FAILED" in connect, (
        "mitmproxy.proxy.layers.http.HttpStream.make_server_connection no longer reports "
        "ErrorCode.CONNECT_FAILED through handle_protocol_error")
    dispatch = re.search(r"isinstance\(event, \(RequestProtocolError, ResponseProtocolError\)\):\s+"
                         r"yield from self\.handle_protocol_error\(event\)",
                         inspect.getsource(http_layer.HttpStream))
    assert dispatch, ("mitmproxy.proxy.layers.http.HttpStream._handle_event no longer hands a "
                      "ResponseProtocolError to handle_protocol_error")


def test_mitmproxy_error_codes_the_wrapper_tells_apart_exist() -> None:
    names = {"CONNECT_FAILED", "GENERIC_SERVER_ERROR", "CANCEL", "HTTP_1_1_REQUIRED"}
    missing = names - set(ErrorCode.__members__)
    assert not missing, f"mitmproxy.proxy.layers.http._events.ErrorCode lost {sorted(missing)}"
    source = inspect.getsource(_http2)
    assert "ErrorCode.CANCEL" in source and "ErrorCode.HTTP_1_1_REQUIRED" in source, (
        "mitmproxy.proxy.layers.http._http2 no longer maps an HTTP/2 reset to CANCEL/HTTP_1_1_REQUIRED")


@pytest.mark.parametrize("name", ["state_done", "state_errored", "state_wait_for_response_headers",
                                  "state_consume_response_body", "state_stream_response_body",
                                  "send_response", "check_killed"])
def test_mitmproxy_httpstream_has_the_states_and_steps_the_wrapper_uses(name: str) -> None:
    assert callable(getattr(http_layer.HttpStream, name, None)), (
        f"mitmproxy.proxy.layers.http.HttpStream.{name} is gone")


def test_mitmproxy_httpstream_sends_a_response_already_streamed_and_buffers_the_body(layer: Layer) -> None:
    assert "already_streamed" in inspect.signature(http_layer.HttpStream.send_response).parameters, (
        "mitmproxy.proxy.layers.http.HttpStream.send_response(already_streamed=) changed")
    stream = http_layer.HttpStream(layer.context.fork(), 1)
    for attribute in ("response_body_buf", "stream_id", "context", "client_state", "server_state"):
        assert hasattr(stream, attribute), f"mitmproxy.proxy.layers.http.HttpStream.{attribute} is gone"


def test_mitmproxy_httplayer_keeps_its_server_connections_where_the_wrapper_looks(layer: Layer) -> None:
    for attribute in ("connections", "waiting_for_establishment"):
        assert hasattr(layer, attribute), f"mitmproxy.proxy.layers.http.HttpLayer.{attribute} is gone"
    source = inspect.getsource(http_layer.HttpLayer.get_connection)
    assert "connection.error" in source, (
        "mitmproxy.proxy.layers.http.HttpLayer.get_connection no longer reuses a failed connection's "
        "error: cutoff._forget_failed_connection may be needless or wrong")
