"""The anthropic SDK through real mitmdump to a fake OpenAI Responses upstream (docs/responses.md
"As an upstream of other clients", docs/claude-code.md "Upstreams"): the Messages request goes
through the IR to a Responses body, GPT's reasoning comes back in a thinking block whose signature
carries its `encrypted_content`, and the next turn gives it back byte for byte."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import anthropic
import httpx
import pytest

from tests.e2e.targets import write_routes
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    _sse_event,
    anthropic_message,
    count_reply,
    is_count,
    json_reply,
    sse_reply,
)
from tests.support.mitmdump import MitmDump
from tests.translators.messages_client.sdk import validate_stream

pytestmark = pytest.mark.timeout(120)

MODEL = "claude-via-responses"
CLIENT_KEY = "sk-ant-client-key-0123456789"
TEXT = "hello from GPT"
ENCRYPTED = "gAAAAABpZmFrZS1lbmNyeXB0ZWQtcmVhc29uaW5n+/=="
TOOL = {
    "name": "exec_command",
    "description": "Run a command.",
    "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}
USAGE = {
    "input_tokens": 30,
    "output_tokens": 9,
    "total_tokens": 39,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens_details": {"reasoning_tokens": 4},
}
OVERRIDE: list[Reply] = []
COUNTED = 4321
"""What the fake's `input_tokens` endpoint answers."""


def _event(payload: dict[str, Any]) -> bytes:
    return _sse_event(payload["type"], payload)


def reasoning_and_call() -> Reply:
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    call = {
        "id": "fc_1",
        "type": "function_call",
        "call_id": "call_1",
        "name": "exec_command",
        "arguments": "",
    }
    return sse_reply(
        [
            _event({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
            _event({"type": "response.output_item.added", "output_index": 0, "item": reasoning}),
            _event(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "output_index": 0,
                    "summary_index": 0,
                    "delta": "Run ls.",
                }
            ),
            _event(
                {
                    "type": "response.output_item.done",
                    "output_index": 0,
                    "item": {
                        **reasoning,
                        "encrypted_content": ENCRYPTED,
                        "summary": [{"type": "summary_text", "text": "Run ls."}],
                    },
                }
            ),
            _event({"type": "response.output_item.added", "output_index": 1, "item": call}),
            _event({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": '{"cmd":'}),
            _event({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": '"ls"}'}),
            _event(
                {
                    "type": "response.output_item.done",
                    "output_index": 1,
                    "item": {**call, "arguments": '{"cmd":"ls"}'},
                }
            ),
            _event(
                {
                    "type": "response.completed",
                    "response": {"id": "resp_1", "status": "completed", "usage": USAGE},
                }
            ),
        ]
    )


def text_stream() -> Reply:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    done = {**message, "content": [{"type": "output_text", "text": TEXT, "annotations": []}]}
    return sse_reply(
        [
            _event({"type": "response.created", "response": {"id": "resp_2", "status": "in_progress"}}),
            _event({"type": "response.output_item.added", "output_index": 0, "item": message}),
            _event(
                {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": TEXT}
            ),
            _event({"type": "response.output_item.done", "output_index": 0, "item": done}),
            _event(
                {
                    "type": "response.completed",
                    "response": {"id": "resp_2", "status": "completed", "usage": USAGE},
                }
            ),
        ]
    )


def answer(body: Any, headers: Mapping[str, str], path: str) -> Reply:
    if not isinstance(body, dict):
        return 404, {}, b""
    if OVERRIDE:
        return OVERRIDE.pop()
    if is_count("responses", path):
        return count_reply("responses", COUNTED)
    if not body.get("stream"):
        return json_reply(
            200,
            {
                "id": "resp_3",
                "object": "response",
                "status": "completed",
                "usage": USAGE,
                "output": [
                    {
                        "id": "msg_3",
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": TEXT}],
                    }
                ],
            },
        )
    items = body.get("input") or []
    if body.get("tools") and not any(i.get("type") == "function_call_output" for i in items):
        return reasoning_and_call()
    return text_stream()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("messages_responses")
    anthropic_itself = FakeUpstream(lambda body, headers, path: anthropic_message("from anthropic itself"))
    fake = FakeUpstream(answer)
    with anthropic_itself, fake:
        write_routes(tmp / "routes.toml", [
            {"model": MODEL, "upstream": "responses", "base_url": fake.url, "target_model": "gpt-5.2"}])
        with MitmDump(
            tmp / "mitm",
            mode=f"reverse:{anthropic_itself.url}",
            options={"gateway_config": str(tmp / "routes.toml"), "gateway_capabilities": "table"},
        ) as mitm:
            yield {"mitm": mitm, "fake": fake}


@pytest.fixture
def client(world: dict[str, Any]) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=world["mitm"].url, api_key=CLIENT_KEY, max_retries=0)


def ask(**extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}], **extra}


def test_a_streamed_answer_validates_event_by_event(world: dict[str, Any]) -> None:
    answered = httpx.post(
        world["mitm"].url + "/v1/messages?beta=true",
        json=ask(stream=True),
        timeout=60,
        headers={"x-api-key": CLIENT_KEY, "anthropic-version": "2023-06-01"},
    )
    assert answered.status_code == 200, answered.text
    message, error = validate_stream(answered.content)
    assert error is None and message is not None
    assert [b.text for b in message.content if b.type == "text"] == [TEXT]
    assert message.model == MODEL and message.stop_reason == "end_turn"
    sent = json.loads(world["fake"].requests[-1].body)
    assert sent["model"] == "gpt-5.2" and sent["store"] is False
    assert "x-api-key" not in world["fake"].requests[-1].headers


def test_a_whole_answer_is_a_message(client: anthropic.Anthropic) -> None:
    message = client.messages.create(**ask())
    assert [b.text for b in message.content if b.type == "text"] == [TEXT]


def test_the_reasoning_state_goes_back_byte_exact_with_the_tool_result(
    world: dict[str, Any], client: anthropic.Anthropic
) -> None:
    with client.messages.stream(**ask(tools=[TOOL], thinking={"type": "adaptive"})) as stream:
        first = stream.get_final_message()
    assert first.stop_reason == "tool_use"
    (call,) = [b for b in first.content if b.type == "tool_use"]
    assert (call.name, call.input) == ("exec_command", {"cmd": "ls"})
    assert any(b.type == "thinking" for b in first.content)
    before = len(world["fake"].requests)
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}]},
    ]
    with client.messages.stream(
        model=MODEL, max_tokens=1024, tools=[TOOL], messages=history, thinking={"type": "adaptive"}
    ) as stream:
        second = stream.get_final_message()
    assert second.content[-1].type == "text" and second.content[-1].text == TEXT
    (sent,) = [json.loads(r.body) for r in world["fake"].requests[before:]]
    assert [i["encrypted_content"] for i in sent["input"] if i["type"] == "reasoning"] == [ENCRYPTED]
    assert {"type": "function_call_output", "call_id": call.id, "output": "sunny"} in sent["input"]


