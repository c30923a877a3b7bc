"""translators/families/claude/thinking.py: what a Responses `reasoning`, sampling and
`max_output_tokens` become on each Claude model, through both APIs that carry Claude (Anthropic
Messages and Bedrock Converse).

Every body is checked against the vendor SDK's description of the request (tests/support/vendor_types).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.support.vendor_types import assert_anthropic_request, assert_converse_request
from translators import Translation, translate_request
from translators.families.claude.models import lookup

BUDGET_ONLY = "claude-sonnet-4-5"  # takes `enabled` + budget, no effort knob
BOTH = "claude-sonnet-4-6"  # `enabled` (deprecated) or `adaptive`; effort low..max, no xhigh
ADAPTIVE_ONLY = "claude-opus-4-7"  # answers 400 to `enabled`; effort low..max with xhigh
NO_THINKING = "claude-3-5-haiku-20241022"
BEDROCK = {BUDGET_ONLY: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
           BOTH: "us.anthropic.claude-sonnet-4-6",
           ADAPTIVE_ONLY: "global.anthropic.claude-opus-4-7",
           NO_THINKING: "anthropic.claude-3-5-haiku-20241022-v1:0"}


def request(**fields: Any) -> dict[str, Any]:
    return {"model": "gpt-5.5", "stream": True,
            "input": [{"type": "message", "role": "user", "content": "hi"}], **fields}


def on_anthropic(model: str, **fields: Any) -> Translation:
    translation = translate_request(request(**fields), "anthropic", model)
    assert_anthropic_request(translation.body)
    return translation


def on_bedrock(model: str, **fields: Any) -> Translation:
    translation = translate_request(request(**fields), "bedrock", BEDROCK[model])
    assert_converse_request(translation.body, BEDROCK[model])
    return translation


def thinking_of(target: str, body: dict[str, Any]) -> dict[str, Any] | None:
    if target == "anthropic":
        return body.get("thinking")
    return body.get("additionalModelRequestFields", {}).get("thinking")


def effort_of(target: str, body: dict[str, Any]) -> str | None:
    config = body.get("output_config" if target == "anthropic" else "outputConfig", {})
    return config.get("effort")


TARGETS = {"anthropic": on_anthropic, "bedrock": on_bedrock}
both_apis = pytest.mark.parametrize("target", TARGETS)


# -- thinking type, per model --------------------------------------------------------------------
@both_apis
def test_a_model_that_takes_adaptive_thinking_gets_it_with_summaries_and_the_effort(target: str) -> None:
    for model in (BOTH, ADAPTIVE_ONLY):
        translation = TARGETS[target](model, reasoning={"effort": "high", "summary": "auto"})
        assert thinking_of(target, translation.body) == {"type": "adaptive", "display": "summarized"}
        assert effort_of(target, translation.body) == "high"
        assert "reasoning.effort" not in translation.dropped


@both_apis
def test_a_model_that_takes_only_a_budget_gets_a_budget_and_no_effort_knob(target: str) -> None:
    translation = TARGETS[target](BUDGET_ONLY, reasoning={"effort": "medium"})
    thinking = thinking_of(target, translation.body)
    assert thinking is not None and thinking["type"] == "enabled" and thinking["budget_tokens"] >= 1024
    assert effort_of(target, translation.body) is None


@both_apis
def test_a_model_without_thinking_gets_none_and_the_effort_is_reported(target: str) -> None:
    translation = TARGETS[target](NO_THINKING, reasoning={"effort": "high", "summary": "auto"})
    assert thinking_of(target, translation.body) is None and effort_of(target, translation.body) is None
    assert {"reasoning.effort", "reasoning.summary"} <= set(translation.dropped)


@both_apis
def test_summary_none_asks_claude_to_omit_the_thinking_text(target: str) -> None:
    translation = TARGETS[target](ADAPTIVE_ONLY, reasoning={"effort": "low", "summary": "none"})
    assert thinking_of(target, translation.body) == {"type": "adaptive", "display": "omitted"}


# -- effort words ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("effort", "word"), [("low", "low"), ("medium", "medium"), ("high", "high"),
                                              ("xhigh", "xhigh")])
@both_apis
def test_each_effort_claude_has_goes_as_the_same_word(target: str, effort: str, word: str) -> None:
    translation = TARGETS[target](ADAPTIVE_ONLY, reasoning={"effort": effort})
    assert effort_of(target, translation.body) == word
    assert translation.notes == [] and translation.dropped == []


@both_apis
def test_minimal_has_no_claude_word_and_goes_as_low_with_a_note(target: str) -> None:
    translation = TARGETS[target](ADAPTIVE_ONLY, reasoning={"effort": "minimal"})
    assert effort_of(target, translation.body) == "low"
    assert any("'minimal' sent as 'low'" in note for note in translation.notes)


@both_apis
def test_an_effort_the_model_lacks_becomes_the_nearest_one_below(target: str) -> None:
    translation = TARGETS[target](BOTH, reasoning={"effort": "xhigh"})  # 4.6 has high and max, no xhigh
    assert effort_of(target, translation.body) == "high"
    assert any("'xhigh' sent as 'high'" in note for note in translation.notes)


@both_apis
def test_effort_none_means_no_thinking_no_effort_and_nothing_lost(target: str) -> None:
    translation = TARGETS[target](ADAPTIVE_ONLY, reasoning={"effort": "none"})
    assert thinking_of(target, translation.body) is None and effort_of(target, translation.body) is None
    assert translation.dropped == []


def test_effort_none_on_a_model_that_cannot_stop_thinking_is_reported() -> None:
    always = replace(lookup(ADAPTIVE_ONLY), thinking=frozenset({"adaptive"}))  # as a vendor may publish
    translation = translate_request(request(reasoning={"effort": "none"}), "anthropic", ADAPTIVE_ONLY,
                                    capabilities=always)
    assert "reasoning.effort" in translation.dropped
    assert any("cannot turn thinking off" in note for note in translation.notes)


@both_apis
def test_a_forced_tool_choice_turns_thinking_off_but_keeps_the_effort_capped_at_high(target: str) -> None:
    tools = [{"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}]
    translation = TARGETS[target](ADAPTIVE_ONLY, reasoning={"effort": "xhigh"}, tools=tools,
                                  tool_choice="required")
    assert thinking_of(target, translation.body) is None
    assert effort_of(target, translation.body) == "high"
    assert any("forced tool choice" in note for note in translation.notes)


def test_capabilities_read_from_the_vendor_decide_over_the_table() -> None:
    vendor = replace(lookup(BUDGET_ONLY), source="vendor", thinking=frozenset({"adaptive", "disabled"}),
                     effort=frozenset({"low", "medium", "high"}))
    translation = translate_request(request(reasoning={"effort": "medium"}), "anthropic", BUDGET_ONLY,
                                    capabilities=vendor)
    assert translation.body["thinking"]["type"] == "adaptive"
    assert translation.body["output_config"]["effort"] == "medium"


# -- sampling and max_tokens -------------------------------------------------------------------------
@both_apis
def test_a_model_that_refuses_both_sampling_knobs_gets_temperature_only(target: str) -> None:
    translation = TARGETS[target](ADAPTIVE_ONLY, temperature=0.3, top_p=0.9)
    sent = translation.body if target == "anthropic" else translation.body["inferenceConfig"]
    assert sent["temperature"] == 0.3 and "top_p" not in sent and "topP" not in sent
    assert "top_p" in translation.dropped


def test_an_older_model_takes_both_sampling_knobs() -> None:
    translation = translate_request(request(temperature=0.3, top_p=0.9), "anthropic",
                                    "claude-sonnet-4-20250514")
    assert (translation.body["temperature"], translation.body["top_p"]) == (0.3, 0.9)
    assert translation.dropped == []


@both_apis
def test_thinking_keeps_the_default_sampling_and_reports_what_the_client_set(target: str) -> None:
    translation = TARGETS[target](ADAPTIVE_ONLY, reasoning={"effort": "low"}, temperature=0.3)
    assert "temperature" not in translation.body and "temperature" in translation.dropped


@both_apis
def test_max_output_tokens_above_the_models_limit_is_lowered_and_noted(target: str) -> None:
    translation = TARGETS[target](BOTH, max_output_tokens=500_000)
    sent = translation.body["max_tokens"] if target == "anthropic" else \
        translation.body["inferenceConfig"]["maxTokens"]
    assert sent == lookup(BOTH).max_output_tokens
    assert any("lowered" in note for note in translation.notes)


# -- structured output -------------------------------------------------------------------------------
SCHEMA = {"type": "object",
          "properties": {"city": {"type": "string"}, "count": {"type": "integer", "minimum": 1}},
          "required": ["city", "count"], "additionalProperties": False}
FORMAT = {"format": {"type": "json_schema", "name": "answer", "schema": SCHEMA, "strict": True}}


def test_a_json_schema_becomes_anthropics_output_config_format() -> None:
    translation = on_anthropic(ADAPTIVE_ONLY, text=FORMAT)
    schema = translation.body["output_config"]["format"]["schema"]
    assert translation.body["output_config"]["format"]["type"] == "json_schema"
    assert schema["required"] == ["city", "count"] and schema["additionalProperties"] is False
    # Claude's grammar has no numeric bounds: removed, reported, and told to the model in words
    assert "minimum" not in schema["properties"]["count"]
    assert "minimum: 1" in schema["properties"]["count"]["description"]
    assert translation.dropped == ["text.format.schema.properties.count.minimum"]


def test_a_json_schema_becomes_bedrocks_text_format_as_a_json_string() -> None:
    import json

    translation = on_bedrock(ADAPTIVE_ONLY, text=FORMAT)
    fmt = translation.body["outputConfig"]["textFormat"]
    assert fmt["type"] == "json_schema" and fmt["structure"]["jsonSchema"]["name"] == "answer"
    sent = json.loads(fmt["structure"]["jsonSchema"]["schema"])
    assert sent["properties"]["city"] == {"type": "string"} and sent["additionalProperties"] is False


@both_apis
def test_structured_output_on_a_model_without_it_is_reported(target: str) -> None:
    translation = TARGETS[target](NO_THINKING, text=FORMAT)
    assert "output_config" not in translation.body and "outputConfig" not in translation.body
    assert "text.format" in translation.dropped
    assert any("not enforced" in note for note in translation.notes)


@both_apis
def test_effort_and_schema_travel_together(target: str) -> None:
    translation = TARGETS[target](ADAPTIVE_ONLY, text=FORMAT, reasoning={"effort": "medium"})
    config = translation.body["output_config" if target == "anthropic" else "outputConfig"]
    assert config["effort"] == "medium" and ("format" in config or "textFormat" in config)


# -- lifecycle ---------------------------------------------------------------------------------------
def test_a_deprecated_model_is_named_in_the_flows_notes() -> None:
    translation = on_anthropic(BUDGET_ONLY)
    assert any("claude-sonnet-4-5 is deprecated" in note and "2026-11-30" in note
               for note in translation.notes)


def test_a_current_model_gets_no_lifecycle_note() -> None:
    assert on_anthropic(ADAPTIVE_ONLY).notes == []


# -- inputs the model cannot read -------------------------------------------------------------------
def test_an_image_goes_to_a_model_that_reads_images_and_is_reported_for_one_that_does_not() -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look"}, image]}
    body = {"model": "gpt-5.5", "input": [item]}
    seen = translate_request(body, "anthropic", ADAPTIVE_ONLY)
    assert [b["type"] for b in seen.body["messages"][0]["content"]] == ["text", "image"]
    blind = replace(lookup(ADAPTIVE_ONLY), image_input=False)  # as a vendor may publish for a model
    unseen = translate_request(body, "anthropic", ADAPTIVE_ONLY, capabilities=blind)
    assert [b["type"] for b in unseen.body["messages"][0]["content"]] == ["text"]
    assert unseen.dropped == ["input[0].content[1]"]
