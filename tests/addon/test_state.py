"""addon/state.py through the gateway's hooks: what is recorded when, what is never written, and
which paths are state endpoints."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from pathlib import Path

import pytest
from mitmproxy import http
from mitmproxy.flow import Error
from mitmproxy.test import taddons

from addon.gateway import Gateway
from addon.routing import DEFAULT_MATCH
from addon.state import State
from addon.streaming import StreamHook
from tests.addon.conftest import CLIENT_KEY, UPSTREAM_KEY, client_flow, finish, run_request, sse_events
from tests.data import DATA

Ctx = tuple[Gateway, taddons.context]
UPSTREAM = (DATA / "anthropic" / "text_after_tool_result.sse").read_bytes()


def _store_path(ctx: Ctx) -> Path:
    return Path(ctx[1].options.gateway_store_path)


def _events(data: bytes) -> list[bytes]:
    return [block + b"\n\n" for block in data.split(b"\n\n") if block.strip()]


@pytest.mark.parametrize(("host", "path", "rest"), [
    ("api.openai.com", "/v1/responses/compact", "responses/compact"),
    ("api.openai.com", "/v1/responses/resp_1?include=x", "responses/resp_1"),
    ("api.openai.com", "/v1/responses/resp_1/input_items", "responses/resp_1/input_items"),
    ("api.openai.com", "/v1/conversations", "conversations"),
    ("api.openai.com", "/v1/conversations/conv_1/items/msg_2", "conversations/conv_1/items/msg_2"),
    ("chatgpt.com", "/backend-api/codex/responses/compact", "responses/compact"),
    ("api.openai.com", "/v1/responses", None),
    ("api.openai.com", "/v1/chat/completions", None),
    ("example.com", "/v1/conversations", None),
])
def test_state_endpoints_sit_next_to_the_intercepted_responses_paths(host: str, path: str,
                                                                      rest: str | None) -> None:
    assert State.endpoint(DEFAULT_MATCH, host, path) == rest


def test_a_store_false_turn_never_opens_the_store(gateway: Ctx) -> None:
    """Codex's path: no state read, none written, no store file."""
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": True, "store": False})
    run_request(addon, flow)
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    addon.responseheaders(flow)
    hook = flow.response.stream
    for chunk in [*_events(UPSTREAM), b""]:
        hook(chunk)
    addon.response(flow)
    assert sse_events(flow.response.content)[-1]["type"] == "response.completed"
    assert "gateway.state" not in flow.metadata
    assert not _store_path(gateway).exists()


def test_a_streamed_turn_is_found_by_a_request_sent_as_its_terminal_event_leaves(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client may send its next request the moment it reads `response.completed`; the turn
    is written in the store's own thread meanwhile, never on the event loop."""
    addon, _ = gateway
    writers: list[bool] = []
    store = addon.state.store()
    put = store.put_response
    monkeypatch.setattr(store, "put_response", lambda record: (
        writers.append(threading.current_thread() is threading.main_thread()), put(record))[-1])
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": True})
    run_request(addon, flow)
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    addon.responseheaders(flow)
    hook = flow.response.stream
    assert isinstance(hook, StreamHook)
    following = None
    for chunk in [*_events(UPSTREAM), b""]:
        out = hook(chunk)
        sent = out if isinstance(out, bytes) else b"".join(out)
        if b"response.completed" in sent:
            response_id = sse_events(sent)[-1]["response"]["id"]
            following = client_flow({"model": "gpt-5.5", "input": "and then?",
                                     "previous_response_id": response_id})
            run_request(addon, following)
    addon.response(flow)
    assert following is not None and following.response is None
    messages = json.loads(following.request.content or b"")["messages"]
    assert messages[0] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert messages[1]["role"] == "assistant" and messages[-1]["content"][-1]["text"] == "and then?"
    assert writers == [False]


def test_the_store_file_holds_no_key(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "stream": True})
    run_request(addon, flow)
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    addon.responseheaders(flow)
    for chunk in [*_events(UPSTREAM), b""]:
        flow.response.stream(chunk)
    addon.response(flow)
    addon.state.close()
    raw = b"".join(p.read_bytes() for p in _store_path(gateway).parent.iterdir())
    assert b"gpt-5.5" in raw or b"claude-sonnet-4-6" in raw  # the turn is there
    assert CLIENT_KEY.encode() not in raw and UPSTREAM_KEY.encode() not in raw


def test_an_unknown_previous_response_id_is_answered_and_never_sent(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", "previous_response_id": "resp_gone"})
    run_request(addon, flow)
    assert flow.response.status_code == 400
    assert flow.response.json()["error"] == {
        "type": "invalid_request_error", "code": "previous_response_not_found",
        "message": "Previous response with id 'resp_gone' not found.", "param": "previous_response_id"}
    assert flow.request.host == "api.openai.com"


def test_store_endpoints_answer_404_in_responses_shape_for_unknown_ids(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = client_flow(url="https://api.openai.com/v1/responses/resp_gone", method="GET")
    asyncio.run(addon.request(flow))
    assert flow.response.status_code == 404
    assert json.loads(flow.response.content)["error"]["message"] == "Response with id 'resp_gone' not found."


def test_a_long_stored_input_pauses_the_collector_until_its_turn_is_over(gateway: Ctx) -> None:
    """A collector pass over a long history held for the store would hold the interpreter lock
    on the event loop for 100 ms or more; the pause ends with the flow, whatever ends it."""
    addon, _ = gateway
    items = [{"type": "message", "role": "user", "content": f"turn {i}"} for i in range(5000)]
    assert gc.isenabled()
    answered = client_flow({"model": "gpt-5.5", "input": items})
    run_request(addon, answered)
    assert not gc.isenabled()
    cut = client_flow({"model": "gpt-5.5", "input": items})
    run_request(addon, cut)
    answered.response = http.Response.make(200, b"{}", {"content-type": "application/json"})
    finish(addon.response(answered))
    assert not gc.isenabled()  # the other flow still holds its input
    cut.error = Error("client disconnected")
    addon.error(cut)
    assert gc.isenabled()