def test_a_refusal_of_the_upstream_is_an_anthropic_error(client: anthropic.Anthropic) -> None:
    """The upstream's refusal of the request passes on in Anthropic's shape (a 429 or a 5xx is
    tried again: tests/addon/e2e/test_pools.py)."""
    OVERRIDE.append((400, {"content-type": "application/json"}, json.dumps(
        {"error": {"type": "invalid_request_error", "code": "invalid_value", "param": "input",
                   "message": "Invalid value for 'input'."}}).encode()))
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(**ask())
    assert raised.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert "Invalid value for 'input'." in raised.value.message


def test_count_tokens_is_openais_own_input_token_count(world: dict[str, Any],
                                                      client: anthropic.Anthropic) -> None:
    counted = client.messages.count_tokens(model=MODEL, system="Be brief.", tools=[TOOL],
                                           messages=[{"role": "user", "content": "count me"}])
    assert counted.input_tokens == COUNTED
    sent = world["fake"].requests[-1]
    assert (sent.method, sent.path) == ("POST", "/responses/input_tokens")
    assert "x-api-key" not in sent.headers and CLIENT_KEY not in json.dumps(sent.headers)
    body = json.loads(sent.body)
    assert body["model"] == "gpt-5.2" and "stream" not in body and "max_output_tokens" not in body
    assert "count me" in json.dumps(body["input"]) and "Be brief." in body["instructions"]


def test_a_count_openai_refuses_is_an_anthropic_error(client: anthropic.Anthropic) -> None:
    refusal = {"type": "invalid_request_error", "code": None, "param": "input", "message": "Invalid input."}
    OVERRIDE.append(json_reply(400, {"error": refusal}))
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    assert refused.value.body["type"] == "error"  # type: ignore[index]
    assert "Invalid input." in refused.value.message
