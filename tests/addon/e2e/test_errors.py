"""Every failure reaches the SDK as a Responses-shaped error, and the proxy serves the next flow.

One reverse-mode proxy for the module, routed with a TOML file: `gpt-dead*` goes to a port
nothing listens on, `gpt-later*` to a port a test brings up later, `gpt-tls*` to the local
upstream over https (which it does not speak), `gpt-cooling*` to the local upstream in a pool of
its own (a 429's cooldown there holds up no other turn), everything else to the local upstream.
Retries are off here (`gateway_retries=0`): each failure is the one attempt's, answered as the
upstream leg answers a turn whose every attempt failed (docs/pools.md "What the client sees"),
503 `server_error` with a `retry-after`, which Codex retries; tests/addon/e2e/test_pools.py
has the retries.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.addon.e2e.conftest import StartProxy, reverse_client
from tests.addon.e2e.upstream import Reply, Upstream, cut, error, message, stream
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def later_port() -> int:
    """A port nothing listens on until a test starts an upstream there."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, module_dir: Path, upstream_server: Upstream, dead_url: str,
          later_port: int) -> MitmDump:
    routes = module_dir / "routes.toml"
    tls_url = upstream_server.url.replace("http://", "https://")
    routes.write_text(f'[[route]]\nmodel = "gpt-dead*"\nupstream = "anthropic"\nbase_url = "{dead_url}"\n'
                      f'[[route]]\nmodel = "gpt-later*"\nupstream = "anthropic"\n'
                      f'base_url = "http://127.0.0.1:{later_port}"\n'
                      f'[[route]]\nmodel = "gpt-tls*"\nupstream = "anthropic"\nbase_url = "{tls_url}"\n'
                      f'[[route]]\nmodel = "gpt-cooling*"\nupstream = "anthropic"\n'
                      f'base_url = "{upstream_server.url}"\ntarget_model = "claude-haiku-4-5"\n'
                      f'[[route]]\nupstream = "anthropic"\nbase_url = "{upstream_server.url}"\n'
                      'target_model = "claude-haiku-4-5"\n')
    return start_proxy("errors", "reverse:https://api.openai.com", gateway_config=str(routes),
                       gateway_retries="0")


@pytest.fixture
def client(proxy: MitmDump) -> Iterator[openai.OpenAI]:
    with reverse_client(proxy) as sdk:
        yield sdk


