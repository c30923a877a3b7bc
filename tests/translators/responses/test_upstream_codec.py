"""The Responses upstream for a client that is not a Responses client (docs/responses.md "As an
upstream of other clients"): a Messages request written as a Responses body, field by field; the
Responses answers read back into the IR; GPT's encrypted reasoning carried in the thinking block's
signature and sent back byte for byte."""

from __future__ import annotations

import json
from typing import Any

from tests.data import DATA
from tests.translators.messages_client.sdk import validate_stream
from tests.translators.streamcheck import per_event, sized
from translators import stream_translator, translate_error, translate_request, translate_response
from translators.core.ids import sequential_ids
from translators.ir import events as ev
from translators.responses.upstream_stream import ResponsesUpstreamDecoder, error_info

BASE: dict[str, Any] = {
    "model": "claude-opus-5-5",
    "max_tokens": 1000,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}
BASH = {
    "name": "Bash",
    "description": "run a command",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
}
ENCRYPTED = "gAAAAABo-exact+/bytes=="


def encode(**fields: Any):
    return translate_request({**BASE, **fields}, "responses", "gpt-5.2", client="messages")


def test_nothing_is_stored_upstream_and_the_encrypted_reasoning_is_asked_for() -> None:
    body = encode().body
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["model"] == "gpt-5.2" and body["stream"] is True


def test_system_blocks_become_instructions() -> None:
    body = encode(system=[{"type": "text", "text": "be brief"}, {"type": "text", "text": "be kind"}]).body
    assert body["instructions"] == "be brief\n\nbe kind"


def test_messages_become_input_messages() -> None:
    body = encode(
        messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": [{"type": "text", "text": "again"}]},
        ]
    ).body
    assert body["input"] == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "again"}]},
    ]


def test_tools_are_function_tools_not_strict_unless_asked() -> None:
    tool = encode(tools=[BASH]).body["tools"][0]
    assert tool == {
        "type": "function",
        "name": "Bash",
        "description": "run a command",
        "parameters": BASH["input_schema"],
        "strict": False,
    }


def test_tool_choice_and_parallel_calls() -> None:
    body = encode(
        tools=[BASH], tool_choice={"type": "tool", "name": "Bash", "disable_parallel_tool_use": True}
    ).body
    assert body["tool_choice"] == {"type": "function", "name": "Bash"}
    assert body["parallel_tool_calls"] is False
    assert encode(tools=[BASH], tool_choice={"type": "any"}).body["tool_choice"] == "required"
    assert "tool_choice" not in encode(tools=[BASH], tool_choice={"type": "auto"}).body


def test_a_tool_use_and_its_result_become_a_function_call_and_its_output() -> None:
    body = encode(
        tools=[BASH],
        messages=[
            {"role": "user", "content": "list"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}],
            },
        ],
    ).body
    call, output = body["input"][1], body["input"][2]
    assert call["type"] == "function_call" and call["call_id"] == "toolu_1" and call["name"] == "Bash"
    assert json.loads(call["arguments"]) == {"command": "ls"}
    assert output == {"type": "function_call_output", "call_id": "toolu_1", "output": "a.txt"}


def test_effort_and_thinking_become_reasoning() -> None:
    body = encode(thinking={"type": "adaptive"}, output_config={"effort": "low"}).body
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    omitted = encode(
        thinking={"type": "adaptive", "display": "omitted"}, output_config={"effort": "high"}
    ).body
    assert omitted["reasoning"] == {"effort": "high"}


def test_max_tokens_and_sampling() -> None:
    body = encode(temperature=0.5, top_p=0.9).body
    assert body["max_output_tokens"] == 1000 and body["temperature"] == 0.5 and body["top_p"] == 0.9


def test_structured_output_becomes_text_format() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    body = encode(output_config={"format": {"type": "json_schema", "schema": schema}}).body
    assert body["text"]["format"]["type"] == "json_schema" and body["text"]["format"]["schema"] == schema


def test_another_vendors_thinking_is_reported_dropped() -> None:
    translated = encode(
        messages=[
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "anthropic-sig"},
                    {"type": "text", "text": "hello"},
                ],
            },
            {"role": "user", "content": "again"},
        ]
    )
    assert [i["type"] for i in translated.body["input"]] == ["message", "message", "message"]
    assert "messages[1].content[0]" in translated.dropped


# -- the answers ---------------------------------------------------------------------------------


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def reasoning_then_text(encrypted: str = ENCRYPTED) -> bytes:
    item = {"id": "rs_1", "type": "reasoning", "summary": []}
    return sse(
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": 0,
            "summary_index": 0,
            "delta": "Thinking",
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**item, "encrypted_content": encrypted},
        },
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
        },
        {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "Hel"},
        {"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "lo"},
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello"}],
            },
        },
        {
            "type": "response.completed",
            "response": {
                "id": "resp_1",
                "status": "completed",
                "usage": {
                    "input_tokens": 100,
                    "output_tokens": 20,
                    "input_tokens_details": {"cached_tokens": 64},
                    "output_tokens_details": {"reasoning_tokens": 12},
                },
            },
        },
    )


