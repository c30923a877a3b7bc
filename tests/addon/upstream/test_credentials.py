"""addon/upstream/credentials.py: credentials beside the flow, on the wire only, scrubbed from quotes; and
the mitmproxy internals that this rests on (a changed one fails here, by name)."""

from __future__ import annotations

import dataclasses
import inspect
import io

import pytest
from mitmproxy import io as mio
from mitmproxy.connection import Server
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.test import tflow

from addon.upstream import credentials

KEY = "k-upstream-secret-0123456789"


def _flow_with_key() -> object:
    flow = tflow.tflow()
    flow.request.headers["accept"] = "*/*"
    credentials.attach(flow, {"x-api-key": KEY, "authorization": "Bearer tok-0123456789"})
    return flow


def test_the_flow_shows_a_placeholder_and_the_wire_request_carries_the_value() -> None:
    flow = _flow_with_key()
    assert flow.request.headers["x-api-key"] == flow.request.headers["authorization"] == "<redacted>"
    wire = credentials.wire_request(flow)
    assert wire is not flow.request
    assert (wire.headers["x-api-key"], wire.headers["authorization"]) == (KEY, "Bearer tok-0123456789")
    assert wire.headers["accept"] == "*/*"


def test_a_flow_saved_at_any_moment_holds_no_key() -> None:
    flow = _flow_with_key()
    buffer = io.BytesIO()
    mio.FlowWriter(buffer).add(flow)
    assert KEY.encode() not in buffer.getvalue()
    assert b"tok-0123456789" not in buffer.getvalue()
    assert KEY not in repr(flow.copy().get_state())


def test_the_secrets_of_a_flow_are_every_value_sent_and_the_token_of_a_bearer() -> None:
    flow = _flow_with_key()
    assert {KEY, "Bearer tok-0123456789", "tok-0123456789"} <= set(credentials.secrets_of(flow))
    assert credentials.secrets_of(tflow.tflow()) == ()


def test_scrub_removes_each_exact_value_and_its_json_escaped_form() -> None:
    secrets = credentials.secrets_of(_attached({"authorization": "Bearer ab/cd+ef=0123"}))
    text = 'no: Bearer ab/cd+ef=0123, "ab\\/cd+ef=0123", ab/cd+ef=0123.'
    assert credentials.scrub_text(text, secrets) == 'no: <redacted>, "<redacted>", <redacted>.'
    assert credentials.scrub_bytes(text.encode(), secrets) == b'no: <redacted>, "<redacted>", <redacted>.'


def test_scrub_leaves_short_values_alone() -> None:
    """A short header value would cut ordinary words out of every message."""
    assert credentials.secrets_of(_attached({"x-api-key": "abc"})) == ()


def test_scrub_flow_cleans_metadata_comment_and_a_whole_answer() -> None:
    flow = tflow.tflow(resp=True)
    credentials.attach(flow, {"x-api-key": KEY})
    info = {"error": f"upstream 401: bad key {KEY}", "notes": [f"said {KEY}"]}
    flow.metadata["gateway"] = info
    flow.metadata["gateway.upstream_response"] = f'{{"message": "bad key {KEY}"}}'.encode()
    flow.comment = f"error: {KEY}"
    flow.response.content = f'{{"error": "{KEY}"}}'.encode()
    credentials.scrub_flow(flow)
    assert flow.metadata["gateway"] is info  # the hooks hold on to it
    assert info == {"error": "upstream 401: bad key <redacted>", "notes": ["said <redacted>"]}
    assert flow.metadata["gateway.upstream_response"] == b'{"message": "bad key <redacted>"}'
    assert flow.comment == "error: <redacted>"
    assert flow.response.content == b'{"error": "<redacted>"}'


def test_the_request_head_sent_upstream_carries_the_credentials() -> None:
    flow = _flow_with_key()
    stream = _Stream(flow)
    server = Server(address=("127.0.0.1", 1))
    command = http_layer.SendHttp(http_layer.RequestHeaders(1, flow.request, False), server)
    sent = credentials._with_credentials(stream, command)
    assert sent.connection is server
    assert sent.event.request.headers["x-api-key"] == KEY
    assert (sent.event.stream_id, sent.event.end_stream) == (1, False)
    assert flow.request.headers["x-api-key"] == "<redacted>"


def test_other_commands_and_other_flows_pass_untouched() -> None:
    plain = tflow.tflow()
    server = Server(address=("127.0.0.1", 1))
    command = http_layer.SendHttp(http_layer.RequestHeaders(1, plain.request, False), server)
    assert credentials._with_credentials(_Stream(plain), command) is command
    data = http_layer.SendHttp(http_layer.RequestData(1, b"x"), server)
    assert credentials._with_credentials(_Stream(_flow_with_key()), data) is data


# -- the mitmproxy internals this module relies on (mitmproxy is pinned in pyproject.toml) --------

def test_mitmproxy_httpstream_handle_event_is_wrapped() -> None:
    credentials.install()  # as the gateway does when loaded (tests/addon/patches/test_patches.py)

    assert http_layer.HttpStream._handle_event is credentials._handle_event, (
        "mitmproxy.proxy.layers.http.HttpStream._handle_event is not the wrapper: keys would not be sent")
    assert credentials._ORIGINAL.__qualname__ == "HttpStream._handle_event", (
        "credentials._ORIGINAL is not mitmproxy's HttpStream._handle_event")


def test_mitmproxy_request_headers_event_has_the_fields_the_wrapper_copies() -> None:
    fields = [f.name for f in dataclasses.fields(http_layer.RequestHeaders)]
    assert fields == ["stream_id", "request", "end_stream", "replay_flow"], (
        f"mitmproxy.proxy.layers.http.RequestHeaders fields changed: {fields}")
    assert {"event", "connection"} <= set(inspect.signature(http_layer.SendHttp).parameters), (
        "mitmproxy.proxy.layers.http.SendHttp(event, connection) changed")


@pytest.mark.parametrize("method", ["state_consume_request_body", "start_request_stream"])
def test_mitmproxy_sends_the_flows_own_request_object_upstream(method: str) -> None:
    """The wrapper recognises the request head by identity with `flow.request`."""
    source = inspect.getsource(getattr(http_layer.HttpStream, method))
    assert "RequestHeaders(" in source and "self.flow.request" in source, (
        f"mitmproxy.proxy.layers.http.HttpStream.{method} no longer sends "
        "RequestHeaders(..., self.flow.request)")


class _Stream:
    def __init__(self, flow: object) -> None:
        self.flow = flow


def _attached(headers: dict[str, str]) -> object:
    flow = tflow.tflow()
    credentials.attach(flow, headers)
    return flow
