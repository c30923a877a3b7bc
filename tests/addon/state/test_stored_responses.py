"""The Responses objects the store keeps and `GET /v1/responses/{id}` returns: whole (every field
strict clients require, openresponses_rules.py), the same object the client got, echoing the
request, `previous_response_id` included though the addon resolved it into the input (issue 24,
"The Responses object, whole"; docs/state.md, docs/responses.md "The Response object")."""

from __future__ import annotations

import json
from typing import Any

from mitmproxy import http

from addon.state.store import ResponseRecord
from addon.work import offload
from tests.addon.conftest import Chain, client_flow, finish, run_request, sse_events
from tests.data import DATA
from tests.translators.responses_client.openresponses_rules import assert_valid_response

UPSTREAM = (DATA / "anthropic" / "text_after_tool_result.sse").read_bytes()


def _streamed(addon: Chain, body: dict[str, Any]) -> dict[str, Any]:
    """One streamed turn through the hooks, run to its end; the `response.completed` object."""
    flow = client_flow({**body, "stream": True})
    run_request(addon, flow)
    assert flow.response is None, flow.response and flow.response.content
    flow.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    addon.responseheaders(flow)
    for chunk in [*(block + b"\n\n" for block in UPSTREAM.split(b"\n\n") if block.strip()), b""]:
        flow.response.stream(chunk)
    finish(addon.response(flow))
    last = sse_events(flow.response.content)[-1]
    assert last["type"] == "response.completed"
    return last["response"]


def _whole(addon: Chain, body: dict[str, Any]) -> dict[str, Any]:
    """One non-streamed turn, answered whole by Anthropic; the Responses object the client got."""
    flow = client_flow(body)
    run_request(addon, flow)
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
              "content": [{"type": "text", "text": "Hello."}], "stop_reason": "end_turn",
              "usage": {"input_tokens": 9, "output_tokens": 3}}
    flow.response = http.Response.make(200, json.dumps(answer).encode(), {"content-type": "application/json"})
    addon.responseheaders(flow)
    finish(addon.response(flow))
    return json.loads(flow.response.content)


def _retrieved(addon: Chain, response_id: str) -> dict[str, Any]:
    flow = client_flow(url=f"https://api.openai.com/v1/responses/{response_id}", method="GET")
    run_request(addon, flow)
    assert flow.response is not None and flow.response.status_code == 200, flow.response
    return json.loads(flow.response.content)


def test_a_streamed_turn_is_retrieved_as_the_client_got_it_whole(gateway: Any) -> None:
    addon, _ = gateway
    got = _streamed(addon, {"model": "gpt-5.5", "input": "hi", "metadata": {"ticket": "T-1"},
                            "temperature": 0.3, "instructions": "Be brief."})
    assert_valid_response(got)
    addon.storage.close()  # its write has landed
    retrieved = _retrieved(addon, got["id"])
    assert retrieved == got
    assert (retrieved["metadata"], retrieved["temperature"], retrieved["instructions"]) == (
        {"ticket": "T-1"}, 0.3, "Be brief.")
    assert retrieved["store"] is True and retrieved["previous_response_id"] is None


def test_a_turn_continuing_another_echoes_its_previous_response_id_live_and_stored(gateway: Any) -> None:
    addon, _ = gateway
    first = _whole(addon, {"model": "gpt-5.5", "input": "hi"})
    second = _whole(addon, {"model": "gpt-5.5", "input": "and then?", "previous_response_id": first["id"]})
    assert second["previous_response_id"] == first["id"]
    assert_valid_response(second)
    streamed = _streamed(addon, {"model": "gpt-5.5", "input": "more", "previous_response_id": second["id"]})
    assert streamed["previous_response_id"] == second["id"]
    addon.storage.close()
    assert _retrieved(addon, second["id"]) == second
    assert _retrieved(addon, streamed["id"]) == streamed


def test_a_long_turn_translated_by_a_worker_echoes_its_previous_response_id(gateway: Any) -> None:
    """A request past `offload.INLINE_BYTES` is expanded and translated in a worker process
    (addon/work/workers.py): the state it resolved is echoed there too."""
    addon, _ = gateway
    first = _whole(addon, {"model": "gpt-5.5", "input": "hi"})
    items = [{"type": "message", "role": "user", "content": f"turn {i} " + "x" * 40} for i in range(5000)]
    assert len(json.dumps(items)) >= offload.INLINE_BYTES
    second = _whole(addon, {"model": "gpt-5.5", "input": items, "previous_response_id": first["id"]})
    assert second["previous_response_id"] == first["id"]
    assert_valid_response(second)


def test_an_object_an_earlier_gateway_stored_is_retrieved_with_every_field(gateway: Any) -> None:
    """Stored before the gateway wrote whole objects: the fields it lacks come back at their
    defaults, the ones it has as they were."""
    addon, _ = gateway
    old = {"id": "resp_old", "object": "response", "created_at": 1, "status": "completed", "model": "gpt-5.5",
           "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
           "incomplete_details": None, "usage": None, "previous_response_id": None, "store": True}
    addon.storage.store().put_response(ResponseRecord(id="resp_old", response=old, input=[],
                                                    route={"dialect": "anthropic", "model": "x"}))
    retrieved = _retrieved(addon, "resp_old")
    assert_valid_response(retrieved)
    assert {key: retrieved[key] for key in old} == old
    assert (retrieved["truncation"], retrieved["top_p"], retrieved["text"]) == (
        "disabled", 1.0, {"format": {"type": "text"}, "verbosity": "medium"})


def test_a_turn_in_a_conversation_echoes_it_live_and_stored(gateway: Any) -> None:
    addon, _ = gateway
    created = client_flow({"items": []}, url="https://api.openai.com/v1/conversations")
    run_request(addon, created)
    conversation = json.loads(created.response.content)["id"]
    got = _streamed(addon, {"model": "gpt-5.5", "input": "hi", "conversation": conversation})
    assert got["conversation"] == {"id": conversation}
    assert_valid_response(got)
    addon.storage.close()
    assert _retrieved(addon, got["id"]) == got
