"""What the Chat servers people run accept (docs/chat.md "Compatible servers", "Server settings").

Found against llama-cpp-python 0.3.36's OpenAI server, whose request types (`llama_cpp/llama_types.py`)
are the strictest of the common servers: an assistant `content` is a string that may be absent but
never null, `system` and `tool` content is a string, and `response_format` is `text` or
`json_object` with an optional `schema`. Its streams repeat each tool call as the legacy
`function_call` and carry no usage.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tests.translators.chat.chatdata import (
    chunk,
    client_stream,
    function,
    responses_request,
    run_report,
    sse,
    translation,
)
from tests.translators.streamcheck import done_items, terminal
from translators import Translation, UnsupportedFeature, translate_request, translate_response
from translators.chat.models import capabilities
from translators.core.ids import sequential_ids
from translators.core.report import Report

LOCAL = "SmolLM2-135M-Instruct.Q4_1.gguf"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
          "additionalProperties": False}
USAGE = {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}
FORMAT = {"type": "json_schema", "name": "place", "schema": SCHEMA, "strict": True}


def _chat(body: dict[str, Any], model: str = "qwen3", **stated: str) -> Translation:
    """`body` translated for a Chat route whose server the user described with `stated`
    (the route keys of translators/chat/settings.py)."""
    caps = capabilities(model)
    return translate_request(body, "chat", model, capabilities=replace(caps, extra={**caps.extra, **stated}))


def _message(role: str, *texts: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": t} for t in texts]}


ROUND_TRIP = [
    _message("user", "weather in Paris?"),
    {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": '{"city": "Paris"}'},
    {"type": "function_call_output", "call_id": "call_1",
     "output": [{"type": "input_text", "text": "sunny"}, {"type": "input_text", "text": "21 C"}]},
]


# -- messages -----------------------------------------------------------------------------------

def test_an_assistant_message_of_tool_calls_only_has_empty_string_content_not_null() -> None:
    messages = _chat(responses_request("m", [function("weather")], input=ROUND_TRIP)).body["messages"]
    assistant = next(m for m in messages if m["role"] == "assistant")
    assert assistant["content"] == "" and assistant["tool_calls"][0]["function"]["name"] == "weather"


def test_an_assistant_message_with_text_keeps_its_text_beside_the_calls() -> None:
    items = [ROUND_TRIP[0], _message("assistant", "Let me look."), *ROUND_TRIP[1:]]
    messages = _chat(responses_request("m", [function("weather")], input=items)).body["messages"]
    assert [m["content"] for m in messages if m["role"] == "assistant"] == ["Let me look."]


def test_a_tool_output_of_several_text_parts_is_one_string() -> None:
    messages = _chat(responses_request("m", [function("weather")], input=ROUND_TRIP)).body["messages"]
    assert [m["content"] for m in messages if m["role"] == "tool"] == ["sunny\n21 C"]


def test_a_developer_message_of_several_parts_mid_conversation_is_one_system_string() -> None:
    items = [_message("user", "a"), _message("developer", "rule one", "rule two"), _message("user", "b")]
    messages = _chat(responses_request("m", input=items)).body["messages"]
    assert messages[0] == {"role": "system", "content": "rule one\nrule two"}  # moved first (docs/chat.md)


def test_a_route_whose_server_takes_lists_keeps_tool_parts_as_lists_the_system_text_a_string() -> None:
    items = [*ROUND_TRIP, _message("developer", "rule one", "rule two")]
    body = responses_request("m", [function("weather")], input=items)
    messages = _chat(body, message_parts="list").body["messages"]
    assert [[p["text"] for p in m["content"]] for m in messages if m["role"] == "tool"] == [["sunny", "21 C"]]
    # every system text is joined into the one opening message (docs/chat.md "System first")
    assert [m for m in messages if m["role"] == "system"] == [
        {"role": "system", "content": "rule one\nrule two"}]


def test_user_text_parts_are_one_string_as_a_chat_template_may_join_them() -> None:
    """SmolLM2's template under llama-cpp-python concatenates `content` as a string: a list is a
    500 (docs/chat.md "Compatible servers")."""
    items = [_message("user", "one", "two")]
    assert _chat(responses_request("m", input=items)).body["messages"][0]["content"] == "one\ntwo"


def test_user_content_with_an_image_stays_a_list_of_parts() -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look"}, image]}
    content = _chat(responses_request("m", input=[user])).body["messages"][0]["content"]
    assert [part["type"] for part in content] == ["text", "image_url"]


def test_a_route_whose_server_takes_lists_keeps_user_text_parts_as_a_list() -> None:
    items = [_message("user", "one", "two")]
    messages = _chat(responses_request("m", input=items), message_parts="list").body["messages"]
    assert messages[0]["content"] == [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]


def test_an_image_in_a_system_message_is_reported_dropped() -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    developer = {"type": "message", "role": "developer",
                 "content": [{"type": "input_text", "text": "r"}, image]}
    translated = _chat(responses_request("m", input=[_message("user", "a"), developer]))
    assert translated.body["messages"][0] == {"role": "system", "content": "r"}
    assert translated.dropped == ["input[1].content[1]"]


# -- the legacy function_call --------------------------------------------------------------------

def _llama_cpp_call_stream(*, usage: bool = False) -> bytes:
    """A tool call streamed the way llama-cpp-python's function-calling handlers write it: every
    piece both as a `tool_calls` fragment and as the legacy `function_call`."""
    pieces = ['{"city": ', '"Paris"}']
    call = [chunk({"role": "assistant", "content": None, "function_call": None, "tool_calls": None})]
    for piece in pieces:
        call.append(chunk({"role": None, "content": None,
                           "function_call": {"name": "weather", "arguments": piece},
                           "tool_calls": [{"index": 0, "id": "call__0_weather_cmpl-1", "type": "function",
                                           "function": {"name": "weather", "arguments": piece}}]}))
    call.append(chunk({"role": None, "content": None, "function_call": None, "tool_calls": None},
                      finish="tool_calls"))
    if usage:
        call.append(chunk(choices=False, usage=USAGE))
    return sse(*call)


def test_a_function_call_repeating_the_tool_calls_beside_them_is_neither_read_twice_nor_reported() -> None:
    events, report = run_report(_llama_cpp_call_stream(), translation(tools=[function("weather")]))
    calls = [i for i in done_items(events) if i["type"] == "function_call"]
    assert [(c["name"], json.loads(c["arguments"]), c["call_id"]) for c in calls] == [
        ("weather", {"city": "Paris"}, "call__0_weather_cmpl-1")]
    assert report.dropped == []


def test_a_whole_answer_with_function_call_beside_tool_calls_is_one_call_and_nothing_reported() -> None:
    call = {"name": "weather", "arguments": '{"city": "Paris"}'}
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": LOCAL,
            "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None,
                         "message": {"role": "assistant", "content": None, "function_call": call,
                                     "tool_calls": [{"id": "call_1", "type": "function",
                                                     "function": call}]}}],
            "usage": USAGE}
    trans = translation(tools=[function("weather")], stream=False)
    report = Report()
    answer = translate_response("chat", trans, json.dumps(body).encode(), new_id=sequential_ids(),
                                clock=lambda: 0, report=report)
    assert [(o["type"], o["call_id"]) for o in answer["output"]] == [("function_call", "call_1")]
    assert report.dropped == []


def test_a_legacy_function_call_alone_is_read_as_a_tool_call_with_a_note() -> None:
    stream = sse(
        chunk({"role": "assistant", "content": None, "function_call": {"name": "weather", "arguments": ""}}),
        chunk({"function_call": {"arguments": '{"city": "Paris"}'}}),
        chunk(finish="function_call"),
    )
    events, report = run_report(stream, translation(tools=[function("weather")]))
    calls = [i for i in done_items(events) if i["type"] == "function_call"]
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [("weather", {"city": "Paris"})]
    assert calls[0]["call_id"]  # made up: a legacy call has no id
    assert report.dropped == []
    assert any("legacy function_call" in note for note in report.notes)


# -- usage --------------------------------------------------------------------------------------

def test_a_stream_without_usage_leaves_the_usage_out_and_says_so() -> None:
    events, report = run_report(_llama_cpp_call_stream(), translation(tools=[function("weather")]))
    assert terminal(events)["response"]["usage"] is None
    assert any("sent no usage" in note for note in report.notes)


def test_a_stream_with_usage_says_nothing_about_it() -> None:
    events, report = run_report(_llama_cpp_call_stream(usage=True), translation(tools=[function("weather")]))
    assert terminal(events)["response"]["usage"]["total_tokens"] == 13
    assert not any("usage" in note for note in report.notes)


# -- structured output --------------------------------------------------------------------------

def _formatted(model: str = "qwen3", fmt: dict[str, Any] = FORMAT, **stated: str) -> Translation:
    return _chat(responses_request(model, input="where?", text={"format": fmt}), model, **stated)


def test_json_schema_mode_writes_openais_structured_outputs() -> None:
    assert _formatted(structured_output="json_schema").body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "place", "schema": SCHEMA, "strict": True}}


def test_json_object_mode_writes_the_schema_the_way_llama_cpp_python_takes_it() -> None:
    translated = _formatted(structured_output="json_object")
    assert translated.body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert translated.dropped == [] and translated.notes == []
    assert [m["role"] for m in translated.body["messages"]] == ["user"]  # no schema in the prompt


def test_json_object_mode_reports_a_description_it_cannot_carry() -> None:
    translated = _formatted(fmt={**FORMAT, "description": "a place"}, structured_output="json_object")
    assert translated.dropped == ["text.format.description"]


def test_prompt_mode_states_the_schema_in_a_system_message_with_a_note() -> None:
    translated = _formatted(structured_output="prompt")
    assert translated.body["response_format"] == {"type": "json_object"}
    system = translated.body["messages"][0]
    assert system["role"] == "system" and json.loads(system["content"].rsplit("\n", 1)[1]) == SCHEMA
    assert translated.dropped == ["text.format.strict"]
    assert any("schema in the system prompt" in note for note in translated.notes)


@pytest.mark.parametrize(("model", "kind"), [
    ("qwen3", "json_schema"),  # vLLM, SGLang, Ollama, LM Studio, OpenRouter, OpenAI
    ("deepseek-chat", "json_object"),  # the prompt mode: DeepSeek takes no json_schema
    (LOCAL, "json_object"),  # a GGUF file: llama-cpp-python or llama.cpp's server
])
def test_auto_mode_follows_what_the_model_name_tells(model: str, kind: str) -> None:
    assert _formatted(model).body["response_format"]["type"] == kind
    assert _formatted(model, structured_output="auto").body == _formatted(model).body


def test_the_gguf_default_carries_the_schema_and_deepseeks_does_not() -> None:
    assert _formatted(LOCAL).body["response_format"]["schema"] == SCHEMA
    assert "schema" not in _formatted("deepseek-chat").body["response_format"]


def test_a_route_setting_wins_over_the_default_of_the_model_name() -> None:
    assert _formatted(LOCAL, structured_output="json_schema").body["response_format"]["type"] == "json_schema"


def test_a_mode_that_does_not_exist_refuses_the_request_with_a_responses_error() -> None:
    with pytest.raises(UnsupportedFeature) as refused:
        _formatted(structured_output="xml")
    error = refused.value.to_body()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "text.format"
    assert "'xml'" in error["message"] and "json_object" in error["message"]


def test_a_request_without_text_format_is_not_refused_whatever_the_mode() -> None:
    assert "response_format" not in _chat(responses_request("m"), structured_output="xml").body


def test_a_stream_answer_in_json_object_mode_reads_like_any_other() -> None:
    stream = sse(chunk({"role": "assistant", "content": '{"city": '}), chunk({"content": '"Paris"}'}),
                 chunk(finish="stop"))
    items = done_items(client_stream(stream, _formatted(structured_output="json_object")))
    assert json.loads(items[0]["content"][0]["text"]) == {"city": "Paris"}

