"""addon/serve/answers.py: every answer the proxy gives a gateway flow itself is written once, in the
flow's client dialect, by the hook that answers (docs/design.md "Errors"): a Messages client (Claude
Code) reads Anthropic's error shape, 529 for an overload; a Responses client (Codex) the
Responses error. Each answer is checked as the hook that wrote it left it, before any later hook
runs: there is no rewrite step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.shared import ErrorResponse
from mitmproxy import http
from mitmproxy.test import taddons

from addon.observe import flowinfo
from addon.serve import pipeline, translate
from addon.state.storage import Storage
from addon.state.store import StoreError
from addon.team import clients_file as keys
from addon.team.clients_file import Client
from tests.addon.conftest import Chain, client_flow, finish, run_request
from translators.messages_client import errors as messages_errors

Ctx = tuple[Chain, taddons.context]
KEY = keys.KEY_PREFIX + "answers-unit-key-0123456789"
CLIENTS = {
    "responses": ("https://api.openai.com/v1/responses",
                  {"model": "gpt-5.5", "input": "hi", "stream": True}, "authorization", f"Bearer {KEY}"),
    "messages": ("https://api.anthropic.com/v1/messages?beta=true",
                 {"model": "claude-opus-5-5", "max_tokens": 100, "stream": True,
                  "messages": [{"role": "user", "content": "hi"}]}, "x-api-key", KEY),
}


def _flow(client: str, *, key: str | None = None, **body: Any) -> http.HTTPFlow:
    url, turn, header, value = CLIENTS[client]
    headers = {header: key if key is not None else value}
    if client == "messages":
        headers["anthropic-version"] = "2023-06-01"
    flow = client_flow({**turn, **body}, url=url, headers=headers)
    if header != "authorization":
        del flow.request.headers["authorization"]
    return flow


def _said(client: str, flow: http.HTTPFlow, status: int, code: str) -> str:
    """The answer is the client's own error for `status` (the gateway's `code` in the Responses
    shape, Anthropic's type for the status in the Messages shape); its message."""
    assert flow.response is not None
    body = json.loads(flow.response.content or b"")
    if client == "responses":
        assert flow.response.status_code == status
        assert set(body["error"]) == {"type", "code", "message", "param"} and body["error"]["code"] == code
        return str(body["error"]["message"])
    error = ErrorResponse.model_validate(body)
    assert error.error.type == messages_errors.type_for_status(status)
    assert flow.response.status_code == messages_errors.STATUS_OF_TYPE.get(error.error.type, status) \
        if error.error.type == "overloaded_error" else status
    assert set(body) == {"type", "error"}  # nothing of the Responses shape is left in it
    return error.error.message


def _with_clients(tctx: taddons.context, addon: Chain, tmp_path: Path, client: Client) -> None:
    path = tmp_path / "clients.toml"
    path.write_text(keys.table(client))
    tctx.configure(addon, gateway_clients=str(path))


@pytest.fixture(params=sorted(CLIENTS))
def client(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_an_unknown_client_key_is_401(gateway: Ctx, client: str, tmp_path: Path) -> None:
    addon, tctx = gateway
    _with_clients(tctx, addon, tmp_path, Client("ana", keys.hash_key(KEY)))
    flow = _flow(client, key="gwk-unknown-0123456789")
    addon.requestheaders(flow)
    _said(client, flow, 401, "invalid_api_key")


def test_a_model_outside_the_clients_patterns_is_403(gateway: Ctx, client: str, tmp_path: Path) -> None:
    addon, tctx = gateway
    _with_clients(tctx, addon, tmp_path, Client("ana", keys.hash_key(KEY), ("only-this-*",)))
    flow = _flow(client)
    run_request(addon, flow)
    assert "only-this-*" in _said(client, flow, 403, "model_not_allowed")


def test_a_busy_minute_is_429_with_retry_after(gateway: Ctx, client: str, tmp_path: Path) -> None:
    addon, tctx = gateway
    _with_clients(tctx, addon, tmp_path, Client("ana", keys.hash_key(KEY), requests_per_minute=1))
    run_request(addon, _flow(client))
    flow = _flow(client)
    run_request(addon, flow)
    _said(client, flow, 429, "rate_limit_exceeded")
    assert flow.response is not None and int(flow.response.headers["retry-after"]) >= 1


def test_a_store_that_fails_is_503_an_overload_to_a_messages_client(
        gateway: Ctx, client: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, tctx = gateway
    _with_clients(tctx, addon, tmp_path, Client("ana", keys.hash_key(KEY), tokens_per_day=1000))

    async def broken(*_args: Any) -> Any:
        raise StoreError("the store is down")

    monkeypatch.setattr(Storage, "call", lambda _self, *args: broken(*args))
    flow = _flow(client)
    run_request(addon, flow)
    assert _said(client, flow, 503, "store_unavailable") == "the store is down"


def test_a_body_declared_too_large_is_413_before_it_is_read(gateway: Ctx, client: str) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_max_request_bytes=100)
    flow = _flow(client)
    flow.request.headers["content-length"] = "5000"
    addon.requestheaders(flow)
    _said(client, flow, 413, "request_too_large")


def test_an_exception_in_the_pipeline_is_answered_500_not_sent(gateway: Ctx, client: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    addon, _ = gateway

    async def broken(*_args: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(pipeline, "serve", broken)
    flow = _flow(client)
    run_request(addon, flow)
    assert "RuntimeError" in _said(client, flow, 500, "server_error")


def test_a_translator_bug_is_answered_500_not_sent(gateway: Ctx, client: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    addon, _ = gateway

    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(translate, "translate_request", broken)
    flow = _flow(client)
    run_request(addon, flow)
    assert "KeyError" in _said(client, flow, 500, "server_error")


def test_a_replay_without_its_client_request_is_refused_400(gateway: Ctx, client: str) -> None:
    addon, _ = gateway
    flow = _flow(client)
    flow.metadata[flowinfo.KEY] = flowinfo.record("anthropic")
    if client != "responses":
        flow.metadata[flowinfo.CLIENT_DIALECT] = client
    flow.is_replay, flow.live = "request", True
    run_request(addon, flow)
    assert "no client request" in _said(client, flow, 400, "replay_failed")


def test_a_redirect_from_the_upstream_is_answered_502(gateway: Ctx, client: str) -> None:
    addon, _ = gateway
    flow = _flow(client)
    run_request(addon, flow)
    assert flow.response is None  # on its way upstream
    flow.response = http.Response.make(302, b"", {"location": "https://elsewhere.example/"})
    addon.responseheaders(flow)
    finish(addon.response(flow))
    _said(client, flow, 502, "upstream_redirect")
