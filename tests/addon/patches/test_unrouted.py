"""addon/patches/unrouted.py: mitmproxy's `HttpStream.handle_protocol_error`, driven by hand, for a
model no route takes whose destination cannot be reached (docs/console.md "When a setup is wrong").

A real HttpStream under a real HttpLayer (mitmproxy 12.3), in the state the proxy core leaves it
in when the connection to the destination fails; the commands it yields are what the proxy core
would execute. The mitmproxy names the wrapper uses are checked in test_patches.py.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
from anthropic.types.shared import ErrorResponse
from mitmproxy import connection, http, options
from mitmproxy.proxy.context import Context
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers.http import HTTPMode
from mitmproxy.proxy.layers.http._events import ErrorCode, ResponseProtocolError
from mitmproxy.test import tflow

from addon.observe import flowinfo
from addon.patches import unrouted
from addon.serve.flow import Flows, speaks_of

Layer = http_layer.HttpLayer
CONNECT_FAILED = ResponseProtocolError(1, "[Errno -2] Name or service not known", ErrorCode.CONNECT_FAILED)
SERVER_CLOSED = ResponseProtocolError(1, "server closed connection", ErrorCode.GENERIC_SERVER_ERROR)


@pytest.fixture(autouse=True)
def installed() -> None:
    unrouted.install()


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


def _unrouted_flow(path: str = "/v1/responses") -> http.HTTPFlow:
    """A request whose model no route takes, passed on as the client sent it."""
    flow = tflow.tflow()
    flow.request.url = f"https://api.openai.com{path}"
    flow.metadata[flowinfo.UNROUTED] = "o3"
    if path == "/v1/messages":
        flow.metadata[flowinfo.CLIENT_DIALECT] = "messages"
    _FLOWS.open(flow, speaks_of(flow.metadata), kind="turn")
    return flow


def _names(commands: list[Any]) -> list[str]:
    return [type(c).__name__ + (f":{type(c.event).__name__}" if hasattr(c, "event") else "")
            for c in commands]


def test_a_passed_on_model_whose_destination_is_unreachable_gets_the_clients_502_naming_the_fix(
        layer: Layer) -> None:
    flow = _unrouted_flow()
    commands = list(_stream(layer, flow).handle_protocol_error(CONNECT_FAILED))
    assert "HttpErrorHook" not in _names(commands)  # answered, not failed
    assert "HttpResponseHeadersHook" in _names(commands)
    assert flow.response is not None and flow.response.status_code == 502
    error = json.loads(flow.response.content or b"")["error"]
    assert error["code"] == "no_route" and "'o3'" in error["message"]
    assert "gateway_model" in error["message"] and "Name or service not known" in error["message"]
    assert flow.response.headers["x-should-retry"] == "false"


def test_a_messages_client_gets_anthropics_error_shape(layer: Layer) -> None:
    flow = _unrouted_flow("/v1/messages")
    list(_stream(layer, flow).handle_protocol_error(CONNECT_FAILED))
    assert flow.response is not None and flow.response.status_code == 502
    ErrorResponse.model_validate_json(flow.response.content or b"")


def test_the_failed_connection_is_forgotten_so_the_next_request_connects_again(layer: Layer) -> None:
    dead = connection.Server(address=("api.openai.com", 443))
    dead.error = "[Errno -2] Name or service not known"
    other = connection.Server(address=("127.0.0.1", 10))
    other.error = "refused"
    layer.connections.update({dead: layer, other: layer})
    stream = _stream(layer, _unrouted_flow())
    layer.context.layers = [layer, stream]
    list(stream.handle_protocol_error(CONNECT_FAILED))
    assert dead.error is None
    assert other.error == "refused"  # another address: not this flow's business


@pytest.mark.parametrize("case", ["a flow the gateway does not know", "another failure", "a client gone"])
def test_every_other_case_keeps_mitmproxys_own_error(layer: Layer, case: str) -> None:
    flow = tflow.tflow() if case == "a flow the gateway does not know" else _unrouted_flow()
    stream = _stream(layer, flow)
    if case == "a client gone":
        stream.client_state = stream.state_errored
    event = SERVER_CLOSED if case == "another failure" else CONNECT_FAILED
    commands = list(stream.handle_protocol_error(event))
    assert "HttpResponseHeadersHook" not in _names(commands) and flow.response is None
    assert ("HttpErrorHook" in _names(commands)) is (case != "a client gone")  # mitmproxy's own path


def test_mitmproxy_reports_a_failed_connect_through_handle_protocol_error() -> None:
    connect = inspect.getsource(http_layer.HttpStream.make_server_connection)
    assert "self.handle_protocol_error(" in connect and "ErrorCode.CONNECT_FAILED" in connect, (
        "mitmproxy.proxy.layers.http.HttpStream.make_server_connection no longer reports "
        "ErrorCode.CONNECT_FAILED through handle_protocol_error")
    assert "connection.error" in inspect.getsource(http_layer.HttpLayer.get_connection), (
        "mitmproxy.proxy.layers.http.HttpLayer.get_connection no longer reuses a failed connection's "
        "error: unrouted._forget_failed_connection may be needless or wrong")
