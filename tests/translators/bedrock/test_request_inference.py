"""translators/bedrock/request.py: inferenceConfig, Claude thinking and reasoning replay."""

from __future__ import annotations

from typing import Any

import pytest

from tests.translators.bedrock.support import (
    CLAUDE,
    NOVA,
    OLD_CLAUDE,
    SHELL,
    assistant,
    bedrock,
    blocks,
    call,
    kinds,
    output,
    reasoning,
    request,
    user,
)
from translators.ir.request import VendorState

SIGNED = VendorState(dialect="bedrock", text="I should list files.", signature="c2lnbmF0dXJl")


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


# -- reasoning replay -------------------------------------------------------------------------------
def tool_loop(state: VendorState) -> dict[str, Any]:
    return request([user("list files"), reasoning(state), call("c1"), output("c1")],
                   tools=[SHELL], reasoning={"effort": "medium"})


def test_signed_reasoning_is_replayed_before_the_tool_use_in_the_assistant_turn() -> None:
    translation = bedrock(tool_loop(SIGNED), CLAUDE)
    turn = translation.body["messages"][1]
    assert kinds(turn) == ["reasoningContent", "toolUse"]
    assert turn["content"][0]["reasoningContent"]["reasoningText"] == {"text": SIGNED.text,
                                                                       "signature": SIGNED.signature}
    assert thinking(translation.body) is not None


def test_redacted_reasoning_is_replayed_as_redacted_content() -> None:
    state = VendorState(dialect="bedrock", redacted="b3BhcXVl")
    turn = bedrock(tool_loop(state), CLAUDE).body["messages"][1]
    assert turn["content"][0] == {"reasoningContent": {"redactedContent": "b3BhcXVl"}}


def test_reasoning_from_another_dialect_is_reported_not_replayed() -> None:
    foreign = VendorState(dialect="anthropic", text="t", signature="s")
    translation = bedrock(request([user("a"), reasoning(foreign), assistant("b"), user("c")],
                                  reasoning={"effort": "medium"}), CLAUDE)
    assert not any("reasoningContent" in b for b in blocks(translation))
    assert "input[1]" in translation.dropped


def test_open_tool_turn_without_signed_reasoning_turns_thinking_off() -> None:
    translation = bedrock(request([user("list files"), call("c1"), output("c1")], tools=[SHELL],
                                  reasoning={"effort": "medium"}), CLAUDE)
    assert thinking(translation.body) is None
    assert any("no signed reasoning" in note for note in translation.notes)


def test_reasoning_is_not_replayed_when_thinking_is_off() -> None:
    translation = bedrock(tool_loop(SIGNED), NOVA)
    assert not any("reasoningContent" in b for b in blocks(translation))
    assert "input[1]" in translation.dropped
