"""addon/patches/wire_credentials.py: the request head sent upstream carries the credentials the
flow keeps beside it; and the mitmproxy internals that this rests on (a changed one fails here, by
name)."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from mitmproxy.connection import Server
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.test import tflow

from addon.patches import wire_credentials
from addon.upstream import credentials

KEY = "k-upstream-secret-0123456789"


def _flow_with_key() -> object:
    flow = tflow.tflow()
    flow.request.headers["accept"] = "*/*"
    credentials.attach(flow, {"x-api-key": KEY, "authorization": "Bearer tok-0123456789"})
    return flow


class _Stream:
    def __init__(self, flow: object) -> None:
        self.flow = flow


def test_the_request_head_sent_upstream_carries_the_credentials() -> None:
    flow = _flow_with_key()
    stream = _Stream(flow)
    server = Server(address=("127.0.0.1", 1))
    command = http_layer.SendHttp(http_layer.RequestHeaders(1, flow.request, False), server)
    sent = wire_credentials._with_credentials(stream, command)
    assert sent.connection is server
    assert sent.event.request.headers["x-api-key"] == KEY
    assert (sent.event.stream_id, sent.event.end_stream) == (1, False)
    assert flow.request.headers["x-api-key"] == "<redacted>"


def test_other_commands_and_other_flows_pass_untouched() -> None:
    plain = tflow.tflow()
    server = Server(address=("127.0.0.1", 1))
    command = http_layer.SendHttp(http_layer.RequestHeaders(1, plain.request, False), server)
    assert wire_credentials._with_credentials(_Stream(plain), command) is command
    data = http_layer.SendHttp(http_layer.RequestData(1, b"x"), server)
    assert wire_credentials._with_credentials(_Stream(_flow_with_key()), data) is data


# -- the mitmproxy internals this module relies on (mitmproxy is pinned in pyproject.toml) --------

def test_mitmproxy_httpstream_handle_event_is_wrapped() -> None:
    wire_credentials.install()  # as the gateway does when loaded (tests/addon/patches/test_patches.py)

    assert http_layer.HttpStream._handle_event is wire_credentials._handle_event, (
        "mitmproxy.proxy.layers.http.HttpStream._handle_event is not the wrapper: keys would not be sent")
    assert wire_credentials._ORIGINAL.__qualname__ == "HttpStream._handle_event", (
        "wire_credentials._ORIGINAL is not mitmproxy's HttpStream._handle_event")


def test_mitmproxy_request_headers_event_has_the_fields_the_wrapper_copies() -> None:
    fields = [f.name for f in dataclasses.fields(http_layer.RequestHeaders)]
    assert fields == ["stream_id", "request", "end_stream", "replay_flow"], (
        f"mitmproxy.proxy.layers.http.RequestHeaders fields changed: {fields}")
    assert {"event", "connection"} <= set(inspect.signature(http_layer.SendHttp).parameters), (
        "mitmproxy.proxy.layers.http.SendHttp(event, connection) changed")


@pytest.mark.parametrize("method", ["state_consume_request_body", "start_request_stream"])
def test_mitmproxy_sends_the_flows_own_request_object_upstream(method: str) -> None:
    """The wrapper recognises the request head by identity with `flow.request`."""
    found = getattr(http_layer.HttpStream, method)
    source = inspect.getsource(getattr(found, "_gateway_wraps", found))  # mitmproxy's own, if wrapped
    assert "RequestHeaders(" in source and "self.flow.request" in source, (
        f"mitmproxy.proxy.layers.http.HttpStream.{method} no longer sends "
        "RequestHeaders(..., self.flow.request)")
