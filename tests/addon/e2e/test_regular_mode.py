"""Regular mode (HTTPS_PROXY + the mitmproxy CA): the SDK talks to https://api.openai.com, the
addon re-targets the flow to the local upstream; api.openai.com is never contacted (this machine
has no route to it, so any attempt would fail the test)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.addon.e2e.conftest import CLIENT_KEY, CODEX_HEADERS, UPSTREAM_KEY, regular_client
from tests.addon.e2e.upstream import (
    Reply,
    Upstream,
    assert_streamed_through,
    cut,
    error,
    fixture_text,
    message,
    stream,
)
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def client(regular_proxy: MitmDump) -> Iterator[openai.OpenAI]:
    with regular_client(regular_proxy) as sdk:
        yield sdk


def test_stream_accumulates_a_final_response_with_the_text(client: openai.OpenAI, upstream: Upstream) -> None:
    with client.responses.stream(model="gpt-5.5", input="name my pelican") as stream_:
        events = [event.type for event in stream_]
        final = stream_.get_final_response()
    assert events[0] == "response.created" and events[-1] == "response.completed"
    assert final.output_text == fixture_text("text_after_tool_result.sse")
    (received,) = upstream.received
    assert received.path == "/v1/messages"
    assert received.headers["x-api-key"] == UPSTREAM_KEY


def test_first_event_arrives_before_the_upstream_has_finished(client: openai.OpenAI,
                                                              upstream: Upstream) -> None:
    upstream.plan(stream(delay=0.1))
    events = client.responses.create(model="gpt-5.5", input="hi", stream=True)
    assert_streamed_through(events, "response.output_text.delta", upstream)


def test_non_streamed_request_gets_a_response_object(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(message("Regular mode answer."))
    response = client.responses.create(model="gpt-5.5", input="hi", stream=False)
    assert (response.status, response.output_text) == ("completed", "Regular mode answer.")


def test_chatgpt_login_endpoint_is_translated_too(regular_proxy: MitmDump, upstream: Upstream) -> None:
    with (regular_client(regular_proxy, base_url="https://chatgpt.com/backend-api/codex") as chatgpt,
          chatgpt.responses.stream(model="gpt-5.5", input="hi") as stream_):
        final = stream_.get_final_response()
    assert final.output_text == fixture_text("text_after_tool_result.sse")
    (received,) = upstream.received
    assert "chatgpt-account-id" not in received.headers
    assert "authorization" not in received.headers


def test_upstream_error_reaches_the_client_in_responses_shape(client: openai.OpenAI,
                                                              upstream: Upstream) -> None:
    upstream.plan(error(400, "invalid_request_error", "max_tokens: 9999999 > 64000"))
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5.5", input="hi")
    assert "max_tokens" in caught.value.body["message"]
    assert client.responses.create(model="gpt-5.5", input="again").status == "completed"


def test_an_upstream_429_is_tried_again_after_its_retry_after(client: openai.OpenAI,
                                                             upstream: Upstream) -> None:
    upstream.plan(error(429, "rate_limit_error", "slow down", {"retry-after": "1"}))
    answer = client.with_options(max_retries=0).responses.create(model="gpt-5.5", input="hi")
    assert answer.status == "completed"
    assert len(upstream.received) == 2


def test_a_flow_the_addon_does_not_match_passes_untouched(regular_proxy: MitmDump,
                                                         upstream: Upstream) -> None:
    body = b'{"model": "gpt-5.5", "input": "not for the gateway"}'
    with httpx.Client(proxy=regular_proxy.url, timeout=15) as http:
        response = http.post(f"{upstream.url}/v1/responses", content=body,
                             headers={"authorization": f"Bearer {CLIENT_KEY}", **CODEX_HEADERS})
    assert response.status_code == 200
    (received,) = upstream.received
    assert received.body == body
    assert received.headers["authorization"] == f"Bearer {CLIENT_KEY}"
    assert received.headers["chatgpt-account-id"] == "acct-e2e"
    assert response.json()["type"] == "message"  # the upstream's own answer, not translated


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl for an HTTP/2 client")
@pytest.mark.parametrize(("reply", "last"), [
    (stream(), "response.completed"),
    (stream(chunked=False), "response.completed"),
    (cut(after=5), "response.failed"),
], ids=["chunked", "content-length", "cut"])
def test_http2_client_gets_a_complete_stream(regular_proxy: MitmDump, upstream: Upstream,
                                             reply: Reply, last: str) -> None:
    """Codex speaks HTTP/2 inside the CONNECT tunnel (tests/support/codex_cli.py); httpx would
    fall back to HTTP/1.1 here (docs/mitmproxy.md "HTTP/2"), so curl is the h2 client."""
    upstream.plan(reply)
    done = subprocess.run(
        ["curl", "-sS", "--http2", "--max-time", "20", "--proxy", regular_proxy.url,
         "--cacert", str(regular_proxy.ca_cert), "-w", "\n%{http_version}", "https://api.openai.com/v1/responses",
         "-H", "content-type: application/json",
         "-d", json.dumps({"model": "gpt-5.5", "input": "hi", "stream": True})],
        capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    body, _, version = done.stdout.rpartition("\n")
    assert version == "2"
    events = [line.removeprefix("event: ") for line in body.splitlines() if line.startswith("event: ")]
    assert events[0] == "response.created"
    assert events[-1] == last
