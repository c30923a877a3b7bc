"""Capabilities read from the vendor through real mitmdump: the local provider serves both the
models endpoint (`GET /v1/models/{id}`) and Messages; what it says about the model shapes the
request the gateway sends, and the saved flow says where the capabilities came from."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mitmproxy import http, io

from tests.addon.e2e.conftest import UPSTREAM_KEY, StartProxy, reverse_client
from tests.addon.e2e.upstream import Received, Reply, Upstream, json_reply, stream
from tests.support.models_endpoint import claude_model_info

pytestmark = pytest.mark.timeout(90)

MODEL = "claude-sonnet-4-5"
"""The shipped table gives it a thinking budget only; this provider says adaptive only."""


def _provider(received: Received) -> Reply:
    if received.method == "GET" and received.path == f"/v1/models/{MODEL}":
        return json_reply(claude_model_info(MODEL, thinking=("adaptive", "disabled")))
    if received.method == "POST" and received.path == "/v1/messages":
        return stream()
    return json_reply({"type": "error", "error": {"type": "not_found_error", "message": "no"}}, status=404)


@pytest.fixture(scope="module")
def upstream_server() -> Iterator[Upstream]:
    with Upstream(default=_provider) as server:
        yield server


def test_vendor_capabilities_shape_the_upstream_request_and_the_flow_says_so(
        start_proxy: StartProxy, upstream_server: Upstream, module_dir: Path) -> None:
    proxy = start_proxy("vendor", "reverse:https://api.openai.com", gateway_model=MODEL,
                        gateway_capabilities="vendor")
    asked = time.monotonic()
    with reverse_client(proxy) as client:
        events = list(client.responses.create(model="gpt-5.5", input="hi", stream=True,
                                              reasoning={"effort": "high"}))
    assert events[-1].type == "response.completed"
    assert proxy.stop() == 0, proxy.log
    assert f"model {MODEL} is deprecated (retires 2026-11-30)" in proxy.log

    gets = [r for r in upstream_server.received if r.method == "GET"]
    (post,) = [r for r in upstream_server.received if r.method == "POST"]
    assert [get.path for get in gets] == [f"/v1/models/{MODEL}"]
    assert gets[0].header("x-api-key") == UPSTREAM_KEY
    assert gets[0].started < asked  # fetched at start-up, before any request
    assert post.json["thinking"]["type"] == "adaptive"

    with (module_dir / "vendor.flows").open("rb") as f:
        (flow,) = [flow for flow in io.FlowReader(f).stream() if isinstance(flow, http.HTTPFlow)]
    info = flow.metadata["gateway"]
    assert info["capabilities"] == "vendor"
    assert not [note for note in info["notes"] if note.startswith("capabilities:")]
    assert UPSTREAM_KEY not in json.dumps(info)
