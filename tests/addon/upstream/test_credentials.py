"""addon/upstream/credentials.py: credentials beside the flow, shown as placeholders, scrubbed from
quotes (they go on the wire only with the upstream leg's requests: tests/addon/upstream/test_runner.py)."""

from __future__ import annotations

import io

from mitmproxy import io as mio
from mitmproxy.test import tflow

from addon.upstream import credentials

KEY = "k-upstream-secret-0123456789"


def _flow_with_key() -> object:
    flow = tflow.tflow()
    flow.request.headers["accept"] = "*/*"
    credentials.attach(flow, {"x-api-key": KEY, "authorization": "Bearer tok-0123456789"})
    return flow


def test_the_flow_shows_a_placeholder() -> None:
    flow = _flow_with_key()
    assert flow.request.headers["x-api-key"] == flow.request.headers["authorization"] == "<redacted>"
    assert flow.request.headers["accept"] == "*/*"


def test_another_attempts_secrets_are_added() -> None:
    flow = _flow_with_key()
    credentials.add_secrets(flow, ["k-second-deployment-0123"])
    assert {KEY, "k-second-deployment-0123"} <= set(credentials.secrets_of(flow))


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


def _attached(headers: dict[str, str]) -> object:
    flow = tflow.tflow()
    credentials.attach(flow, headers)
    return flow


def test_scrub_flow_finds_a_secret_json_would_escape_anywhere_in_a_nested_record() -> None:
    # the record is read as JSON first (`_may_hold`); a secret with characters JSON escapes must
    # still be found in a string deep down, and a value JSON cannot write still walked
    for secret in ('k"quote\\slash/0123', "k\tcontrol\x01-0123", "kéy-ünïcode-0123", "plain-key-0123"):
        flow = tflow.tflow(resp=True)
        credentials.attach(flow, {"x-api-key": secret})
        deep = {"echo": {"tools": [{"name": "t", "description": f"says {secret}!"}], "n": 1.5, "ok": None}}
        flow.metadata["gateway.translation"] = deep
        flow.metadata["gateway.other"] = [{"raw": secret.encode()}, ("kept", 1)]
        clean = {"echo": {"tools": [{"name": "t", "description": "says <redacted>!"}], "n": 1.5, "ok": None}}
        credentials.scrub_flow(flow)
        assert flow.metadata["gateway.translation"] == clean, secret
        assert flow.metadata["gateway.other"] == [{"raw": b"<redacted>"}, ("kept", 1)], secret


def test_scrub_flow_leaves_a_record_without_secrets_as_it_is() -> None:
    flow = tflow.tflow(resp=True)
    credentials.attach(flow, {"x-api-key": KEY})
    saved = {"echo": {"tools": [{"name": "t"}]}, "notes": ["fine"]}
    flow.metadata["gateway.translation"] = saved
    credentials.scrub_flow(flow)
    assert flow.metadata["gateway.translation"] is saved
    assert saved == {"echo": {"tools": [{"name": "t"}]}, "notes": ["fine"]}
