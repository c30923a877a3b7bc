"""Chat Completions through real mitmdump (reverse mode): a local OpenAI-compatible server
replays recorded OpenAI and DeepSeek streams with chunked transfer encoding; the `openai` SDK,
speaking Responses to the proxy, gets valid Responses streams and objects.

The gateway is pointed at it the way a user points it at vLLM or Ollama: a base URL ending in
`/v1`, the key in $DEEPSEEK_API_KEY (the chat dialect's default variable).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.addon.e2e.conftest import CLIENT_KEY, CODEX_HEADERS, StartProxy, reverse_client
from tests.addon.e2e.providers import chat_answer, sse_chunks
from tests.addon.e2e.upstream import (
    Received,
    Reply,
    Upstream,
    assert_streamed_through,
    json_reply,
    raw_stream,
)
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(90)

CHAT_KEY = "sk-deepseek-e2e-upstream-secret-0123456789"
MODEL = "deepseek-reasoner"
REASONING = "deepseek/reasoning_content_stream.sse"
REASONING_TOOL = "deepseek/reasoning_then_tool_call.jsonl"
SINGLE = "openai_chat/tool_call_single.sse"
PARALLEL = "openai_chat/parallel_tool_calls.sse"
FRAGMENTED = "openai_chat/tool_call_fragmented_args.sse"


def _tool(name: str, **properties: str) -> dict[str, Any]:
    return {"type": "function", "name": name, "description": f"{name} tool",
            "parameters": {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}}}


def _stream(fixture: str = REASONING, delay: float = 0.002) -> Reply:
    return raw_stream(sse_chunks(fixture), delay=delay)


COMPLETION = {"id": "chatcmpl-local", "object": "chat.completion", "created": 1752169304, "model": MODEL,
              "choices": [{"index": 0, "finish_reason": "stop", "message": {
                  "role": "assistant", "content": "Plain chat answer.",
                  "reasoning_content": "Short thought."}}],
              "usage": {"prompt_tokens": 9, "completion_tokens": 14, "total_tokens": 23,
                        "completion_tokens_details": {"reasoning_tokens": 4}}}


def _default(received: Received) -> Reply:
    wants_stream = isinstance(received.json, dict) and received.json.get("stream")
    return _stream() if wants_stream else json_reply(COMPLETION)


@pytest.fixture(scope="module")
def upstream_server() -> Iterator[Upstream]:
    with Upstream(default=_default) as server:
        yield server


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, upstream_server: Upstream) -> MitmDump:
    return start_proxy("chat", "reverse:https://api.openai.com", env={"DEEPSEEK_API_KEY": CHAT_KEY},
                       gateway_upstream="chat", gateway_base_url=f"{upstream_server.url}/v1",
                       gateway_model=MODEL, gateway_key_env="DEEPSEEK_API_KEY")


@pytest.fixture
def client(proxy: MitmDump) -> Iterator[openai.OpenAI]:
    with reverse_client(proxy) as sdk:
        yield sdk


def test_deepseek_stream_gives_typed_events_reasoning_then_text(client: openai.OpenAI,
                                                                upstream: Upstream) -> None:
    recorded = chat_answer(REASONING)
    with client.responses.stream(model="gpt-5.5", input="Hello") as stream_:
        events = list(stream_)
        final = stream_.get_final_response()
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert [item.type for item in final.output] == ["reasoning", "message"]
    assert final.output[0].summary[0].text == recorded.reasoning
    assert final.output_text == recorded.text
    assert (final.usage.input_tokens, final.usage.output_tokens) == (6, 212)
    assert final.usage.output_tokens_details.reasoning_tokens == 198


def test_upstream_gets_chat_completions_under_the_base_url_with_its_own_key(client: openai.OpenAI,
                                                                           upstream: Upstream) -> None:
    list(client.responses.create(model="gpt-5.5", input="Hello", stream=True))
    (received,) = upstream.received
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == f"Bearer {CHAT_KEY}"
    assert received.headers["accept"] == "text/event-stream"
    assert CLIENT_KEY not in json.dumps(received.headers)
    assert not set(CODEX_HEADERS) & set(received.headers)
    assert received.json == {"model": MODEL, "messages": [{"role": "user", "content": "Hello"}],
                             "stream": True, "stream_options": {"include_usage": True}}


def test_first_event_arrives_before_the_upstream_has_finished(client: openai.OpenAI,
                                                              upstream: Upstream) -> None:
    upstream.plan(_stream(REASONING, delay=0.005))  # about 2 s of stream
    events = client.responses.create(model="gpt-5.5", input="Hello", stream=True)
    assert_streamed_through(events, "response.reasoning_summary_text.delta", upstream)


@pytest.mark.parametrize(("fixture", "tools"), [
    (SINGLE, [_tool("get_capital", country="string")]),
    (PARALLEL, [_tool("get_country"), _tool("get_product_name")]),
    (FRAGMENTED, [_tool("get_weather", city="string")]),
], ids=["single", "parallel", "fragmented"])
def test_tool_call_stream_becomes_function_calls_with_their_arguments(
        client: openai.OpenAI, upstream: Upstream, fixture: str, tools: list[dict[str, Any]]) -> None:
    upstream.plan(_stream(fixture))
    with client.responses.stream(model="gpt-5.5", input="call the tools", tools=tools) as stream_:
        final = stream_.get_final_response()
    calls = [(item.name, json.loads(item.arguments)) for item in final.output if item.type == "function_call"]
    assert calls == [(name, json.loads(arguments)) for name, arguments in chat_answer(fixture).calls]
    assert final.status == "completed"


def test_deepseek_tool_turn_sends_its_reasoning_back_on_the_next_request(client: openai.OpenAI,
                                                                        upstream: Upstream) -> None:
    """DeepSeek rejects a tool-call turn whose reasoning_content is not sent back."""
    weather = _tool("weather", location="string")
    upstream.plan(_stream(REASONING_TOOL))
    question = "Weather in San Francisco?"
    with client.responses.stream(model="gpt-5.5", input=question, tools=[weather]) as first:
        turn = first.get_final_response()
    (call,) = [item for item in turn.output if item.type == "function_call"]
    history = [{"role": "user", "content": question},
               *[item.model_dump(exclude_none=True) for item in turn.output],
               {"type": "function_call_output", "call_id": call.call_id, "output": "18 C, sunny"}]
    list(client.responses.create(model="gpt-5.5", input=history, tools=[weather], stream=True))
    second = upstream.received[1].json
    (assistant,) = [m for m in second["messages"] if m["role"] == "assistant"]
    assert assistant["reasoning_content"] == chat_answer(REASONING_TOOL).reasoning
    assert assistant["tool_calls"][0]["function"]["name"] == "weather"
    (result,) = [m for m in second["messages"] if m["role"] == "tool"]
    assert (result["tool_call_id"], result["content"]) == (assistant["tool_calls"][0]["id"], "18 C, sunny")


def test_non_streamed_request_gets_a_response_object(client: openai.OpenAI, upstream: Upstream) -> None:
    response = client.responses.create(model="gpt-5.5", input="hi", stream=False)
    assert (response.object, response.status, response.model) == ("response", "completed", "gpt-5.5")
    assert response.output_text == "Plain chat answer."
    (received,) = upstream.received
    assert received.path == "/v1/chat/completions"
    assert not received.json.get("stream")


def test_upstream_400_keeps_status_and_message(client: openai.OpenAI, upstream: Upstream) -> None:
    """A refusal of the request itself passes on, translated (a 429 or a 5xx is tried again:
    tests/addon/e2e/test_pools.py)."""
    upstream.plan(json_reply({"error": {"message": "Invalid 'messages[0].role': 'tool'.",
                                        "type": "invalid_request_error", "param": "messages",
                                        "code": "invalid_value"}}, status=400))
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5.5", input="hi", stream=True)
    assert caught.value.status_code == 400
    assert "Invalid 'messages[0].role'" in caught.value.body["message"]


# -- DeepSeek's own Responses endpoint (gateway_upstream=responses, not OpenAI) ----------------------

def test_deepseek_responses_endpoint_passes_through_with_deepseeks_key(start_proxy: StartProxy,
                                                                      upstream: Upstream) -> None:
    proxy = start_proxy("deepseek-responses", "reverse:https://api.openai.com",
                        env={"DEEPSEEK_API_KEY": CHAT_KEY}, gateway_upstream="responses",
                        gateway_base_url=upstream.url, gateway_model="deepseek-v4-flash",
                        gateway_key_env="DEEPSEEK_API_KEY")
    upstream.plan(_stream("deepseek/responses_api_function_call.sse"))
    with reverse_client(proxy) as sdk, sdk.responses.stream(
            model="gpt-5.5", input="weather?", tools=[_tool("get_weather", city="string")]) as stream_:
        final = stream_.get_final_response()
    assert [item.type for item in final.output] == ["reasoning", "function_call"]
    (received,) = upstream.received
    assert received.path == "/responses"
    assert received.headers["authorization"] == f"Bearer {CHAT_KEY}"
    assert not set(CODEX_HEADERS) & set(received.headers)
