"""Every failure reaches the SDK as a Responses-shaped error, and the proxy serves the next flow.

One reverse-mode proxy for the module, routed with a TOML file: `gpt-dead*` goes to a port
nothing listens on, everything else to the local upstream.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.addon.e2e.conftest import StartProxy, reverse_client
from tests.addon.e2e.proxy import MitmDump
from tests.addon.e2e.upstream import Upstream, cut, error, message, stream

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, module_dir: Path, upstream_server: Upstream, dead_url: str) -> MitmDump:
    routes = module_dir / "routes.toml"
    routes.write_text(f'[[route]]\nmodel = "gpt-dead*"\nupstream = "anthropic"\nbase_url = "{dead_url}"\n'
                      f'[[route]]\nupstream = "anthropic"\nbase_url = "{upstream_server.url}"\n'
                      'target_model = "claude-haiku-4-5"\n')
    return start_proxy("errors", "reverse:https://api.openai.com", gateway_config=str(routes))


@pytest.fixture
def client(proxy: MitmDump) -> Iterator[openai.OpenAI]:
    with reverse_client(proxy) as sdk:
        yield sdk


def _next_flow_is_served(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(message("still here"))
    assert client.responses.create(model="gpt-5.5", input="next").output_text == "still here"


def test_upstream_429_keeps_status_retry_after_and_message(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(error(429, "rate_limit_error", "Number of request tokens has exceeded your limit",
                        {"retry-after": "12"}))
    with pytest.raises(openai.RateLimitError) as caught:
        client.responses.create(model="gpt-5.5", input="hi", stream=True)
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "12"
    assert caught.value.body["type"] == "rate_limit_error"
    assert caught.value.body["code"] == "rate_limit_exceeded"
    assert "Number of request tokens has exceeded your limit" in caught.value.body["message"]
    _next_flow_is_served(client, upstream)


def test_upstream_500_is_a_server_error(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(error(500, "api_error", "Internal server error"))
    with pytest.raises(openai.InternalServerError) as caught:
        client.responses.create(model="gpt-5.5", input="hi")
    assert caught.value.status_code == 500
    assert caught.value.body["type"] == "server_error"
    assert "Internal server error" in caught.value.body["message"]
    _next_flow_is_served(client, upstream)


def test_upstream_context_overflow_is_context_length_exceeded(client: openai.OpenAI,
                                                              upstream: Upstream) -> None:
    upstream.plan(error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"))
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5.5", input="hi", stream=True)
    assert caught.value.body["code"] == "context_length_exceeded"
    _next_flow_is_served(client, upstream)


def test_unreachable_upstream_is_a_responses_shaped_502(client: openai.OpenAI, upstream: Upstream,
                                                        dead_url: str) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        client.responses.create(model="gpt-dead-1", input="hi", stream=True)
    assert caught.value.status_code == 502
    assert caught.value.body["code"] == "upstream_unreachable"
    assert dead_url in caught.value.body["message"]
    _next_flow_is_served(client, upstream)


def test_stream_cut_mid_way_ends_with_response_failed(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(cut(after=6))
    events = list(client.responses.create(model="gpt-5.5", input="hi", stream=True))  # no exception
    assert events[0].type == "response.created"
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.message
    assert [e.type for e in events].count("response.failed") == 1
    _next_flow_is_served(client, upstream)


def test_refused_request_is_a_400_and_never_reaches_the_upstream(client: openai.OpenAI,
                                                                 upstream: Upstream) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5.5", stream=True, input=[{"type": "compaction_trigger"}])
    assert caught.value.body["type"] == "invalid_request_error"
    assert "compaction" in caught.value.body["message"]
    assert upstream.received == []
    _next_flow_is_served(client, upstream)


def test_client_leaving_mid_stream_does_not_stop_the_proxy(proxy: MitmDump, client: openai.OpenAI,
                                                           upstream: Upstream) -> None:
    upstream.plan(stream(delay=0.1))
    with httpx.stream("POST", f"{proxy.url}/v1/responses", timeout=15,
                      json={"model": "gpt-5.5", "input": "hi", "stream": True}) as response:
        first = next(response.iter_raw())
    assert first.startswith(b"event: response.created")
    _next_flow_is_served(client, upstream)
