"""addon/cutoff.py: mitmproxy's `HttpStream.handle_protocol_error`, driven by hand.

A real HttpStream under a real HttpLayer (mitmproxy 12.3.1), in the state the proxy core leaves
it in when the upstream fails; the commands it yields are what the proxy core would execute.
"""

from __future__ import annotations

from typing import Any

import pytest
from mitmproxy import connection, http, options
from mitmproxy.proxy.context import Context
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers.http import HTTPMode
from mitmproxy.proxy.layers.http._events import ErrorCode, ResponseHeaders, ResponseProtocolError
from mitmproxy.test import tflow

from addon import cutoff

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


def _gateway_flow(**metadata: Any) -> http.HTTPFlow:
    flow = tflow.tflow()
    flow.request.url = "http://127.0.0.1:9/v1/messages"
    flow.request.headers["x-api-key"] = "sk-ant-secret-0123456789"
    flow.metadata.update({"gateway": {"upstream": "anthropic", "model": "claude-haiku-4-5", "dropped": [],
                                      "notes": []}, "gateway.translation": {}, **metadata})
    return flow


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


def test_failed_connect_is_recorded_commented_and_the_key_redacted(layer: Layer) -> None:
    _run(_stream(layer, flow := _gateway_flow()), CONNECT_FAILED)
    assert flow.metadata["gateway"]["error"].startswith("cannot reach the anthropic upstream")
    assert flow.metadata["gateway.done"] is True  # the addon's `response` hook leaves it alone
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
    commands = _run(_stream(layer, _gateway_flow(**{"gateway.done": True})), CONNECT_FAILED)
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
