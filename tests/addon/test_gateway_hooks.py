"""addon/gateway.py hooks, one flow at a time (mitmproxy.test.taddons + tflow)."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mitmproxy import exceptions, http
from mitmproxy import io as mio
from mitmproxy.net import encoding
from mitmproxy.test import taddons

from addon.routes.routing import Router
from addon.serve import translate, upstream_answer, websocket
from addon.serve.streaming import StreamHook
from addon.serve.websocket.endpoint import Endpoint
from tests.addon.conftest import (
    CLIENT_KEY,
    CLIENT_URL,
    UPSTREAM_KEY,
    Chain,
    client_flow,
    finish,
    run_request,
    sse_events,
    wire_headers,
)
from tests.data import DATA
from translators import Translation

Ctx = tuple[Chain, taddons.context]
FIXTURES = (DATA / "anthropic")
CODEX_HEADERS = {
    "cookie": "__Secure-next-auth.session-token=abc",
    "chatgpt-account-id": "acct-1234",
    "x-codex-turn-metadata": '{"turn":1}',
    "x-codex-beta-features": "x",
    "openai-beta": "responses=experimental",
    "session_id": "0198-session",
    "originator": "codex_exec",
}


def _snapshot(flow: http.HTTPFlow) -> dict[str, Any]:
    return {"request": flow.request.get_state(), "response": flow.response, "metadata": dict(flow.metadata),
            "comment": flow.comment, "marked": flow.marked}


def _answer(flow: http.HTTPFlow, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    flow.response = http.Response.make(status, body, headers or {"content-type": "text/event-stream"})


def _stream_through(addon: Chain, flow: http.HTTPFlow, chunks: list[bytes]) -> list[bytes]:
    """Drive the stream callable as the proxy core does: one call per chunk, then b""."""
    addon.responseheaders(flow)
    hook = flow.response.stream
    assert isinstance(hook, StreamHook)
    sent: list[bytes] = []
    for chunk in [*chunks, b""]:
        out = hook(chunk)
        sent += [out] if isinstance(out, bytes) else list(out)
    finish(addon.response(flow))
    return sent


# -- flows that are not ours ------------------------------------------------------------------

@pytest.mark.parametrize(("method", "url"), [
    ("POST", "https://example.com/v1/responses"),
    ("POST", "https://api.openai.com/v1/chat/completions"),
    ("GET", "https://chatgpt.com/backend-api/wham/accounts/check"),
    ("POST", "https://chatgpt.com/backend-api/wham/settings/user"),
    ("GET", CLIENT_URL),
])
def test_hooks_leave_a_flow_they_do_not_match_untouched(gateway: Ctx, method: str, url: str) -> None:
    addon, _ = gateway
    flow = client_flow(url=url, method=method, headers=CODEX_HEADERS)
    before = _snapshot(flow)
    run_request(addon, flow)
    _answer(flow, 200, b'{"ok": true}', {"content-type": "application/json", "content-length": "12"})
    addon.responseheaders(flow)
    finish(addon.response(flow))
    assert flow.response.stream is False
    assert flow.response.content == b'{"ok": true}'
    assert {**_snapshot(flow), "response": None} == before


def test_request_for_a_model_without_route_is_left_as_sent(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_model="gpt-5*=claude-sonnet-4-6")
    flow = client_flow({"model": "o3", "input": "hi"}, headers={"content-encoding": "zstd"})
    flow.request.raw_content = encoding.encode(json.dumps({"model": "o3", "input": "hi"}).encode(), "zstd")
    before = _snapshot(flow)
    run_request(addon, flow)
    # untouched but for a note of the client's model for the console (addon/observe/console.py)
    assert _snapshot(flow) == {**before, "metadata": {"gateway.unrouted": "o3"}}


UPGRADE = {"upgrade": "websocket", "connection": "Upgrade", "sec-websocket-version": "13",
           "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "openai-beta": "responses_websockets=2026-02-06"}


def test_websocket_upgrade_on_responses_is_answered_101_and_served_by_the_endpoint(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gateway serves the socket itself (docs/websocket.md): the upgrade is answered 101 in
    `requestheaders`, its URL left as the client sent it, and mitmproxy hands the socket over to
    the endpoint (addon/patches/websocket_served.py) instead of relaying it anywhere."""
    addon, _ = gateway
    endpoint = Endpoint()
    endpoint.running()
    monkeypatch.setattr(websocket, "ENDPOINT", endpoint)
    flow = client_flow(method="GET", headers=UPGRADE)
    addon.requestheaders(flow)
    assert flow.response is not None and flow.response.status_code == 101
    assert flow.response.headers["upgrade"] == "websocket"
    assert flow.request.url == CLIENT_URL
    assert flow.metadata["gateway.websocket"] == CLIENT_URL


