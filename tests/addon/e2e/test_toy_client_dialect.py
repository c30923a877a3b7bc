"""A client side is a dialect too (docs/architecture.md "The client side"): the toy client of
tests/support/toy_client/ (one folder: its own path, decoder into the IR, encoder from IR events
in its own content type, error shape), registered by `$GATEWAY_DIALECTS` and nothing else, is
served through real mitmdump to the local Anthropic upstream: nothing in `addon/` names it."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from mitmproxy import http, io

from tests.addon.e2e.conftest import UPSTREAM_MODEL, StartProxy
from tests.addon.e2e.upstream import DEFAULT_FIXTURE, FIXTURES, Upstream, error, message
from tests.support import toy_client
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(90)


def _fixture_text() -> str:
    """The text of the recorded Anthropic stream the upstream sends, read from its events."""
    text = []
    for line in (FIXTURES / DEFAULT_FIXTURE).read_text().splitlines():
        if line.startswith("data:"):
            event = json.loads(line[5:])
            if event.get("type") == "content_block_delta" and event["delta"].get("type") == "text_delta":
                text.append(event["delta"]["text"])
    return "".join(text)


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy) -> MitmDump:
    return start_proxy("toy-client", "reverse:https://api.openai.com",
                       env={"GATEWAY_DIALECTS": toy_client.__name__}, gateway_match=toy_client.PATH)


def _post(proxy: MitmDump, body: object) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(proxy.url + toy_client.PATH, content=content, timeout=15,
                      headers={"content-type": "application/json"})


def test_a_streamed_turn_is_decoded_sent_and_answered_in_the_toys_lines(proxy: MitmDump,
                                                                         upstream: Upstream) -> None:
    answer = _post(proxy, {"model": "toy-1", "prompt": "name a pelican", "stream": True})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == toy_client.CONTENT_TYPE  # what its encoder writes
    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert lines[-1] == {"done": True, "text": _fixture_text()}
    assert "".join(line["delta"] for line in lines[:-1]) == _fixture_text()
    (received,) = upstream.received
    assert received.path == "/v1/messages"
    assert received.json["model"] == UPSTREAM_MODEL and received.json["stream"] is True
    assert received.json["messages"][0]["content"][0]["text"] == "name a pelican"


def test_a_whole_turn_is_one_answer_object(proxy: MitmDump, upstream: Upstream) -> None:
    upstream.plan(message("Hello, toy."))
    answer = _post(proxy, {"model": "toy-1", "prompt": "hi"})
    assert answer.status_code == 200 and answer.json() == {"text": "Hello, toy."}
    assert answer.headers["content-type"] == "application/json"


def test_a_request_its_decoder_refuses_is_answered_in_its_error_shape(proxy: MitmDump,
                                                                      upstream: Upstream) -> None:
    answer = _post(proxy, {"model": "toy-1"})
    assert answer.status_code == 400
    assert answer.json()["problem"]["why"] == "prompt must be a non-empty string"
    assert upstream.received == []


def test_the_proxys_own_errors_and_the_upstreams_are_said_in_its_shape(proxy: MitmDump,
                                                                        upstream: Upstream) -> None:
    not_json = _post(proxy, b"{not json")
    assert not_json.status_code == 400
    assert not_json.json()["problem"]["code"] == "invalid_json"
    upstream.plan(error(400, "invalid_request_error", "prompt is malformed"))
    refused = _post(proxy, {"model": "toy-1", "prompt": "hi"})
    assert refused.status_code == 400
    problem = refused.json()["problem"]
    assert problem["status"] == 400 and "prompt is malformed" in problem["why"]


def test_the_saved_flow_names_its_client_dialect(start_proxy: StartProxy, upstream: Upstream,
                                                 module_dir: Path) -> None:
    saving = start_proxy("toy-client-saved", "reverse:https://api.openai.com",
                         env={"GATEWAY_DIALECTS": toy_client.__name__}, gateway_match=toy_client.PATH)
    assert _post(saving, {"model": "toy-1", "prompt": "hi", "extra": 1}).status_code == 200
    assert saving.stop() == 0, saving.log
    with (module_dir / "toy-client-saved.flows").open("rb") as f:
        (flow,) = [flow for flow in io.FlowReader(f).stream() if isinstance(flow, http.HTTPFlow)]
    info = flow.metadata["gateway"]
    assert info["client_dialect"] == toy_client.NAME
    assert info["dropped"] == ["extra"]  # the decoder's report reaches the record
