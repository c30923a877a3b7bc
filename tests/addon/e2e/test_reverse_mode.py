"""Reverse mode (`--mode reverse:https://api.openai.com`): the SDK's base_url is the proxy."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from mitmproxy.net import encoding

from tests.addon.e2e.conftest import CLIENT_KEY, CODEX_HEADERS, UPSTREAM_KEY, UPSTREAM_MODEL
from tests.addon.e2e.upstream import (
    TOOL_FIXTURE,
    Upstream,
    assert_streamed_through,
    fixture_text,
    message,
    stream,
)
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(90)

JSON_TOOL = {"type": "function", "name": "json", "description": "Answer as JSON.",
             "parameters": {"type": "object", "properties": {"elements": {"type": "array"}}}}
PELICAN_TOOL = {"type": "function", "name": "pelican_name_generator", "description": "Names.",
                "parameters": {"type": "object", "properties": {}}}


def test_stream_events_parse_as_typed_sdk_events(client: openai.OpenAI, upstream: Upstream) -> None:
    events = list(client.responses.create(model="gpt-5.5", input="name my pelican", stream=True))
    assert all(isinstance(e, openai.BaseModel) for e in events)
    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == fixture_text("text_after_tool_result.sse")
    assert [e.sequence_number for e in events] == list(range(len(events)))


def test_stream_accumulates_a_final_response_with_the_text(client: openai.OpenAI) -> None:
    with client.responses.stream(model="gpt-5.5", input="name my pelican") as stream_:
        final = stream_.get_final_response()
    assert final.status == "completed"
    assert final.model == "gpt-5.5"  # the client sees its own model name
    assert final.output_text == fixture_text("text_after_tool_result.sse")
    assert (final.usage.input_tokens, final.usage.output_tokens) == (678, 82)


def test_stream_accumulates_a_function_call_with_its_arguments(client: openai.OpenAI,
                                                               upstream: Upstream) -> None:
    upstream.plan(stream("text_then_tool_use.jsonl"))
    with client.responses.stream(model="gpt-5.5", input="weather as json", tools=[JSON_TOOL]) as stream_:
        final = stream_.get_final_response()
    (call,) = [item for item in final.output if item.type == "function_call"]
    assert call.name == "json"
    assert json.loads(call.arguments)["elements"][0]["location"] == "San Francisco"
    assert final.output_text == "I'll invoke the JSON response tool."


def test_parallel_function_calls_arrive_as_two_items(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(stream(TOOL_FIXTURE))
    with client.responses.stream(model="gpt-5.5", input="two names", tools=[PELICAN_TOOL]) as stream_:
        final = stream_.get_final_response()
    calls = [item for item in final.output if item.type == "function_call"]
    assert [c.name for c in calls] == ["pelican_name_generator"] * 2
    assert len({c.call_id for c in calls}) == 2


def test_first_event_arrives_before_the_upstream_has_finished(client: openai.OpenAI,
                                                              upstream: Upstream) -> None:
    upstream.plan(stream(delay=0.1))  # about 2 s of stream
    events = client.responses.create(model="gpt-5.5", input="hi", stream=True)
    assert_streamed_through(events, "response.output_text.delta", upstream)


def test_a_stream_sent_with_content_length_is_still_streamed_whole(client: openai.OpenAI,
                                                                   upstream: Upstream) -> None:
    upstream.plan(stream(chunked=False))
    with client.responses.stream(model="gpt-5.5", input="hi") as stream_:
        final = stream_.get_final_response()
    assert final.output_text == fixture_text("text_after_tool_result.sse")


def test_non_streamed_request_gets_a_response_object(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(message("Plain answer."))
    response = client.responses.create(model="gpt-5.5", input="hi", stream=False)
    assert (response.object, response.status, response.model) == ("response", "completed", "gpt-5.5")
    assert response.output_text == "Plain answer."
    assert not upstream.received[0].json.get("stream")


def test_upstream_gets_its_own_dialect_key_and_no_client_credentials(client: openai.OpenAI,
                                                                     upstream: Upstream) -> None:
    client.responses.create(model="gpt-5.5", input="hi", stream=False,
                            extra_body={"client_metadata": {"installation_id": "inst-e2e"}})
    (received,) = upstream.received
    assert received.path == "/v1/messages"
    assert received.json["model"] == UPSTREAM_MODEL
    assert received.headers["x-api-key"] == UPSTREAM_KEY
    assert received.headers["accept-encoding"] == "identity"
    assert CLIENT_KEY not in json.dumps(received.headers)
    for name in ["authorization", *CODEX_HEADERS]:
        assert name not in received.headers
    assert b"client_metadata" not in received.body and b"inst-e2e" not in received.body


def test_zstd_request_body_is_decoded_before_translation(reverse_proxy: MitmDump, upstream: Upstream) -> None:
    body = json.dumps({"model": "gpt-5.5", "input": "compressed hello", "stream": False}).encode()
    response = httpx.post(f"{reverse_proxy.url}/v1/responses", content=encoding.encode(body, "zstd"),
                          headers={"content-type": "application/json", "content-encoding": "zstd",
                                   "authorization": f"Bearer {CLIENT_KEY}"}, timeout=15)
    assert response.status_code == 200, response.text
    (received,) = upstream.received
    assert "content-encoding" not in received.headers
    assert received.json["messages"][0]["content"][0]["text"] == "compressed hello"


def test_websocket_upgrade_is_served_by_the_gateway(reverse_proxy: MitmDump, upstream: Upstream) -> None:
    """The upgrade gets its 101 from the gateway's own endpoint (docs/websocket.md), never from
    the upstream."""
    with httpx.stream("GET", f"{reverse_proxy.url}/v1/responses", timeout=15, headers={
            "connection": "Upgrade", "upgrade": "websocket", "sec-websocket-version": "13",
            "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
            "openai-beta": "responses_websockets=2026-02-06"}) as response:
        assert response.status_code == 101
        assert response.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    assert upstream.received == []