def decode(data: bytes) -> list[ev.Event]:
    decoder = ResponsesUpstreamDecoder()
    return decoder.feed(data) + decoder.close()


def test_the_stream_decodes_to_reasoning_with_its_state_text_usage_and_a_finish() -> None:
    events = decode(reasoning_then_text())
    done = next(e for e in events if isinstance(e, ev.ReasoningDone))
    assert done.state is not None and done.state.dialect == "responses" and done.state.signature == ENCRYPTED
    assert "".join(e.text for e in events if isinstance(e, ev.ReasoningDelta)) == "Thinking"
    assert "".join(e.text for e in events if isinstance(e, ev.TextDelta)) == "Hello"
    usage = next(e for e in events if isinstance(e, ev.Usage))
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.reasoning_tokens) == (
        100,
        20,
        64,
        12,
    )
    assert events[-1] == ev.Finished("stop")


def test_incomplete_failed_and_error_events_end_the_stream() -> None:
    incomplete = decode(
        sse(
            {
                "type": "response.incomplete",
                "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
            }
        )
    )
    assert incomplete[-1] == ev.Finished("max_output_tokens")
    failed = decode(
        sse(
            {
                "type": "response.failed",
                "response": {
                    "status": "failed",
                    "error": {"code": "rate_limit_exceeded", "message": "slow down"},
                },
            }
        )
    )
    assert isinstance(failed[-1], ev.Failed) and failed[-1].code == "rate_limit_exceeded"
    error = decode(sse({"type": "error", "code": "server_error", "message": "boom"}))
    assert isinstance(error[-1], ev.Failed) and "boom" in error[-1].message
    cut = decode(reasoning_then_text().rsplit(b"event: response.completed", 1)[0])
    assert isinstance(cut[-1], ev.Failed)


def test_an_error_body_keeps_its_code() -> None:
    info = error_info(429, {"error": {"type": "requests", "code": "rate_limit_exceeded", "message": "slow"}})
    assert info.code == "rate_limit_exceeded" and "slow" in info.message
    answer = translate_error(
        "responses", 429, b'{"error": {"type": "rate_limit_exceeded", "message": "slow"}}', client="messages"
    )
    assert answer.status == 429 and answer.body["error"]["type"] == "rate_limit_error"


def _client_stream(chunks: list[bytes]) -> bytes:
    translation = encode()
    translator = stream_translator("responses", translation, new_id=sequential_ids())
    return b"".join([translator.feed(c) for c in chunks] + [translator.close()])


def test_the_client_gets_valid_anthropic_events_whatever_the_chunking() -> None:
    data = reasoning_then_text()
    expected = _client_stream([data])
    message, error = validate_stream(expected)
    assert error is None and message is not None and message.stop_reason == "end_turn"
    assert _client_stream(per_event(data)) == expected
    assert _client_stream(sized(data, 1)) == expected


def test_the_encrypted_reasoning_comes_back_byte_exact_on_the_next_turn() -> None:
    encrypted = "gAAAAAB" + "x/+=" * 50 + "\u00e9-end"
    message, _ = validate_stream(_client_stream([reasoning_then_text(encrypted)]))
    assert message is not None
    blocks = [block.model_dump(exclude_none=True) for block in message.content]
    thinking = next(b for b in blocks if b["type"] == "thinking")
    assert thinking["signature"] and thinking["signature"] != encrypted  # in the gateway's own format
    turn = encode(
        messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": blocks},
            {"role": "user", "content": "again"},
        ]
    )
    reasoning = [i for i in turn.body["input"] if i["type"] == "reasoning"]
    assert len(reasoning) == 1 and reasoning[0]["encrypted_content"] == encrypted
    assert turn.dropped == []


def test_a_whole_answer_reads_as_the_stream_does() -> None:
    translation = encode(stream=False)
    answer = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": [
            {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": ENCRYPTED},
            {
                "id": "fc_1",
                "type": "function_call",
                "call_id": "call_1",
                "name": "Bash",
                "arguments": '{"command":"ls"}',
            },
        ],
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    message = translate_response(
        "responses", translation, json.dumps(answer).encode(), new_id=sequential_ids()
    )
    assert message["stop_reason"] == "tool_use"
    assert message["content"][-1]["input"] == {"command": "ls"}


def test_the_recorded_gpt5_stream_carries_its_encrypted_content_to_the_client() -> None:
    data = (DATA / "openai_responses" / "function_call_gpt5_reasoning.sse").read_bytes()
    recorded = next(
        json.loads(line[len("data: ") :])["item"]["encrypted_content"]
        for line in data.decode().splitlines()
        if line.startswith("data: ") and '"response.output_item.done"' in line and '"reasoning"' in line
    )
    done = next(e for e in decode(data) if isinstance(e, ev.ReasoningDone))
    assert done.state is not None and done.state.signature == recorded
