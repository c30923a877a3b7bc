"""addon/serve/claim.py: what a request is to the gateway, decided once from its method, host and
path, before its client is asked or its body read; a request no one claims gets no context."""

from __future__ import annotations

import pytest
from mitmproxy.test import taddons

from addon.serve.claim import Claims
from tests.addon.conftest import Chain, client_flow

Ctx = tuple[Chain, taddons.context]
MESSAGES = {"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-client-0123456789"}


@pytest.mark.parametrize(("method", "url", "headers", "kind", "client"), [
    ("POST", "https://api.openai.com/v1/responses", {}, "turn", "responses"),
    ("GET", "https://api.openai.com/v1/responses", {}, "other", "responses"),
    ("POST", "https://api.openai.com/v1/responses/compact", {}, "compaction_endpoint", "responses"),
    ("GET", "https://api.openai.com/v1/responses/resp_1/input_items", {}, "store", "responses"),
    ("POST", "https://api.openai.com/v1/conversations", {}, "store", "responses"),
    ("GET", "https://api.openai.com/v1/responses", {"upgrade": "websocket"}, "websocket", "responses"),
    ("GET", "https://chatgpt.com/backend-api/codex/models?client_version=0.169.0", {}, "catalog",
     "responses"),
    ("GET", "https://gateway.local/gateway/usage", {}, "usage", "responses"),
    ("POST", "https://api.anthropic.com/v1/messages?beta=true", MESSAGES, "turn", "messages"),
    ("POST", "https://api.anthropic.com/v1/messages/count_tokens", MESSAGES, "count", "messages"),
    ("GET", "https://api.anthropic.com/v1/models", MESSAGES, "models", "messages"),
])
def test_a_request_is_claimed_as_one_kind(gateway: Ctx, method: str, url: str, headers: dict[str, str],
                                          kind: str, client: str) -> None:
    addon, _ = gateway
    flow = client_flow(url=url, method=method, headers=headers)
    claims = next(a for a in addon.members if isinstance(a, Claims))
    claims.requestheaders(flow)  # the claim alone: no key asked, no body read
    fc = addon.flows.live(flow)
    assert fc is not None and (fc.kind, fc.speaks.name) == (kind, client)
    assert fc.endpoint == ("responses/resp_1/input_items" if kind == "store" and "resp_1" in url
                           else "conversations" if kind == "store"
                           else "responses/compact" if kind == "compaction_endpoint" else None)


@pytest.mark.parametrize(("method", "url"), [
    ("POST", "https://example.com/v1/responses"),
    ("POST", "https://api.openai.com/v1/chat/completions"),
    ("GET", "https://chatgpt.com/backend-api/wham/accounts/check"),
])
def test_a_request_no_one_claims_gets_no_context(gateway: Ctx, method: str, url: str) -> None:
    addon, _ = gateway
    flow = client_flow(url=url, method=method)
    addon.requestheaders(flow)
    assert addon.flows.live(flow) is None and flow.response is None


def test_a_saved_flow_loaded_with_its_answer_is_not_claimed_again(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    flow.metadata["gateway"] = {"upstream": "anthropic", "model": "m", "dropped": [], "notes": []}
    flow.live = False
    addon.requestheaders(flow)
    assert addon.flows.live(flow) is None
