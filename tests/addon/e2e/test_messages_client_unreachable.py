"""An upstream the proxy cannot reach, for a Messages client (the anthropic SDK, as Claude Code):
a turn and a token count get what Claude Code retries when every attempt of the upstream leg
failed (docs/pools.md "What the client sees"): 529 `overloaded_error` with a `retry-after`; a
Responses client gets its own, 503 `server_error`. Retries are off here (`gateway_retries=0`): the
one attempt's failure is the answer.

One reverse-mode proxy for the module: `*-dead*` goes to a port nothing listens on, `*-tls*` to the
local upstream over https, which it does not speak (a failed TLS handshake).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tests.addon.e2e.conftest import StartProxy, reverse_client
from tests.addon.e2e.upstream import Upstream
from tests.e2e.targets import write_routes
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(90)

ASK: dict[str, Any] = {"max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, module_dir: Path, upstream_server: Upstream, dead_url: str) -> MitmDump:
    tls_url = upstream_server.url.replace("http://", "https://")
    routes = write_routes(module_dir / "routes.toml", [
        {"model": model, "upstream": "anthropic", "base_url": url, "target_model": "claude-haiku-4-5"}
        for model, url in (("claude-dead*", dead_url), ("claude-tls*", tls_url), ("gpt-dead*", dead_url))])
    return start_proxy("unreachable", "reverse:https://api.openai.com", gateway_config=str(routes),
                       gateway_retries="0")


@pytest.fixture
def claude(proxy: MitmDump) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=proxy.url, api_key="sk-ant-client-0123456789", max_retries=0,
                               timeout=30)


def _anthropic_api_error(caught: pytest.ExceptionInfo[anthropic.APIStatusError], url: str) -> str:
    assert caught.value.status_code == 529
    body = caught.value.body
    assert isinstance(body, dict), body  # JSON, not mitmproxy's HTML page
    assert body["type"] == "error" and body["error"]["type"] == "overloaded_error"
    assert caught.value.response.headers["retry-after"].isdigit()
    assert url.removeprefix("http://").removeprefix("https://") in body["error"]["message"]
    return str(body["error"]["message"])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_turn_to_an_unreachable_upstream_is_anthropics_api_error(
        claude: anthropic.Anthropic, dead_url: str, stream: bool) -> None:
    with pytest.raises(anthropic.APIStatusError) as caught:
        claude.messages.create(model="claude-dead-1", stream=stream, **ASK)  # type: ignore[call-overload]
    assert "cannot reach" in _anthropic_api_error(caught, dead_url)


def test_a_token_count_to_an_unreachable_upstream_is_anthropics_api_error(
        claude: anthropic.Anthropic, dead_url: str) -> None:
    with pytest.raises(anthropic.APIStatusError) as caught:
        claude.messages.count_tokens(model="claude-dead-1", messages=ASK["messages"])
    assert _anthropic_api_error(caught, dead_url)


def test_a_token_count_to_an_upstream_that_fails_tls_is_anthropics_api_error(
        claude: anthropic.Anthropic, upstream_server: Upstream) -> None:
    with pytest.raises(anthropic.APIStatusError) as caught:
        claude.messages.count_tokens(model="claude-tls-1", messages=ASK["messages"])
    _anthropic_api_error(caught, upstream_server.url.replace("http://", "https://"))


def test_the_proxy_still_serves_after_each_and_a_responses_client_keeps_its_own_shape(
        proxy: MitmDump, claude: anthropic.Anthropic, dead_url: str) -> None:
    with pytest.raises(anthropic.APIStatusError):
        claude.messages.count_tokens(model="claude-dead-1", messages=ASK["messages"])
    with reverse_client(proxy) as sdk, pytest.raises(openai.InternalServerError) as caught:
        sdk.responses.create(model="gpt-dead-1", input="hi")
    assert caught.value.status_code == 503
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["code"] == "server_error"  # the SDK unwraps Responses' `error`
    assert dead_url.removeprefix("http://") in caught.value.body["message"]
