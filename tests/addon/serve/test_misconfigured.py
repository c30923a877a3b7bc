"""addon/serve/misconfigured.py: which requests and routes are a setup that is wrong, and what the
answer says to do (through real mitmdump: tests/e2e/test_setup_mistakes.py)."""

from __future__ import annotations

import pytest
from mitmproxy import http
from mitmproxy.proxy.mode_specs import ProxyMode
from mitmproxy.test import tflow

from addon.routes.routing import Deployment, Route
from addon.serve import misconfigured
from translators import dialect as dialects

PROXY = ("127.0.0.1", 8080)


def sent(url: str, mode: str = "regular", headers: dict[str, str] | None = None) -> http.HTTPFlow:
    flow = tflow.tflow()
    flow.request = http.Request.make("POST", url, b"{}", headers or {})
    flow.client_conn.proxy_mode = ProxyMode.parse(mode)
    flow.client_conn.sockname = PROXY
    return flow


@pytest.mark.parametrize(("url", "mode", "to_itself"), [
    ("http://127.0.0.1:8080/v1/responses", "regular", True),  # a relative URL: its Host header
    ("http://localhost:8080/v1/responses", "regular", True),
    ("http://[::1]:8080/v1/messages", "regular", True),
    ("http://127.0.0.1:8081/v1/responses", "regular", False),  # another server on this machine
    ("https://api.openai.com/v1/responses", "regular", False),  # a proxy request
    ("http://127.0.0.1:8080/v1/responses", "reverse:https://api.openai.com", False),
])
def test_a_request_to_the_proxys_own_address_in_regular_mode_is_misdirected(url: str, mode: str,
                                                                            to_itself: bool) -> None:
    assert misconfigured.to_itself(sent(url, mode)) is to_itself


def test_the_client_dialect_is_read_from_the_path_and_the_api_to_name_from_its_entry() -> None:
    messages = misconfigured.speaker(sent("http://127.0.0.1:8080/v1/messages"))
    models = misconfigured.speaker(sent("http://127.0.0.1:8080/v1/models",
                                        headers={"anthropic-version": "2023-06-01"}))
    responses = misconfigured.speaker(sent("http://127.0.0.1:8080/v1/responses"))
    assert messages.name == models.name == "messages" and responses.name == "responses"
    assert misconfigured.own_api(messages) == "https://api.anthropic.com"
    assert misconfigured.own_api(responses) == "https://api.openai.com"


def chat(base_url: str, key_env: str | None, **more: object) -> Route:
    return Route("*", dialects.get("chat"), base_url, "deepseek-chat", key_env, **more)  # type: ignore[arg-type]


def test_a_route_whose_key_variable_is_unset_or_empty_is_refused_400(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_TEST_EMPTY", " ")
    monkeypatch.delenv("GATEWAY_TEST_UNSET", raising=False)
    for name in ("GATEWAY_TEST_EMPTY", "GATEWAY_TEST_UNSET"):
        refused = misconfigured.key_missing(chat("http://127.0.0.1:8000/v1", name))
        assert refused is not None and refused.status == 400 and refused.code == "upstream_key_missing"
        assert f"${name} is not set or empty" in refused.message and "gateway_key_env" in refused.message
    monkeypatch.setenv("GATEWAY_TEST_SET", "k-0123")
    assert misconfigured.key_missing(chat("http://127.0.0.1:8000/v1", "GATEWAY_TEST_SET")) is None
    assert misconfigured.key_missing(chat("http://127.0.0.1:8000/v1", None)) is None  # a keyless route


def test_a_signing_dialect_or_a_pool_is_not_refused_for_a_missing_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    bedrock = Route("*", dialects.get("bedrock"), "https://bedrock-runtime.eu-central-1.amazonaws.com",
                    "claude", "AWS_BEARER_TOKEN_BEDROCK")
    assert misconfigured.key_missing(bedrock) is None  # signed from the AWS chain instead
    pooled = chat("http://127.0.0.1:8000/v1", "GATEWAY_TEST_UNSET",
                  deployments=(Deployment("a", chat("http://127.0.0.1:8001/v1", None)),))
    assert misconfigured.key_missing(pooled) is None


def test_a_dialect_key_set_but_not_sent_to_another_host_names_the_option(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-0123")
    hint = misconfigured.unsent_key(chat("https://openrouter.example/api/v1", None))
    assert hint == ("$DEEPSEEK_API_KEY is set but goes only to the chat dialect's own host; "
                    "--set gateway_key_env=DEEPSEEK_API_KEY sends it here")
    assert misconfigured.unsent_key(chat("https://api.deepseek.com", "DEEPSEEK_API_KEY")) is None
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    assert misconfigured.unsent_key(chat("https://openrouter.example/api/v1", None)) is None


def test_an_upstreams_401_to_a_route_that_sent_no_key_says_which_option_sends_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-0123")
    route = chat("https://openrouter.example/api/v1", None)
    body = {"error": {"message": "No auth credentials found", "code": "invalid_api_key"}}
    info: dict[str, list[str]] = {"notes": []}
    misconfigured.with_unsent_key(route, 401, body, info)
    assert body["error"]["message"].startswith("No auth credentials found (the gateway sent no key: ")
    assert info["notes"] and "gateway_key_env=DEEPSEEK_API_KEY" in info["notes"][0]
    untouched = {"error": {"message": "overloaded"}}
    misconfigured.with_unsent_key(route, 529, untouched, {"notes": []})
    assert untouched == {"error": {"message": "overloaded"}}
