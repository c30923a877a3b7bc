"""addon/state/turns.py through the gateway's hooks: what is recorded when, what is never written, and
which paths are state endpoints."""

from __future__ import annotations

import json
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.net import encoding
from mitmproxy.test import taddons

from addon.routes.routing import DEFAULT_MATCH
from addon.serve.streaming import StreamHook
from addon.state import turns as state_module
from addon.state.rest import endpoint
from addon.state.store import Conversation
from addon.state.stored_turn import StoredTurn
from addon.work import offload
from tests.addon.conftest import CLIENT_KEY, UPSTREAM_KEY, Chain, client_flow, finish, run_request, sse_events
from tests.data import DATA
from tests.support.wait import until

Ctx = tuple[Chain, taddons.context]
UPSTREAM = (DATA / "anthropic" / "text_after_tool_result.sse").read_bytes()


def _store_path(ctx: Ctx) -> Path:
    return Path(ctx[1].options.gateway_store_path)


def _turn(addon: Chain, flow: http.HTTPFlow) -> StoredTurn:
    """What the flow's answer will record in the store (its context, addon/serve/flow.py)."""
    fc = addon.flows.get(flow)
    assert fc is not None and fc.turn is not None
    return fc.turn


def _events(data: bytes) -> list[bytes]:
    return [block + b"\n\n" for block in data.split(b"\n\n") if block.strip()]


def _streamed(addon: Chain, body: dict[str, Any]) -> http.HTTPFlow:
    """A turn through the hooks, its upstream stream (`UPSTREAM`) fed whole to the stream
    callable; the `response` hook is left to the test."""
    flow = client_flow(body)
    run_request(addon, flow)
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    addon.responseheaders(flow)
    for chunk in [*_events(UPSTREAM), b""]:
        flow.response.stream(chunk)
    return flow


def _answered_whole(addon: Chain, flow: http.HTTPFlow, text: str) -> str:
    """The upstream's whole (non-streamed) Anthropic answer `text` through the response hooks,
    run to their end; the id of the Responses object the client got."""
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
              "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
              "usage": {"input_tokens": 9, "output_tokens": 3}}
    flow.response = http.Response.make(200, json.dumps(answer).encode(), {"content-type": "application/json"})
    addon.responseheaders(flow)
    finish(addon.response(flow))
    return json.loads(flow.response.content)["id"]


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
    assert endpoint(DEFAULT_MATCH, host, path) == rest


def test_a_store_false_turn_never_opens_the_store(gateway: Ctx) -> None:
    """Codex's path: no state read, none written, no store file."""
    addon, _ = gateway
    flow = _streamed(addon, {"model": "gpt-5.5", "input": "hi", "stream": True, "store": False})
    fc = addon.flows.get(flow)
    assert fc is not None and fc.turn is None  # nothing for the answer to record
    finish(addon.response(flow))
    assert sse_events(flow.response.content)[-1]["type"] == "response.completed"
    assert not _store_path(gateway).exists()


