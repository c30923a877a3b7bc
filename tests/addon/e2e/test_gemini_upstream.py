"""Gemini through real mitmdump (reverse mode): a local Gemini API replays recorded
`streamGenerateContent?alt=sse` streams with chunked transfer encoding; the `openai` SDK,
speaking Responses to the proxy, gets valid Responses streams and objects.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.addon.e2e.conftest import CLIENT_KEY, StartProxy, reverse_client
from tests.addon.e2e.providers import gemini_parts, gemini_text, sse_chunks
from tests.addon.e2e.upstream import Received, Reply, Upstream, json_reply, raw_stream
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(90)

GEMINI_KEY = "AIza-e2e-gemini-upstream-secret-0123456789"
MODEL = "gemini-3-pro-preview"
TEXT = "gemini/sse_text_after_function_response.sse"
SIGNED_CALL = "gemini/sse_function_call_thought_signature.sse"
CALL_WITH_ARGS = "gemini/sse_function_call_gemini2.sse"
TRAILING_SIGNATURE = "gemini/text_with_trailing_signature_part.jsonl"
ANSWER = {"candidates": [{"content": {"role": "model", "parts": [{"text": "Paris."}]}, "finishReason": "STOP",
                          "index": 0}],
          "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7},
          "modelVersion": MODEL}


def _tool(name: str, **properties: str) -> dict[str, Any]:
    return {"type": "function", "name": name, "description": f"{name} tool",
            "parameters": {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}}}


def _stream(fixture: str = TEXT) -> Reply:
    return raw_stream(sse_chunks(fixture), delay=0.01)


def _default(received: Received) -> Reply:
    return _stream() if "streamGenerateContent" in received.path else json_reply(ANSWER)


@pytest.fixture(scope="module")
def upstream_server() -> Iterator[Upstream]:
    with Upstream(default=_default) as server:
        yield server


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, upstream_server: Upstream) -> MitmDump:
    return start_proxy("gemini", "reverse:https://api.openai.com", env={"GEMINI_API_KEY": GEMINI_KEY},
                       gateway_upstream="gemini", gateway_base_url=upstream_server.url, gateway_model=MODEL,
                       gateway_key_env="GEMINI_API_KEY")


@pytest.fixture
def client(proxy: MitmDump) -> Iterator[openai.OpenAI]:
    with reverse_client(proxy) as sdk:
        yield sdk


def test_text_stream_gives_typed_events_and_the_text(client: openai.OpenAI) -> None:
    with client.responses.stream(model="gpt-5.5", input="capital of Mexico?") as stream_:
        events = list(stream_)
        final = stream_.get_final_response()
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert final.output_text == gemini_text(TEXT) == "The capital of Mexico is Mexico City."
    assert (final.usage.input_tokens, final.usage.output_tokens) == (257, 8)


def test_upstream_gets_the_sse_path_and_its_key_in_x_goog_api_key(client: openai.OpenAI,
                                                                 upstream: Upstream) -> None:
    list(client.responses.create(model="gpt-5.5", input="hi", stream=True))
    (received,) = upstream.received
    assert received.path == f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    assert received.headers["x-goog-api-key"] == GEMINI_KEY
    assert "authorization" not in received.headers
    assert CLIENT_KEY not in json.dumps(received.headers)
    assert received.json["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


def test_function_call_arguments_come_through(client: openai.OpenAI, upstream: Upstream) -> None:
    upstream.plan(_stream(CALL_WITH_ARGS))
    with client.responses.stream(model="gpt-5.5", input="capital of France?",
                                 tools=[_tool("get_capital", country="string")]) as stream_:
        final = stream_.get_final_response()
    (call,) = [item for item in final.output if item.type == "function_call"]
    assert (call.name, json.loads(call.arguments)) == ("get_capital", {"country": "France"})


def test_thought_signature_goes_back_on_the_function_call_next_turn(client: openai.OpenAI,
                                                                    upstream: Upstream) -> None:
    """Gemini 3 answers 400 "Function call is missing a thought_signature" otherwise."""
    country = _tool("get_country")
    upstream.plan(_stream(SIGNED_CALL), _stream(TEXT))
    with client.responses.stream(model="gpt-5.5", input="capital of my country?", tools=[country]) as first:
        turn = first.get_final_response()
    (call,) = [item for item in turn.output if item.type == "function_call"]
    history = [{"role": "user", "content": "capital of my country?"},
               *[item.model_dump(exclude_none=True) for item in turn.output],
               {"type": "function_call_output", "call_id": call.call_id, "output": "Mexico"}]
    with client.responses.stream(model="gpt-5.5", input=history, tools=[country]) as second:
        assert second.get_final_response().output_text == gemini_text(TEXT)
    contents = upstream.received[1].json["contents"]
    model_turn = next(c for c in contents if c["role"] == "model")
    (signed,) = [p for p in gemini_parts(SIGNED_CALL) if "thoughtSignature" in p]
    (part,) = [p for p in model_turn["parts"] if "functionCall" in p]
    assert part["functionCall"]["name"] == "get_country"
    assert part["thoughtSignature"] == signed["thoughtSignature"]


def test_text_whose_signature_rides_on_a_trailing_part_streams_whole(client: openai.OpenAI,
                                                                     upstream: Upstream) -> None:
    upstream.plan(_stream(TRAILING_SIGNATURE))
    with client.responses.stream(model="gpt-5.5", input="how many r in strawberry?") as stream_:
        final = stream_.get_final_response()
    assert final.status == "completed"
    assert final.output_text == gemini_text(TRAILING_SIGNATURE)


def test_non_streamed_request_uses_generate_content(client: openai.OpenAI, upstream: Upstream) -> None:
    response = client.responses.create(model="gpt-5.5", input="capital of France?", stream=False)
    assert (response.object, response.status, response.output_text) == ("response", "completed", "Paris.")
    (received,) = upstream.received
    assert received.path == f"/v1beta/models/{MODEL}:generateContent"
    assert received.headers["accept"] == "application/json"


def test_gemini_error_body_keeps_status_and_message(client: openai.OpenAI, upstream: Upstream) -> None:
    """A refusal of the request itself passes on, translated (a 429 is tried again:
    tests/addon/e2e/test_pools.py)."""
    upstream.plan(json_reply({"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                        "message": "Request contains an invalid argument."}},
                             status=400))
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5.5", input="hi", stream=True)
    assert caught.value.status_code == 400
    assert "Request contains an invalid argument." in caught.value.body["message"]
