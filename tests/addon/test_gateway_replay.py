"""Replaying a saved gateway flow (mitmweb's Replay, `mitmdump -C saved.flow`): the flow is
translated again from the client's request with the current options, never sent as saved."""

from __future__ import annotations

import io
import json

import pytest
from mitmproxy import http
from mitmproxy import io as mio
from mitmproxy.test import taddons

from addon.serve.streaming import StreamHook
from tests.addon.conftest import CLIENT_URL, Chain, client_flow, finish, run_request, sse_events, wire_headers
from tests.data import DATA

Ctx = tuple[Chain, taddons.context]
ANTHROPIC = (DATA / "anthropic" / "text_after_tool_result.sse")
NEW_KEY = "sk-ant-new-upstream-key-0123456789"


def _served(addon: Chain, flow: http.HTTPFlow, upstream: bytes) -> None:
    """The upstream answers a streamed request; the stream callable runs as in the proxy core."""
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    addon.responseheaders(flow)
    hook = flow.response.stream
    assert isinstance(hook, StreamHook)
    hook(upstream)
    hook(b"")
    finish(addon.response(flow))


def _saved(addon: Chain, body: dict | None = None) -> http.HTTPFlow:
    """A translated, answered flow, written with -w and read back."""
    flow = client_flow(body)
    run_request(addon, flow)
    if flow.response is None:
        _served(addon, flow, ANTHROPIC.read_bytes())
    buffer = io.BytesIO()
    mio.FlowWriter(buffer).add(flow)
    (loaded,) = mio.FlowReader(io.BytesIO(buffer.getvalue())).stream()
    assert isinstance(loaded, http.HTTPFlow)
    return loaded


def _replay(addon: Chain, flow: http.HTTPFlow) -> None:
    """What mitmproxy's ClientPlayback.start_replay and the HTTP layer do before `request`."""
    flow.backup()
    flow.is_replay = "request"
    flow.response = None
    flow.error = None
    flow.live = True
    run_request(addon, flow)


def test_saved_flow_request_is_stale_and_redacted(gateway: Ctx) -> None:
    """Why a replay cannot send the saved request: its key is a placeholder."""
    addon, _ = gateway
    assert _saved(addon).request.headers["x-api-key"] == "<redacted>"


def test_replay_sends_the_current_key_and_model(gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    addon, tctx = gateway
    flow = _saved(addon)
    monkeypatch.setenv("ANTHROPIC_API_KEY", NEW_KEY)
    tctx.configure(addon, gateway_model="claude-haiku-4-5")
    _replay(addon, flow)
    assert flow.response is None  # it goes upstream
    assert wire_headers(flow)["x-api-key"] == NEW_KEY
    assert json.loads(flow.request.content)["model"] == "claude-haiku-4-5"
    assert flow.metadata["gateway"]["model"] == "claude-haiku-4-5"
    assert "replayed: translated again from the saved client request" in flow.metadata["gateway"]["notes"]


def test_replay_goes_to_the_current_upstream_in_its_dialect(gateway: Ctx, listener: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    addon, tctx = gateway
    flow = _saved(addon)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-0123456789")
    tctx.configure(addon, gateway_upstream="chat", gateway_base_url=f"{listener}/v1",
                   gateway_model="deepseek-chat", gateway_key_env="DEEPSEEK_API_KEY")
    _replay(addon, flow)
    assert flow.request.url == f"{listener}/v1/chat/completions"
    assert wire_headers(flow)["authorization"] == "Bearer sk-deepseek-0123456789"
    assert "x-api-key" not in wire_headers(flow)
    assert json.loads(flow.request.content)["messages"] == [{"role": "user", "content": "hi"}]


def test_replay_forgets_the_old_answer_and_translates_the_new_one(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = _saved(addon)
    _replay(addon, flow)
    assert "gateway.upstream_response" not in flow.metadata and "gateway.done" not in flow.metadata
    _served(addon, flow, ANTHROPIC.read_bytes())
    events = sse_events(flow.response.content)
    assert (events[0]["type"], events[-1]["type"]) == ("response.created", "response.completed")
    assert flow.metadata["gateway.upstream_response"] == ANTHROPIC.read_bytes()
    assert flow.request.headers["x-api-key"] == "<redacted>"  # redacted again for the saved file


def test_replay_of_a_request_that_was_refused_is_translated_again(gateway: Ctx) -> None:
    """A refused flow still holds the client's own request (never re-targeted)."""
    addon, _ = gateway
    flow = _saved(addon, {"model": "gpt-5.5", "stream": True, "input": "hi", "prompt": {"id": "pmpt_1"}})
    assert flow.response.status_code == 400 and flow.request.url == CLIENT_URL
    _replay(addon, flow)
    assert flow.response.status_code == 400
    assert flow.metadata["gateway"]["refused"]


def test_replay_the_current_options_do_not_route_is_answered_not_sent(gateway: Ctx) -> None:
    addon, tctx = gateway
    flow = _saved(addon)
    tctx.configure(addon, gateway_model="o3*=claude-haiku-4-5")
    _replay(addon, flow)
    assert flow.response.status_code == 400
    assert flow.response.json()["error"]["code"] == "replay_failed"
    assert "no gateway route for model 'gpt-5.5'" in flow.comment


def test_replay_never_sends_a_redacted_placeholder(gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """To OpenAI itself the client's own credentials would go along; the saved flow lost them."""
    addon, tctx = gateway
    tctx.configure(addon, gateway_upstream="responses", gateway_base_url="", gateway_model="",
                   gateway_key_env="")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    flow = client_flow()
    run_request(addon, flow)
    flow.response = http.Response.make(200, b"{}", {"content-type": "application/json"})
    finish(addon.response(flow))
    assert flow.request.headers["authorization"] == "<redacted>"
    _replay(addon, flow)
    assert "<redacted>" not in wire_headers(flow).values()


def test_revert_after_a_replay_brings_back_the_saved_flow(gateway: Ctx) -> None:
    """mitmweb's Revert button."""
    addon, tctx = gateway
    flow = _saved(addon)
    saved_content = flow.response.content
    tctx.configure(addon, gateway_model="claude-haiku-4-5")
    _replay(addon, flow)
    flow.revert()
    assert json.loads(flow.request.content)["model"] == "claude-sonnet-4-6"
    assert flow.response.content == saved_content


def test_a_saved_replay_loaded_again_is_not_translated(gateway: Ctx) -> None:
    """`is_replay` is saved with the flow; `mitmdump -r` runs the hooks with flow.live False."""
    addon, _ = gateway
    flow = _saved(addon)
    flow.is_replay = "request"
    before = flow.get_state()
    run_request(addon, flow)
    assert flow.get_state() == before