def test_a_streamed_turn_is_found_by_a_request_sent_as_its_terminal_event_leaves(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client may send its next request the moment it reads `response.completed`; the turn
    is written in the store's own thread meanwhile, never on the event loop."""
    addon, _ = gateway
    writers: list[bool] = []
    store = addon.storage.store()
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
    finish(addon.response(flow))
    assert following is not None and following.response is None
    messages = json.loads(following.request.content or b"")["messages"]
    # the turn the stored answer followed: where the previous request ended, a cache breakpoint
    # (docs/anthropic.md "Prompt caching")
    assert messages[0] == {"role": "user", "content": [{"type": "text", "text": "hi",
                                                        "cache_control": {"type": "ephemeral"}}]}
    assert messages[1]["role"] == "assistant" and messages[-1]["content"][-1]["text"] == "and then?"
    assert writers == [False]


def test_an_answer_ends_once_its_turn_is_written_and_a_hung_write_is_waited_for_a_bounded_time(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """The response hook (after which mitmproxy ends the client's body) waits for the turn's
    write; a write that hangs holds the answer `WRITE_WAIT` at most, and the flow says so."""
    addon, _ = gateway
    monkeypatch.setattr(state_module, "WRITE_WAIT", 0.2)
    store = addon.storage.store()
    put, hung, written = store.put_response, threading.Event(), threading.Event()
    monkeypatch.setattr(store, "put_response", lambda record: (hung.wait(60), put(record), written.set())[1])
    flow = _streamed(addon, {"model": "gpt-5.5", "input": "hi", "stream": True})
    ending = addon.response(flow)
    assert ending is not None  # the hook has a write to wait for
    finish(ending)
    assert not written.is_set()  # the answer ended while the write still hung
    assert any("still being written after 0.2 s" in n for n in flow.metadata["gateway"]["notes"])
    assert "notes: 1" in flow.comment  # described again once the wait was over
    hung.set()
    addon.storage.close()  # the write goes on and lands
    response_id = sse_events(flow.response.content)[-1]["response"]["id"]
    assert addon.storage.store().get_response(response_id) is not None


def test_a_whole_answer_is_sent_once_its_turn_is_written(
        gateway: Ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-streamed answer goes to the client after the response hook, which waits for the
    write: a slow write (held until the hook is waiting) is waited for whole, and the flow has
    nothing to say."""
    addon, _ = gateway
    store = addon.storage.store()
    put, release, order = store.put_response, threading.Event(), []

    def slow_put(record: Any) -> Any:
        order.append("write started")
        release.wait(60)
        written = put(record)
        order.append("written")
        return written

    def releaser() -> None:
        until(lambda: "write started" in order, "the turn's write to start")
        order.append("released")
        release.set()

    monkeypatch.setattr(store, "put_response", slow_put)
    flow = client_flow({"model": "gpt-5.5", "input": "hi"})
    run_request(addon, flow)
    threading.Thread(target=releaser, daemon=True).start()
    response_id = _answered_whole(addon, flow, "hello")
    order.append("answered")
    assert order == ["write started", "released", "written", "answered"]
    monkeypatch.setattr(store, "put_response", put)
    assert store.get_response(response_id) is not None  # there before the hook returned
    assert flow.metadata["gateway"]["notes"] == []


def test_the_store_file_holds_no_key(gateway: Ctx) -> None:
    addon, _ = gateway
    flow = _streamed(addon, {"model": "gpt-5.5", "input": "hi", "stream": True})
    finish(addon.response(flow))
    addon.storage.close()
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
    run_request(addon, flow)
    assert flow.response.status_code == 404
    assert json.loads(flow.response.content)["error"]["message"] == "Response with id 'resp_gone' not found."


def test_a_long_input_is_stored_from_the_workers_json_and_continued_like_a_short_one(gateway: Ctx) -> None:
    """A request past `offload.INLINE_BYTES` is read, expanded and translated in a worker process,
    and the proxy never holds its items as objects (docs/design.md "Limits"): the turn is stored
    from the worker's JSON, and the next turn reads it back as any other."""
    addon, _ = gateway
    items = [{"type": "message", "role": "user", "content": f"turn {i} " + "x" * 40} for i in range(5000)]
    assert len(json.dumps(items)) >= offload.INLINE_BYTES
    flow = client_flow({"model": "gpt-5.5", "input": items})
    run_request(addon, flow)
    assert _turn(addon, flow).input_count == 5000
    sent = json.loads(flow.request.content or b"")["messages"]  # one user turn of 5000 parts
    assert [len(m["content"]) for m in sent] == [5000]
    response_id = _answered_whole(addon, flow, "read them all")
    addon.storage.close()  # the queued write is done
    following = client_flow({"model": "gpt-5.5", "input": "and then?", "previous_response_id": response_id})
    run_request(addon, following)
    messages = json.loads(following.request.content or b"")["messages"]
    assert messages[0]["content"][0]["text"] == "turn 0 " + "x" * 40
    assert messages[-1]["content"][-1]["text"] == "and then?"
    listed = client_flow(url=f"https://api.openai.com/v1/responses/{response_id}/input_items?order=asc&limit=2",
                         method="GET")
    run_request(addon, listed)
    assert [i["content"][0]["text"] for i in listed.response.json()["data"]][:2] == [
        "turn 0 " + "x" * 40, "turn 1 " + "x" * 40]


def test_the_saved_flow_keeps_a_long_request_cut_at_the_kept_bound(gateway: Ctx) -> None:
    """Once sent, the upstream body is cut for the saved flow, as the client's request is, with a
    note: mitmproxy writes a saved flow whole on the event loop."""
    addon, tctx = gateway
    tctx.configure(addon, gateway_max_kept_bytes=100_000)
    items = [{"type": "message", "role": "user", "content": f"turn {i} " + "x" * 40} for i in range(5000)]
    flow = client_flow({"model": "gpt-5.5", "input": items, "store": False})
    run_request(addon, flow)
    sent = len(flow.request.raw_content or b"")
    assert sent > 100_000
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    addon.responseheaders(flow)
    kept = flow.request.raw_content or b""
    assert len(kept) < 100_200 and kept.endswith(
        f"{sent - 100_000} more bytes were sent but not kept (gateway_max_kept_bytes=100000)".encode())
    client = flow.metadata["gateway.client_request"]
    assert len(client) < 100_200 and "more bytes were read but not kept" in client


def test_a_short_turn_continuing_a_long_history_is_read_by_a_worker_not_the_proxy(gateway: Ctx) -> None:
    """The Agents SDK sends only the new input and `previous_response_id`: the history is the
    store's. Past `offload.INLINE_BYTES` of it, its JSON goes to a worker process unread, where
    the turn is expanded and translated (docs/design.md "Limits"); the proxy holds bytes only."""
    addon, _ = gateway
    items = [{"type": "message", "role": "user", "content": f"turn {i} " + "x" * 40} for i in range(5000)]
    first = client_flow({"model": "gpt-5.5", "input": items})
    run_request(addon, first)
    first_id = _answered_whole(addon, first, "read them all")
    stored = len(json.dumps(items))
    addon.storage.close()  # the queued write is done
    following = client_flow({"model": "gpt-5.5", "input": "and then?", "previous_response_id": first_id})
    tracemalloc.start()
    try:
        run_request(addon, following)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    messages = json.loads(following.request.content or b"")["messages"]
    assert len(messages[0]["content"]) == 5000 and messages[-1]["content"][-1]["text"] == "and then?"
    assert _turn(addon, following).previous_id == first_id
    assert peak < 10 * stored  # texts, their copy for the worker, the translation: 6x; parsed: 35x


def test_a_turn_in_a_long_conversation_is_expanded_by_a_worker_with_every_item(gateway: Ctx) -> None:
    addon, _ = gateway
    items = [{"type": "message", "id": f"msg_{i}", "role": "user", "status": "completed",
              "content": [{"type": "input_text", "text": f"turn {i} " + "x" * 40}]} for i in range(5000)]
    addon.storage.store().create_conversation(Conversation(id="conv_long", created_at=1.0), items)
    flow = client_flow({"model": "gpt-5.5", "input": "and then?", "conversation": "conv_long"})
    run_request(addon, flow)
    messages = json.loads(flow.request.content or b"")["messages"]
    first_two = [part["text"] for part in messages[0]["content"][:2]]
    assert first_two == ["turn 0 " + "x" * 40, "turn 1 " + "x" * 40]
    assert len(messages[0]["content"]) == 5001 and messages[0]["content"][-1]["text"] == "and then?"


# -- bounds, types and failures (docs/state.md "Bounds") -------------------------------------------
CONVERSATIONS = "https://api.openai.com/v1/conversations"


def test_a_store_endpoints_body_is_read_within_the_request_bound_as_declared_and_decoded(
        gateway: Ctx) -> None:
    addon, tctx = gateway
    tctx.options.update(gateway_max_request_bytes=1 << 20)
    bomb = {"metadata": {"k": "x" * (64 << 20)}}  # 64 MiB of JSON, a few KB as zstd
    flow = client_flow(json.dumps(bomb).encode(), url=CONVERSATIONS, headers={"content-encoding": "zstd"})
    flow.request.raw_content = encoding.encode(json.dumps(bomb).encode(), "zstd")
    assert len(flow.request.raw_content) < 64 << 10
    tracemalloc.start()
    try:
        run_request(addon, flow)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert flow.response.status_code == 413, flow.response.content
    assert flow.response.json()["error"]["code"] == "request_too_large"
    assert peak < 16 << 20  # the decoder stopped at the bound
    declared = client_flow({"items": []}, url=CONVERSATIONS)
    declared.request.headers["content-length"] = str(2 << 20)
    addon.requestheaders(declared)
    assert declared.response.status_code == 413  # refused before its body is read


@pytest.mark.parametrize(("field", "value", "param"), [
    ("previous_response_id", 123, "previous_response_id"),
    ("previous_response_id", True, "previous_response_id"),
    ("previous_response_id", [], "previous_response_id"),
    ("previous_response_id", {}, "previous_response_id"),
    ("previous_response_id", "", "previous_response_id"),
    ("conversation", 123, "conversation"),
    ("conversation", [], "conversation"),
    ("conversation", "", "conversation"),
    ("conversation", {"id": 5}, "conversation.id"),
    ("conversation", {}, "conversation.id"),
])
def test_state_ids_of_the_wrong_type_are_refused_with_their_path_and_nothing_is_sent_or_stored(
        gateway: Ctx, field: str, value: Any, param: str) -> None:
    addon, _ = gateway
    flow = client_flow({"model": "gpt-5.5", "input": "hi", field: value})
    run_request(addon, flow)
    assert flow.response.status_code == 400
    error = flow.response.json()["error"]
    assert error["code"] in ("invalid_type", "empty_string") and error["param"] == param
    assert flow.request.host == "api.openai.com"  # never re-targeted
    assert not _store_path(gateway).exists()


@pytest.mark.parametrize("model", [".", "..", "models/..", "a\nb"])
def test_a_dot_segment_model_name_is_refused_before_any_upstream_call(gateway: Ctx, model: str) -> None:
    addon, tctx = gateway
    tctx.configure(addon, gateway_model="")  # the client's model is kept
    flow = client_flow({"model": model, "input": "hi", "store": False})
    run_request(addon, flow)
    assert flow.response.status_code == 400
    assert flow.response.json()["error"]["code"] == "invalid_model"
    assert flow.request.host == "api.openai.com"


def test_a_store_that_cannot_be_written_is_503_store_unavailable(gateway: Ctx, tmp_path: Path) -> None:
    addon, tctx = gateway
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    tctx.configure(addon, gateway_store_path=str(blocked / "store.sqlite"))
    flow = client_flow({"items": []}, url=CONVERSATIONS)
    run_request(addon, flow)
    assert flow.response.status_code == 503
    assert flow.response.json()["error"]["code"] == "store_unavailable"
    turn = client_flow({"model": "gpt-5.5", "input": "hi", "previous_response_id": "resp_1"})
    run_request(addon, turn)
    assert turn.response.status_code == 503


def test_a_turn_that_cannot_be_recorded_is_answered_with_a_note(gateway: Ctx) -> None:
    addon, _ = gateway
    store = addon.storage.store()
    store._db.execute(f"PRAGMA max_page_count = {store._db.execute('PRAGMA page_count').fetchone()[0]}")
    flow = client_flow({"model": "gpt-5.5", "input": "x" * 50_000})
    run_request(addon, flow)
    _answered_whole(addon, flow, "Hello.")
    assert flow.response.status_code == 200
    assert any("state: not stored" in note for note in flow.metadata["gateway"]["notes"])


def test_every_float_option_is_taken_by_set(gateway: Ctx) -> None:
    """`--set` parses str, int, bool and list options only ("unsupported option type: float")."""
    addon, tctx = gateway
    tctx.options.set("gateway_store_ttl=20", "gateway_capabilities_timeout=1.5",
                     "gateway_store_max_bytes=1000")
    assert tctx.options.gateway_store_ttl == 20
    assert addon.capabilities.timeout == 1.5