def _next_flow_is_served(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(message("still here"))
    assert client.responses.create(model="gpt-5.5", input="next").output_text == "still here"


def test_upstream_429_is_a_503_server_error_with_its_retry_after(client: openai.OpenAI,
                                                                 upstream: Upstream) -> None:
    upstream.plan(error(429, "rate_limit_error", "Number of request tokens has exceeded your limit",
                        {"retry-after": "12"}))
    with pytest.raises(openai.InternalServerError) as caught:
        client.with_options(max_retries=0).responses.create(model="gpt-cooling", input="hi", stream=True)
    assert caught.value.status_code == 503
    assert caught.value.response.headers["retry-after"] in ("11", "12")
    assert caught.value.body["code"] == "server_error"
    assert "Number of request tokens has exceeded your limit" in caught.value.body["message"]
    _next_flow_is_served(client, upstream)


def test_upstream_500_is_a_503_server_error(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(error(500, "api_error", "Internal server error"))
    with pytest.raises(openai.InternalServerError) as caught:
        client.with_options(max_retries=0).responses.create(model="gpt-5.5", input="hi")
    assert caught.value.status_code == 503
    assert caught.value.body["code"] == "server_error"
    assert "Internal server error" in caught.value.body["message"]
    assert caught.value.response.headers["retry-after"].isdigit()
    _next_flow_is_served(client, upstream)


def test_upstream_context_overflow_is_context_length_exceeded(client: openai.OpenAI,
                                                              upstream: Upstream) -> None:
    upstream.plan(error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"))
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5.5", input="hi", stream=True)
    assert caught.value.body["code"] == "context_length_exceeded"
    _next_flow_is_served(client, upstream)


def test_unreachable_upstream_is_a_responses_shaped_503(client: openai.OpenAI, upstream: Upstream,
                                                        dead_url: str) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        client.with_options(max_retries=0).responses.create(model="gpt-dead-1", input="hi", stream=True)
    assert caught.value.status_code == 503
    assert caught.value.body["code"] == "server_error"
    assert dead_url.removeprefix("http://") in caught.value.body["message"]
    _next_flow_is_served(client, upstream)


def test_upstream_back_again_is_used_on_the_same_client_connection(proxy: MitmDump,
                                                                   later_port: int) -> None:
    """The client's connection stays open after the gateway's 503, and its next request reaches
    the upstream once it is back (the gateway's own client connects afresh)."""
    body = {"model": "gpt-later-1", "input": "hi"}
    with httpx.Client(timeout=15) as http:
        down = http.post(f"{proxy.url}/v1/responses", json=body)
        first_connection = down.extensions["network_stream"].get_extra_info("client_addr")
        assert (down.status_code, down.json()["error"]["code"]) == (503, "server_error")
        with Upstream(port=later_port) as later:
            later.plan(message("back again"))
            up = http.post(f"{proxy.url}/v1/responses", json=body)
            assert up.extensions["network_stream"].get_extra_info("client_addr") == first_connection
    assert up.status_code == 200, up.text
    assert up.json()["output"][0]["content"][0]["text"] == "back again"


def test_upstream_tls_handshake_failure_is_a_responses_shaped_503(client: openai.OpenAI,
                                                                  upstream: Upstream) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        client.with_options(max_retries=0).responses.create(model="gpt-tls-1", input="hi", stream=True)
    assert caught.value.status_code == 503
    assert caught.value.body["code"] == "server_error"
    assert "TLS" in caught.value.body["message"]
    _next_flow_is_served(client, upstream)


def test_upstream_closing_without_an_answer_is_a_responses_shaped_503(client: openai.OpenAI,
                                                                     upstream: Upstream) -> None:
    upstream.plan(Reply("close"), Reply("close"))  # a kept connection found closed is opened again once
    with pytest.raises(openai.APIStatusError) as caught:
        client.with_options(max_retries=0).responses.create(model="gpt-5.5", input="hi", stream=True)
    assert caught.value.status_code == 503
    assert caught.value.body["code"] == "server_error"
    assert "closed" in caught.value.body["message"]
    _next_flow_is_served(client, upstream)


def test_upstream_breaking_off_a_whole_answer_is_a_responses_shaped_503(client: openai.OpenAI,
                                                                       upstream: Upstream) -> None:
    upstream.plan(Reply("cut_body", body=message("never complete").body))
    with pytest.raises(openai.APIStatusError) as caught:
        client.with_options(max_retries=0).responses.create(model="gpt-5.5", input="hi", stream=False)
    assert caught.value.status_code == 503
    assert caught.value.body["code"] == "server_error"
    _next_flow_is_served(client, upstream)


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl for an HTTP/2 client")
def test_http2_client_gets_responses_shaped_503s_and_keeps_its_connection(proxy: MitmDump,
                                                                         upstream: Upstream) -> None:
    """Three requests on one HTTP/2 connection (TLS to the reverse proxy): unreachable, TLS
    failure, then a normal stream."""
    command = ["curl", "-sS", "--max-time", "20"]
    for model in ("gpt-dead-1", "gpt-tls-1", "gpt-5.5"):
        if model != "gpt-dead-1":
            command.append("--next")
        command += ["-k", "--http2", "-w", "\n@@ %{http_version} %{response_code} %{num_connects}\n",
                    f"https://127.0.0.1:{proxy.port}/v1/responses", "-H", "content-type: application/json",
                    "-d", json.dumps({"model": model, "input": "hi", "stream": True})]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    parts = done.stdout.split("\n@@ ")
    results = [part.split("\n", 1)[0].split() for part in parts[1:]]
    assert results == [["2", "503", "1"], ["2", "503", "0"], ["2", "200", "0"]]
    assert [json.loads(parts[i].rsplit("\n", 1)[-1] if i else parts[0])["error"]["code"]
            for i in (0, 1)] == ["server_error", "server_error"]
    assert "event: response.completed" in parts[2]


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
        client.responses.create(model="gpt-5.5", stream=True,
                                input=[{"type": "item_reference", "id": "msg_1"}])
    assert caught.value.body["type"] == "invalid_request_error"
    # an id this gateway never stored (docs/agents-sdk.md "Item references")
    assert caught.value.body["message"] == "Item with id 'msg_1' not found."
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