def test_websocket_upgrade_to_a_passthrough_route_goes_on_untouched(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_upstream="responses", gateway_base_url="", gateway_model="",
                   gateway_key_env="")
    flow = client_flow(method="GET", headers=UPGRADE)
    addon.requestheaders(flow)
    assert flow.response is None
    assert flow.request.url == CLIENT_URL


def test_websocket_upgrade_while_the_endpoint_is_down_is_answered_503(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, _ = gateway
    monkeypatch.setattr(websocket, "ENDPOINT", Endpoint())
    flow = client_flow(method="GET", headers=UPGRADE)
    addon.requestheaders(flow)
    assert flow.response.status_code == 503
    assert flow.response.json()["error"]["code"] == "websocket_unavailable"


def test_websocket_upgrade_elsewhere_is_left_alone(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow(url="https://chatgpt.com/backend-api/other", method="GET",
                       headers={"upgrade": "websocket"})
    addon.requestheaders(flow)
    assert flow.response is None


# -- the request on its way upstream ----------------------------------------------------------

def test_zstd_request_body_is_decoded_and_translated(gateway: Ctx, listener: str) -> None:
    addon, _ = gateway
    body = {"model": "gpt-5.5", "input": "hello zstd", "stream": True}
    flow = client_flow(headers={"content-encoding": "zstd"})
    flow.request.raw_content = encoding.encode(json.dumps(body).encode(), "zstd")
    run_request(addon, flow)
    assert flow.response is None
    assert "content-encoding" not in flow.request.headers
    sent = json.loads(flow.request.raw_content)
    assert sent["messages"][0]["content"][0]["text"] == "hello zstd"
    assert flow.request.headers["content-length"] == str(len(flow.request.raw_content))


def test_request_is_retargeted_to_the_upstream_and_asks_for_identity(gateway: Ctx, listener: str) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    assert flow.request.url == f"{listener}/v1/messages"
    assert flow.request.headers["host"] == listener.removeprefix("http://")
    assert flow.request.headers["accept-encoding"] == "identity"
    assert flow.request.headers["accept"] == "text/event-stream"
    assert json.loads(flow.request.content)["model"] == "claude-sonnet-4-6"


@pytest.mark.parametrize(("dialect", "env", "header", "value"), [
    ("anthropic", "ANTHROPIC_API_KEY", "x-api-key", "k-anthropic-0123456789"),
    ("chat", "DEEPSEEK_API_KEY", "authorization", "Bearer k-chat-0123456789"),
    ("gemini", "GEMINI_API_KEY", "x-goog-api-key", "k-gemini-0123456789"),
    ("bedrock", "AWS_BEARER_TOKEN_BEDROCK", "authorization", "Bearer k-bedrock-0123456789"),
])
def test_client_credentials_never_reach_another_vendor_and_the_key_comes_from_the_env(
        gateway: Ctx, listener: str, monkeypatch: pytest.MonkeyPatch,
        dialect: str, env: str, header: str, value: str) -> None:
    addon, tctx = gateway
    monkeypatch.setenv(env, value.removeprefix("Bearer "))
    tctx.configure(addon, gateway_upstream=dialect, gateway_base_url=listener, gateway_key_env=env)
    flow = client_flow(headers=CODEX_HEADERS)
    run_request(addon, flow)
    assert flow.response is None, flow.response and flow.response.text
    headers = wire_headers(flow)
    assert headers[header] == value
    assert flow.request.headers[header] == "<redacted>"  # the flow never holds it
    assert CLIENT_KEY not in json.dumps(headers)
    for name in CODEX_HEADERS:
        assert name not in headers
    assert not [name for name in headers if name.startswith(("x-codex", "openai-", "chatgpt-"))]


@pytest.mark.parametrize("options", [
    {"gateway_upstream": "bedrock", "gateway_key_env": ""},  # every Bedrock request is signed
    {"gateway_upstream": "chat", "gateway_key_env": "DEEPSEEK_API_KEY"},
])
def test_credentials_over_plain_http_to_a_remote_host_are_refused_at_start_up(
        gateway: Ctx, options: dict[str, str]) -> None:
    addon, tctx = gateway
    with pytest.raises(exceptions.OptionsError, match="plain http"):
        tctx.configure(addon, gateway_base_url="http://upstream.example", **options)


def test_a_keyless_route_may_use_plain_http_to_a_remote_host(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_upstream="chat", gateway_base_url="http://vllm.example:8000/v1",
                   gateway_key_env="")
    assert addon.router.routes[0].key_env is None


def test_upstream_key_comes_from_the_variable_named_by_gateway_key_env(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, tctx = gateway
    monkeypatch.setenv("MY_PROXY_KEY", "k-from-my-variable-0123")
    tctx.configure(addon, gateway_key_env="MY_PROXY_KEY")
    flow = client_flow()
    run_request(addon, flow)
    assert wire_headers(flow)["x-api-key"] == "k-from-my-variable-0123"


def test_missing_upstream_key_is_refused_before_anything_is_sent(gateway: Ctx,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    addon, _ = gateway
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    flow = client_flow()
    url = flow.request.url
    run_request(addon, flow)
    assert flow.response is not None and flow.response.status_code == 400
    error = json.loads(flow.response.content or b"")["error"]
    assert error["code"] == "upstream_key_missing" and "$ANTHROPIC_API_KEY is not set" in error["message"]
    assert flow.request.url == url and "x-api-key" not in flow.request.headers  # never re-targeted
    assert "$ANTHROPIC_API_KEY is not set" in flow.metadata["gateway"]["refused"]


def test_responses_upstream_that_is_not_openai_gets_no_client_credentials(
        gateway: Ctx, listener: str, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, tctx = gateway
    monkeypatch.setenv("LOCAL_RESPONSES_KEY", "k-local-responses-0123")
    tctx.configure(addon, gateway_upstream="responses", gateway_base_url=listener + "/v1",
                   gateway_key_env="LOCAL_RESPONSES_KEY", gateway_model="")
    flow = client_flow(headers=CODEX_HEADERS)
    run_request(addon, flow)
    assert flow.request.url == f"{listener}/v1/responses"
    assert wire_headers(flow)["authorization"] == "Bearer k-local-responses-0123"
    for name in CODEX_HEADERS:
        assert name not in wire_headers(flow)


def test_openai_upstream_keeps_the_client_credentials_when_no_key_is_set(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, tctx = gateway
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-must-not-replace-it-0123")
    tctx.configure(addon, gateway_upstream="responses", gateway_base_url="", gateway_model="",
                   gateway_key_env="")
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": True,
                        "client_metadata": {"installation_id": "inst-42"}}, headers=CODEX_HEADERS)
    run_request(addon, flow)
    assert flow.request.url == CLIENT_URL
    assert wire_headers(flow)["authorization"] == f"Bearer {CLIENT_KEY}"
    assert wire_headers(flow)["chatgpt-account-id"] == "acct-1234"
    assert flow.request.headers["authorization"] == "<redacted>"
    assert b"inst-42" not in flow.request.content


def test_openai_upstream_sends_no_operator_key_for_a_client_that_sent_none(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """No open relay: an exported OPENAI_API_KEY is not the default credential of anyone."""
    addon, tctx = gateway
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-must-not-replace-it-0123")
    tctx.configure(addon, gateway_upstream="responses", gateway_base_url="", gateway_model="",
                   gateway_key_env="")
    flow = client_flow(headers={"authorization": ""})
    del flow.request.headers["authorization"]
    run_request(addon, flow)
    assert "authorization" not in wire_headers(flow)


def test_openai_upstream_with_a_named_key_sends_it_instead_of_the_clients(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, tctx = gateway
    monkeypatch.setenv("TEAM_OPENAI_KEY", "sk-team-key-0123456789")
    tctx.configure(addon, gateway_upstream="responses", gateway_base_url="", gateway_model="",
                   gateway_key_env="TEAM_OPENAI_KEY")
    flow = client_flow(headers=CODEX_HEADERS)
    run_request(addon, flow)
    wire = wire_headers(flow)
    assert wire["authorization"] == "Bearer sk-team-key-0123456789"
    assert "chatgpt-account-id" not in wire and "cookie" not in wire


def test_client_metadata_is_not_sent_upstream(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": True,
                        "client_metadata": {"installation_id": "inst-42"}})
    run_request(addon, flow)
    assert b"client_metadata" not in flow.request.content
    assert b"inst-42" not in flow.request.content


# -- answered by the proxy itself ------------------------------------------------------------

def test_refused_request_is_answered_400_in_responses_shape_and_never_sent(gateway: Ctx) -> None:
    addon, _ = gateway
    # a stored prompt template lives on OpenAI's platform: the translator refuses it
    flow = client_flow({"model": "gpt-5.5", "stream": True, "input": "hi", "prompt": {"id": "pmpt_1"}})
    run_request(addon, flow)
    assert flow.request.url == CLIENT_URL  # not re-targeted
    assert flow.response.status_code == 400
    error = flow.response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "prompt" in error["message"]
    assert flow.metadata["gateway"]["refused"]
    assert flow.comment.startswith("-> anthropic claude-sonnet-4-6 | refused:")
    assert flow.marked == ":warning:"
    finish(addon.response(flow))  # the hook that follows must leave the proxy's own answer alone
    assert flow.response.json()["error"] == error
    assert CLIENT_KEY not in flow.request.headers.get("authorization", "")


def test_body_that_is_not_json_is_answered_400(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow(b"{not json")
    run_request(addon, flow)
    assert flow.response.status_code == 400
    assert flow.response.json()["error"]["code"] == "invalid_json"


def test_translator_crash_is_answered_500_and_never_sent(gateway: Ctx,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    addon, _ = gateway

    def broken(*args: Any, **kwargs: Any) -> Translation:
        raise KeyError("boom")

    monkeypatch.setattr(translate, "translate_request", broken)
    flow = client_flow()
    run_request(addon, flow)
    assert flow.request.url == CLIENT_URL
    assert flow.response.status_code == 500
    assert flow.response.json()["error"]["type"] == "server_error"
    assert "KeyError" in flow.metadata["gateway"]["error"]


def test_request_to_an_unreachable_upstream_is_sent_without_probing_it(
        gateway: Ctx, dead_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No pre-flight connect in the request hook: the upstream leg finds out (docs/pools.md)."""
    addon, tctx = gateway
    tctx.configure(addon, gateway_base_url=dead_url)

    def no_connect(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the addon opened a connection itself")

    monkeypatch.setattr(asyncio, "open_connection", no_connect)
    flow = client_flow()
    run_request(addon, flow)
    assert flow.response is None
    assert flow.request.url == f"{dead_url}/v1/messages"


def test_request_nested_too_deep_for_the_json_parser_is_answered_400(gateway: Ctx) -> None:
    """json.loads raises RecursionError (not a ValueError) past about a thousand levels."""
    addon, _ = gateway
    flow = client_flow(b'{"model": "gpt-5.5", "input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    run_request(addon, flow)
    assert flow.response.status_code == 400
    assert flow.response.json()["error"]["code"] == "invalid_json"


def test_any_failure_in_the_request_hook_answers_instead_of_forwarding(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception escaping the hook would send the flow on as it stands (to OpenAI)."""
    addon, _ = gateway

    def broken(*args: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(Router, "route", broken)
    flow = client_flow()
    run_request(addon, flow)
    assert flow.response.status_code == 500
    assert "RuntimeError('boom')" in flow.response.json()["error"]["message"]
    assert flow.request.url == CLIENT_URL
    assert flow.request.headers["authorization"] == "<redacted>"


# -- what the user sees ------------------------------------------------------------------------

def test_translated_flow_has_metadata_comment_and_mark(gateway: Ctx, listener: str) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": True, "text": {"verbosity": "low"},
                        "tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}]})
    run_request(addon, flow)
    _answer(flow, 200, b"")
    _stream_through(addon, flow, [(FIXTURES / "text_after_tool_result.sse").read_bytes()])
    info = flow.metadata["gateway"]
    assert info["upstream"] == "anthropic"
    assert info["url"] == f"{listener}/v1/messages"
    assert (info["model"], info["client_model"]) == ("claude-sonnet-4-6", "gpt-5.5")
    assert (info["dropped"], info["cosmetic"]) == (["tools[0]", "text.verbosity"], ["text.verbosity"])
    assert flow.comment == "-> anthropic claude-sonnet-4-6 | dropped: tools[0] | cosmetic: text.verbosity"
    assert flow.marked == ":warning:"


def _codex_turn(addon: Chain, request: dict[str, Any]) -> http.HTTPFlow:
    flow = client_flow(request, headers=CODEX_HEADERS)
    run_request(addon, flow)
    _answer(flow, 200, b"")
    _stream_through(addon, flow, [(FIXTURES / "text_after_tool_result.sse").read_bytes()])
    return flow


def test_codex_request_whose_drops_are_all_cosmetic_is_not_marked(gateway: Ctx) -> None:
    addon, _ = gateway
    # Codex's lite request: `text.verbosity` is all Claude cannot take
    lite = json.loads((DATA / "codex" / "request_lite_functions_namespace.json").read_text())
    flow = _codex_turn(addon, lite)
    assert flow.metadata["gateway"]["dropped"] == ["text.verbosity"]
    assert flow.comment == "-> anthropic claude-sonnet-4-6 | cosmetic: text.verbosity"
    assert not flow.marked


def test_codex_request_with_a_lossy_drop_is_marked(gateway: Ctx) -> None:
    addon, _ = gateway
    # the classic request declares a cached-only web search, which Claude cannot run
    flow = _codex_turn(addon, json.loads((DATA / "codex" / "request_classic_gpt55.json").read_text()))
    assert flow.comment.startswith("-> anthropic claude-sonnet-4-6 | dropped: tools[9] | cosmetic: ")
    assert flow.marked == ":warning:"


def test_flow_that_lost_nothing_is_not_marked(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"")
    _stream_through(addon, flow, [(FIXTURES / "text_after_tool_result.sse").read_bytes()])
    assert flow.comment == "-> anthropic claude-sonnet-4-6"
    assert not flow.marked


_OVERLOADED = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
               b'"type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[],'
               b'"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":0}}}\n\n'
               b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
               b'"message":"Overloaded"}}\n\n')


@pytest.mark.parametrize("chunks", [
    pytest.param([_OVERLOADED], id="upstream error event mid-stream"),
    pytest.param([_OVERLOADED.split(b"event: error")[0]], id="upstream stream ended early"),
])
def test_a_stream_that_ended_in_response_failed_is_a_failed_marked_flow(gateway: Ctx,
                                                                       chunks: list[bytes]) -> None:
    """A 200 whose answer the client read as `response.failed` is a failure in mitmweb too
    (docs/mitmproxy.md "Where flows show information"): the error in the metadata and the
    comment, and the mark."""
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"")
    sent = sse_events(b"".join(_stream_through(addon, flow, chunks)))
    assert sent[-1]["type"] == "response.failed"
    message = sent[-1]["response"]["error"]["message"]
    assert message in flow.metadata["gateway"]["error"]
    assert f"error: {flow.metadata['gateway']['error']}" in flow.comment
    assert flow.marked


def test_a_replayed_stream_that_failed_is_a_failed_marked_flow(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, _OVERLOADED, {"content-type": "text/event-stream"})
    flow.is_replay = "response"
    addon.responseheaders(flow)
    finish(addon.response(flow))
    assert flow.metadata["gateway"].get("error")
    assert flow.marked


def test_usage_is_recorded_in_the_metadata(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"")
    _stream_through(addon, flow, [(FIXTURES / "text_after_tool_result.sse").read_bytes()])
    usage = flow.metadata["gateway"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (678, 82)


def test_usage_of_a_stream_comes_from_the_translator_even_when_the_saved_copy_was_cut(gateway: Ctx) -> None:
    """Read back from what the client got, the usage needs the terminal event, which a saved
    copy cut at `gateway_max_kept_bytes` lacks (and the parse of a long answer's terminal event
    held the event loop for as long)."""
    addon, tctx = gateway
    tctx.configure(addon, gateway_max_kept_bytes=1500)
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"")
    _stream_through(addon, flow, [(FIXTURES / "text_after_tool_result.sse").read_bytes()])
    assert b"response.completed" not in (flow.response.content or b"")  # not in the saved copy
    usage = flow.metadata["gateway"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (678, 82)


def test_compaction_request_goes_to_the_summarizer_and_the_flow_says_it_was_a_compaction(
        gateway: Ctx, listener: str) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_compaction_model="claude-haiku-4-5")
    flow = client_flow({"model": "gpt-5.5", "stream": True,
                        "input": [{"type": "message", "role": "user", "content": "hi"},
                                  {"type": "compaction_trigger"}]})
    run_request(addon, flow)
    sent = json.loads(flow.request.content)
    assert sent["model"] == "claude-haiku-4-5" and "tools" not in sent
    assert flow.request.url == f"{listener}/v1/messages"
    _answer(flow, 200, b"")
    out = b"".join(_stream_through(addon, flow, [(FIXTURES / "text_after_tool_result.sse").read_bytes()]))
    assert [e["item"]["type"] for e in sse_events(out) if e["type"] == "response.output_item.done"] == [
        "compaction"]
    info = flow.metadata["gateway"]
    assert info["kind"] == "compaction"
    assert flow.comment.startswith("-> anthropic claude-haiku-4-5 compaction")
    assert flow.metadata["gateway.translation"]["compaction"] is True


def test_an_ordinary_turn_keeps_the_routes_model_when_a_compaction_model_is_set(gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_compaction_model="claude-haiku-4-5")
    flow = client_flow()
    run_request(addon, flow)
    assert json.loads(flow.request.content)["model"] == "claude-sonnet-4-6"
    assert "kind" not in flow.metadata["gateway"]


def test_saved_flow_keeps_metadata_both_bodies_and_no_key(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    upstream = (FIXTURES / "text_after_tool_result.sse").read_bytes()
    _answer(flow, 200, b"")
    _stream_through(addon, flow, [upstream])
    buffer = io.BytesIO()
    mio.FlowWriter(buffer).add(flow)
    assert UPSTREAM_KEY.encode() not in buffer.getvalue()
    assert CLIENT_KEY.encode() not in buffer.getvalue()
    (loaded,) = mio.FlowReader(io.BytesIO(buffer.getvalue())).stream()
    assert loaded.metadata["gateway"]["upstream"] == "anthropic"
    assert loaded.metadata["gateway.upstream_response"] == upstream
    assert b"response.completed" in loaded.response.content
    assert loaded.comment == flow.comment


# -- streaming -------------------------------------------------------------------------------

def test_stream_callable_sends_each_event_once_complete_and_nothing_as_a_list(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"")
    addon.responseheaders(flow)
    hook = flow.response.stream
    raw = (FIXTURES / "text_after_tool_result.sse").read_bytes()
    first_end = raw.index(b"\n\n") + 2
    assert hook(raw[:10]) == []  # half an event: nothing yet, and not b""
    out = hook(raw[10:first_end])
    assert isinstance(out, bytes) and out.startswith(b"event: response.created\n")
    rest = hook(raw[first_end:])
    tail = hook(b"")
    assert sse_events(out + (rest if isinstance(rest, bytes) else b"") + (
        tail if isinstance(tail, bytes) else b""))[-1]["type"] == "response.completed"


def test_stale_content_length_is_dropped_when_streaming(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"", {"content-type": "text/event-stream", "content-length": "1839",
                             "content-encoding": "identity"})
    addon.responseheaders(flow)
    assert isinstance(flow.response.stream, StreamHook)
    assert "content-length" not in flow.response.headers
    assert "content-encoding" not in flow.response.headers


def test_saved_streamed_flow_body_is_what_the_client_got(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"")
    raw = (FIXTURES / "text_after_tool_result.sse").read_bytes()
    sent = _stream_through(addon, flow, [raw[i:i + 100] for i in range(0, len(raw), 100)])
    assert flow.response.content == b"".join(sent)
    assert flow.response.stream is False


# -- never twice ---------------------------------------------------------------------------------

def test_response_hook_called_twice_translates_once(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": False})
    run_request(addon, flow)
    _answer(flow, 200, json.dumps({"type": "message", "id": "msg_1", "role": "assistant", "content": [
        {"type": "text", "text": "hello"}], "stop_reason": "end_turn"}).encode(),
        {"content-type": "application/json"})
    finish(addon.response(flow))
    once = flow.response.content
    finish(addon.response(flow))
    assert flow.response.content == once


def test_flow_loaded_again_with_r_is_not_translated_again(gateway: Ctx) -> None:
    addon, tctx = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"")
    _stream_through(addon, flow, [(FIXTURES / "text_after_tool_result.sse").read_bytes()])
    buffer = io.BytesIO()
    mio.FlowWriter(buffer).add(flow)
    (loaded,) = mio.FlowReader(io.BytesIO(buffer.getvalue())).stream()
    before = _snapshot(loaded)
    asyncio.run(tctx.cycle(addon, loaded))  # what `mitmdump -r` does: every hook, flow.live False
    assert _snapshot(loaded) == before
    assert loaded.response.content == flow.response.content


# -- whole bodies ------------------------------------------------------------------------------

def test_server_replayed_stream_is_translated_whole_in_response(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, (FIXTURES / "text_after_tool_result.sse").read_bytes())
    flow.is_replay = "response"
    addon.responseheaders(flow)
    assert flow.response.stream is False  # no stream callable for replayed answers
    finish(addon.response(flow))
    events = sse_events(flow.response.content)
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "response.completed"
    assert flow.response.headers["content-type"] == "text/event-stream"


def test_non_streamed_answer_becomes_a_response_object(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": False})
    run_request(addon, flow)
    assert flow.request.headers["accept"] == "application/json"
    _answer(flow, 200, json.dumps({"type": "message", "id": "msg_1", "role": "assistant", "content": [
        {"type": "text", "text": "hello"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 1}}).encode(), {"content-type": "application/json"})
    addon.responseheaders(flow)
    finish(addon.response(flow))
    body = flow.response.json()
    assert (body["object"], body["status"], body["model"]) == ("response", "completed", "gpt-5.5")
    assert body["output"][0]["content"][0]["text"] == "hello"
    assert flow.metadata["gateway"]["usage"]["input_tokens"] == 3


def test_a_non_streamed_answer_keeps_non_ascii_text_as_utf8_like_the_stream_does(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": False})
    run_request(addon, flow)
    _answer(flow, 200, json.dumps({"type": "message", "id": "msg_1", "role": "assistant", "content": [
        {"type": "text", "text": "déjà vu ✓"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 1}}).encode(), {"content-type": "application/json"})
    addon.responseheaders(flow)
    finish(addon.response(flow))
    assert '"déjà vu ✓"'.encode() in flow.response.content
    assert b"\\u" not in flow.response.content


# -- upstream errors -------------------------------------------------------------------------

def _error(addon: Chain, status: int, body: dict[str, Any],
           headers: dict[str, str] | None = None) -> http.Response:
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, status, json.dumps(body).encode(), {"content-type": "application/json", **(headers or {})})
    addon.responseheaders(flow)
    assert flow.response.stream is False  # errors are buffered and translated whole
    finish(addon.response(flow))
    assert flow.metadata["gateway.upstream_response"] == json.dumps(body).encode()
    assert flow.marked == ":warning:"
    return flow.response


def test_upstream_429_keeps_status_retry_after_and_message(gateway: Ctx) -> None:
    addon, _ = gateway
    response = _error(addon, 429, {"type": "error", "error": {"type": "rate_limit_error",
                                                               "message": "Number of requests exceeded"}},
                      {"retry-after": "17"})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "17"
    error = response.json()["error"]
    assert (error["type"], error["code"]) == ("rate_limit_error", "rate_limit_exceeded")
    assert "Number of requests exceeded" in error["message"]


def test_an_upstream_error_message_reaches_the_client_as_utf8_text(gateway: Ctx) -> None:
    addon, _ = gateway
    response = _error(addon, 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                               "message": "paramètre « model » inconnu"}})
    assert "paramètre « model » inconnu".encode() in response.content
    assert "paramètre « model » inconnu" in response.json()["error"]["message"]


def test_upstream_500_becomes_a_responses_shaped_server_error(gateway: Ctx) -> None:
    addon, _ = gateway
    response = _error(addon, 500, {"type": "error", "error": {"type": "api_error", "message": "Internal"}})
    assert response.status_code == 500
    error = response.json()["error"]
    assert (error["type"], error["code"]) == ("server_error", "server_error")
    assert "Internal" in error["message"]


def test_upstream_context_overflow_becomes_context_length_exceeded(gateway: Ctx) -> None:
    addon, _ = gateway
    response = _error(addon, 400, {"type": "error", "error": {
        "type": "invalid_request_error", "message": "prompt is too long: 215000 tokens > 200000 maximum"}})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "context_length_exceeded"


def test_huge_upstream_error_message_is_cut_for_the_client(gateway: Ctx) -> None:
    addon, _ = gateway
    response = _error(addon, 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                               "message": "too long " * 200_000}})
    message = response.json()["error"]["message"]
    assert len(response.content) < 8 * 1024
    assert message.endswith("more characters)") and "too long too long" in message


def test_answer_the_gateway_cannot_translate_is_a_502_in_responses_shape(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, _ = gateway

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(upstream_answer, "translate_response", broken)
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": False})
    run_request(addon, flow)
    _answer(flow, 200, b"{}", {"content-type": "application/json"})
    finish(addon.response(flow))
    assert flow.response.status_code == 502
    assert flow.response.json()["error"]["code"] == "upstream_protocol_error"
    assert flow.request.headers["x-api-key"] == "<redacted>"


def test_connection_error_is_recorded_and_keys_redacted(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    from mitmproxy import flow as mflow

    flow.error = mflow.Error("Client disconnected.")
    addon.error(flow)
    assert flow.metadata["gateway"]["error"] == "Client disconnected."
    assert flow.comment == "-> anthropic claude-sonnet-4-6 | error: Client disconnected."
    assert flow.request.headers["x-api-key"] == "<redacted>"


def test_client_leaving_mid_stream_keeps_both_bodies_so_far(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"")
    addon.responseheaders(flow)
    raw = (FIXTURES / "text_after_tool_result.sse").read_bytes()
    sent = flow.response.stream(raw[:700])
    from mitmproxy import flow as mflow

    flow.error = mflow.Error("Client disconnected.")
    addon.error(flow)
    assert flow.metadata["gateway.upstream_response"] == raw[:700]
    assert flow.response.content == sent
    assert flow.comment.endswith("| error: Client disconnected.")


# -- Bedrock: region, accept, event stream ---------------------------------------------------------

BEDROCK_FIXTURES = (DATA / "bedrock")


@pytest.fixture
def aws_keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """SigV4 keys from the environment only: no bearer key, no profile files, a fresh session."""
    from translators.bedrock.credentials import session as default_session

    for name in ("AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTESTHOOKS0000001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hooks-test-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    default_session.cache_clear()
    yield
    default_session.cache_clear()


def _bedrock(tctx: taddons.context, addon: Chain, listener: str, **options: str) -> None:
    tctx.configure(addon, gateway_upstream="bedrock", gateway_base_url=listener,
                   gateway_model="us.anthropic.claude-sonnet-4-6", gateway_key_env="", **options)


def test_bedrock_request_is_signed_for_the_region_option(gateway: Ctx, listener: str, aws_keys: None) -> None:
    addon, tctx = gateway
    _bedrock(tctx, addon, listener, gateway_aws_region="us-west-2")
    flow = client_flow()
    run_request(addon, flow)
    assert flow.response is None
    assert "/us-west-2/bedrock/aws4_request" in wire_headers(flow)["authorization"]


def test_bedrock_request_is_signed_for_the_environments_region_without_the_option(
        gateway: Ctx, listener: str, aws_keys: None) -> None:
    addon, tctx = gateway
    _bedrock(tctx, addon, listener)
    flow = client_flow()
    run_request(addon, flow)
    assert "/eu-central-1/bedrock/aws4_request" in wire_headers(flow)["authorization"]


def test_bedrock_stream_asks_for_an_event_stream(gateway: Ctx, listener: str, aws_keys: None) -> None:
    addon, tctx = gateway
    _bedrock(tctx, addon, listener)
    flow = client_flow()
    run_request(addon, flow)
    assert flow.request.path.endswith("/converse-stream")
    assert flow.request.headers["accept"] == "application/vnd.amazon.eventstream"


def test_bedrock_whole_answer_asks_for_json(gateway: Ctx, listener: str, aws_keys: None) -> None:
    addon, tctx = gateway
    _bedrock(tctx, addon, listener)
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": False})
    run_request(addon, flow)
    assert flow.request.path.endswith("/converse")
    assert flow.request.headers["accept"] == "application/json"


def test_bedrock_event_stream_answer_is_streamed_as_responses_sse(gateway: Ctx, listener: str,
                                                                  aws_keys: None) -> None:
    addon, tctx = gateway
    _bedrock(tctx, addon, listener)
    flow = client_flow()
    run_request(addon, flow)
    _answer(flow, 200, b"", {"content-type": "application/vnd.amazon.eventstream"})
    raw = (BEDROCK_FIXTURES / "converse_stream_text.eventstream").read_bytes()
    sent = _stream_through(addon, flow, [raw[i:i + 7] for i in range(0, len(raw), 7)])
    assert flow.response.headers["content-type"] == "text/event-stream"
    events = sse_events(b"".join(sent))
    assert (events[0]["type"], events[-1]["type"]) == ("response.created", "response.completed")
    assert flow.metadata["gateway.upstream_response"] == raw
