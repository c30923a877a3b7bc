"""The gateway in mitmproxy's `upstream:` mode (docs/pools.md "Through an upstream proxy"): a
corporate proxy, here a real mitmdump in regular mode that wants credentials (`proxyauth`), is
the only way out. The client (the openai SDK, as Codex with HTTPS_PROXY) asks the gateway; the
leg's request to the model's upstream goes through the proxy with the `upstream_auth`
credentials, and mitmproxy's own request to the gateway's loopback server never does."""

from __future__ import annotations

import base64
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from mitmproxy import http, io

from tests.addon.e2e.conftest import CLIENT_KEY, CODEX_HEADERS
from tests.support.fake_upstream import FakeUpstream, anthropic_text
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(120)

CREDENTIALS = "corp:s3cret-proxy-pass"
KEY = "sk-ant-through-the-proxy-0123456789"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("upstream-proxy")
    with FakeUpstream(lambda _body, _headers, _path: anthropic_text("through the proxy")) as up, \
            MitmDump(tmp / "proxy", mode="regular", scripts=(), options={"proxyauth": CREDENTIALS},
                     args=["-w", str(tmp / "proxy.flows")]) as proxy, \
            MitmDump(tmp / "gateway", mode=f"upstream:http://127.0.0.1:{proxy.port}",
                     options={"upstream_auth": CREDENTIALS, "gateway_upstream": "anthropic",
                              "gateway_base_url": up.url, "gateway_model": "claude-sonnet-4-6",
                              "gateway_key_env": "PROXY_TEST_KEY"},
                     args=["-w", str(tmp / "gateway.flows")], env={"PROXY_TEST_KEY": KEY}) as gateway:
        trust = ssl.create_default_context(cafile=str(gateway.ca_cert))
        with httpx.Client(proxy=gateway.url, verify=trust, timeout=30) as http_client:
            sdk = openai.OpenAI(base_url="https://api.openai.com/v1", api_key=CLIENT_KEY, max_retries=0,
                                http_client=http_client, default_headers=CODEX_HEADERS)
            events = list(sdk.responses.create(model="gpt-5.5", input="hello", stream=True))
        gateway_flows = _saved(tmp / "gateway.flows", 1)
        yield {"events": events, "up": up, "proxy": proxy, "gateway": gateway,
               "proxy_flows": _saved(tmp / "proxy.flows", len(up.requests)), "gateway_flows": gateway_flows,
               "files": [tmp / "gateway.flows"]}


def _saved(path: Path, at_least: int) -> list[http.HTTPFlow]:
    deadline = time.monotonic() + 10
    while True:
        flows: list[http.HTTPFlow] = []
        if path.exists():
            with path.open("rb") as f:
                flows = [flow for flow in io.FlowReader(f).stream() if isinstance(flow, http.HTTPFlow)]
        if len(flows) >= at_least or time.monotonic() > deadline:
            return flows
        time.sleep(0.1)


def test_the_turn_is_answered_through_the_proxy(world: dict[str, Any]) -> None:
    events = world["events"]
    assert events[-1].type == "response.completed" and events[-1].response.output_text == "through the proxy"
    turn = [r for r in world["up"].requests if r.method == "POST"]
    assert [(r.path, r.header("x-api-key")) for r in turn] == [("/v1/messages", KEY)]


def test_everything_the_gateway_asks_the_upstream_goes_through_the_proxy_and_nothing_else_does(
        world: dict[str, Any]) -> None:
    """The leg's turn and the capabilities fetch (`GET /v1/models/...`) through the proxy;
    mitmproxy's request to the gateway's loopback server (its ticket) never."""
    up_port = world["up"].port
    asked = sorted((f.request.method, f.request.host, f.request.port, f.request.path)
                   for f in world["proxy_flows"])
    assert asked == sorted(("" + r.method, "127.0.0.1", up_port, r.path) for r in world["up"].requests)
    assert {m for m, *_ in asked} == {"GET", "POST"}


def test_the_proxy_credentials_are_sent_to_the_proxy_only_and_shown_nowhere(world: dict[str, Any]) -> None:
    basic = base64.b64encode(CREDENTIALS.encode()).decode()
    assert not any(r.header("proxy-authorization") for r in world["up"].requests)
    for secret in (CREDENTIALS, basic, KEY):
        assert secret not in world["gateway"].log
        for path in world["files"]:
            assert secret.encode() not in path.read_bytes()
