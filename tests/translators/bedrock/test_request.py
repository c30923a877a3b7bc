"""translators/bedrock/request.py: endpoint, body shape, system prompt, caching, inference and thinking."""

from __future__ import annotations

import json
import re
from typing import Any

import botocore.session
import pytest
from botocore.validate import ParamValidator

from tests.translators.bedrock.support import (
    CLAUDE,
    CODEX_FILES,
    LLAMA,
    NOVA,
    OLD_CLAUDE,
    SHELL,
    assistant,
    bedrock,
    blocks,
    codex_request,
    request,
    user,
)

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")


# -- endpoint and shape --------------------------------------------------------------------------
def test_streaming_request_posts_to_converse_stream_with_the_model_id_url_encoded() -> None:
    translation = bedrock(request("hi"), CLAUDE)
    assert translation.path == "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"


def test_non_streaming_request_posts_to_converse() -> None:
    assert bedrock(request("hi", stream=False), NOVA).path.endswith("/converse")


def test_model_id_travels_in_the_path_only() -> None:
    translation = bedrock(request("hi"), CLAUDE)
    assert "model" not in translation.body and "modelId" not in translation.body


@pytest.mark.parametrize("model", [CLAUDE, NOVA])
@pytest.mark.parametrize("name", CODEX_FILES)
def test_codex_requests_validate_against_the_bedrock_service_model(name: str, model: str) -> None:
    translation = bedrock(codex_request(name), model)
    shape = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model(
        "ConverseStream").input_shape
    report = ParamValidator().validate({**translation.body, "modelId": model}, shape)
    assert not report.has_errors(), report.generate_report()


@pytest.mark.parametrize("name", CODEX_FILES)
def test_tool_names_and_tool_use_ids_match_bedrock_patterns(name: str) -> None:
    translation = bedrock(codex_request(name))
    specs = translation.body.get("toolConfig", {}).get("tools", [])
    assert all(TOOL_NAME.fullmatch(s["toolSpec"]["name"]) for s in specs)
    ids = [b.get("toolUse", b.get("toolResult", {})).get("toolUseId") for b in blocks(translation)]
    assert all(TOOL_USE_ID.fullmatch(i) for i in ids if i is not None)


# -- system prompt and caching -------------------------------------------------------------------
def test_developer_messages_become_system_text_blocks() -> None:
    body = codex_request("request_classic_gpt55.json")
    developer = ["\n".join(p["text"] for p in item["content"])
                 for item in body["input"] if item.get("role") == "developer"]
    system = bedrock(body, NOVA).body["system"]
    assert [b["text"] for b in system if "text" in b] == developer


def test_system_prompt_ends_with_a_cache_point_for_claude() -> None:
    system = bedrock(request("hi", instructions="Be brief."), CLAUDE).body["system"]
    assert system == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]


def test_last_message_and_the_previous_requests_end_get_a_cache_point_for_claude() -> None:
    messages = bedrock(request([user("a"), assistant("b"), user("c")]), CLAUDE).body["messages"]
    assert messages[-1]["content"][-1] == {"cachePoint": {"type": "default"}}
    assert messages[0]["content"] == [{"text": "a"}, {"cachePoint": {"type": "default"}}]
    assert sum("cachePoint" in b for m in messages for b in m["content"]) == 2


@pytest.mark.parametrize("model", [LLAMA, OLD_CLAUDE])
def test_models_without_prompt_caching_get_no_cache_points(model: str) -> None:
    body = bedrock(request([user("a")], instructions="Be brief."), model).body
    assert "cachePoint" not in json.dumps(body)


# -- inference and thinking ----------------------------------------------------------------------
def thinking(body: dict[str, Any]) -> dict[str, Any] | None:
    return body.get("additionalModelRequestFields", {}).get("thinking")


def test_sampling_and_length_go_to_inference_config() -> None:
    body = bedrock(request("hi", max_output_tokens=500, temperature=0.3, top_p=0.9), NOVA).body
    assert body["inferenceConfig"] == {"maxTokens": 500, "temperature": 0.3, "topP": 0.9}


def test_temperature_above_bedrocks_range_is_clamped_and_noted() -> None:
    translation = bedrock(request("hi", temperature=1.7), NOVA)
    assert translation.body["inferenceConfig"]["temperature"] == 1.0
    assert any("clamped" in note for note in translation.notes)


def test_claude_gets_a_default_max_tokens_other_models_keep_bedrocks() -> None:
    assert bedrock(request("hi"), CLAUDE).body["inferenceConfig"]["maxTokens"] > 16384
    assert "inferenceConfig" not in bedrock(request("hi"), NOVA).body


def test_effort_becomes_a_claude_thinking_budget() -> None:
    low = thinking(bedrock(request("hi", reasoning={"effort": "low"}), CLAUDE).body)
    high = thinking(bedrock(request("hi", reasoning={"effort": "high"}), CLAUDE).body)
    assert low is not None and high is not None
    assert low["type"] == high["type"] == "enabled"
    assert 1024 <= low["budget_tokens"] < high["budget_tokens"]


def test_thinking_budget_stays_below_max_tokens() -> None:
    body = bedrock(request("hi", reasoning={"effort": "high"}, max_output_tokens=4000), CLAUDE).body
    assert thinking(body)["budget_tokens"] < body["inferenceConfig"]["maxTokens"] == 4000


def test_max_tokens_too_small_for_a_budget_turns_thinking_off() -> None:
    translation = bedrock(request("hi", reasoning={"effort": "high"}, max_output_tokens=1500), CLAUDE)
    assert thinking(translation.body) is None
    assert "reasoning.effort" in translation.dropped


@pytest.mark.parametrize("model", [NOVA, OLD_CLAUDE])
def test_effort_is_reported_dropped_for_models_without_thinking(model: str) -> None:
    translation = bedrock(request("hi", reasoning={"effort": "medium"}), model)
    assert "additionalModelRequestFields" not in translation.body
    assert "reasoning.effort" in translation.dropped


def test_forced_tool_choice_turns_thinking_off() -> None:
    translation = bedrock(request("hi", tools=[SHELL], tool_choice="required", reasoning={"effort": "low"}))
    assert thinking(translation.body) is None
    assert "reasoning.effort" in translation.dropped


def test_thinking_drops_temperature_and_top_p() -> None:
    translation = bedrock(request("hi", reasoning={"effort": "low"}, temperature=0.2, top_p=0.5), CLAUDE)
    assert {"temperature", "topP"}.isdisjoint(translation.body["inferenceConfig"])
    assert {"temperature", "top_p"} <= set(translation.dropped)


def test_summary_without_thinking_is_reported() -> None:
    assert "reasoning.summary" in bedrock(request("hi", reasoning={"summary": "auto"}), CLAUDE).dropped


def test_verbosity_and_output_schema_are_reported() -> None:
    text = {"verbosity": "low", "format": {"type": "json_schema", "name": "o", "schema": {"type": "object"}}}
    assert {"text.verbosity", "text.format"} <= set(bedrock(request("hi", text=text)).dropped)


