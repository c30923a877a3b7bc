"""encode: the Chat Completions body around the messages (docs/chat.md "Request", "DeepSeek")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.translators.chat.chatdata import function, responses_request
from translators import Translation, translate_request


def _chat(model: str = "gpt-4o", tools: list[dict[str, Any]] | None = None, **extra: Any) -> Translation:
    return translate_request(responses_request(model, tools, **extra), "chat")


def test_path_is_chat_completions_relative_to_the_base_url() -> None:
    assert _chat().path == "/chat/completions"


def test_streaming_asks_for_usage_in_the_stream() -> None:
    body = _chat().body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_non_streaming_request_sends_no_stream_fields() -> None:
    body = _chat(stream=False).body
    assert "stream" not in body and "stream_options" not in body


@pytest.mark.parametrize(
    ("model", "key", "absent"),
    [
        ("gpt-5.5", "max_completion_tokens", "max_tokens"),
        ("deepseek-chat", "max_tokens", "max_completion_tokens"),
    ],
)
def test_output_limit_uses_the_key_the_server_expects(model: str, key: str, absent: str) -> None:
    body = _chat(model, max_output_tokens=321).body
    assert body[key] == 321 and absent not in body


@pytest.mark.parametrize(
    ("effort", "sent"),
    [("minimal", "low"), ("low", "low"), ("medium", "high"), ("high", "high"), ("xhigh", "high")],
)
def test_deepseek_effort_follows_deepseeks_mapping_with_thinking_on(effort: str, sent: str) -> None:
    body = _chat("deepseek-v4-pro", reasoning={"effort": effort}).body
    assert body["reasoning_effort"] == sent and body["thinking"] == {"type": "enabled"}


def test_deepseek_effort_none_turns_thinking_off() -> None:
    body = _chat("deepseek-v4-flash", reasoning={"effort": "none"}).body
    assert body["thinking"] == {"type": "disabled"} and "reasoning_effort" not in body


def test_openai_reasoning_model_takes_the_effort_as_given() -> None:
    assert _chat("gpt-5.5", reasoning={"effort": "xhigh"}).body["reasoning_effort"] == "xhigh"


def test_effort_for_an_openai_model_without_reasoning_is_reported_dropped() -> None:
    translation = _chat("gpt-4o", reasoning={"effort": "high"})
    assert "reasoning_effort" not in translation.body and "reasoning.effort" in translation.dropped


def test_compatible_server_gets_the_nearest_common_effort_with_a_note() -> None:
    translation = _chat("qwen3", reasoning={"effort": "xhigh"})
    assert translation.body["reasoning_effort"] == "high"
    assert any("xhigh" in note for note in translation.notes)


def test_reasoning_summary_for_openai_is_reported_dropped() -> None:
    assert "reasoning.summary" in _chat("gpt-5.5", reasoning={"effort": "low", "summary": "auto"}).dropped


def test_verbosity_goes_to_gpt5_models() -> None:
    assert _chat("gpt-5.5", text={"verbosity": "low"}).body["verbosity"] == "low"


def test_verbosity_for_other_models_is_reported_dropped() -> None:
    translation = _chat("deepseek-chat", text={"verbosity": "low"})
    assert "verbosity" not in translation.body and "text.verbosity" in translation.dropped


def test_sampling_parameters_pass_through_to_non_reasoning_models() -> None:
    body = _chat("qwen3", temperature=0.3, top_p=0.9).body
    assert (body["temperature"], body["top_p"]) == (0.3, 0.9)


def test_sampling_parameters_for_openai_reasoning_models_are_reported_dropped() -> None:
    translation = _chat("o3", temperature=0.3)
    assert "temperature" not in translation.body and "temperature" in translation.dropped


def test_json_schema_output_becomes_response_format() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    body = _chat(
        text={"format": {"type": "json_schema", "name": "out", "schema": schema, "strict": True}}
    ).body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "out", "schema": schema, "strict": True},
    }


def test_json_schema_output_for_deepseek_is_json_mode_with_the_schema_in_the_system_prompt() -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    fmt = {"type": "json_schema", "name": "o", "schema": schema, "strict": True}
    translation = _chat("deepseek-chat", text={"format": fmt})
    body = translation.body
    assert body["response_format"] == {"type": "json_object"}
    system = body["messages"][0]
    assert system["role"] == "system" and "JSON" in system["content"]
    assert json.loads(system["content"].rsplit("\n", 1)[1]) == schema
    # nothing enforces the schema there: the strictness is lost, and the flow says how it was sent
    assert translation.dropped == ["text.format.strict"]
    assert any("json_object" in note for note in translation.notes)


def test_a_json_schema_description_goes_along_where_the_format_has_one() -> None:
    fmt = {"type": "json_schema", "name": "out", "description": "the answer", "schema": {"type": "object"}}
    assert _chat(text={"format": fmt}).body["response_format"]["json_schema"]["description"] == "the answer"


def test_unknown_keys_of_a_json_schema_format_are_reported() -> None:
    fmt = {"type": "json_schema", "name": "out", "schema": {"type": "object"}, "examples": [{}]}
    assert "text.format.examples" in _chat(text={"format": fmt}).dropped


def test_parallel_tool_calls_goes_with_the_tools() -> None:
    assert _chat(tools=[function("f")], parallel_tool_calls=False).body["parallel_tool_calls"] is False


def test_tool_settings_without_tools_are_reported_dropped() -> None:
    translation = _chat(tools=[], parallel_tool_calls=False, tool_choice="required")
    assert "parallel_tool_calls" not in translation.body and "tool_choice" not in translation.body
    assert {"parallel_tool_calls", "tool_choice"} <= set(translation.dropped)
    assert {"parallel_tool_calls", "tool_choice"} <= set(translation.cosmetic)  # nothing to call anyway


@pytest.mark.parametrize("choice", ["none", "required"])
def test_tool_choice_modes_pass_through(choice: str) -> None:
    assert _chat(tools=[function("f")], tool_choice=choice).body["tool_choice"] == choice


def test_forcing_one_function_names_it_by_its_wire_name() -> None:
    body = _chat(tools=[function("f")], tool_choice={"type": "function", "name": "f"}).body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "f"}}


def test_forcing_an_undeclared_tool_is_reported_dropped() -> None:
    translation = _chat(tools=[function("f")], tool_choice={"type": "function", "name": "nope"})
    assert "tool_choice" not in translation.body and "tool_choice" in translation.dropped
