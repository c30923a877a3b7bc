"""translators/bedrock/models.py: what a Bedrock model id says about thinking, effort and prompt
caching (Claude ids answer from the Anthropic table)."""

from __future__ import annotations

import pytest

from translators.bedrock.models import cache_points, capabilities, is_claude


@pytest.mark.parametrize("model", [
    "anthropic.claude-sonnet-4-20250514-v1:0",
    "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
    "global.anthropic.claude-haiku-4-5-20251001-v1:0",
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-1-20250805-v1:0",
])
def test_claude_3_7_to_4_5_think_with_a_budget_and_cache(model: str) -> None:
    caps = capabilities(model)
    assert is_claude(model) and "enabled" in caps.thinking and "adaptive" not in caps.thinking
    assert cache_points(caps)


@pytest.mark.parametrize("model", [
    "anthropic.claude-opus-4-7",
    "global.anthropic.claude-sonnet-5-5",
    "eu.anthropic.claude-opus-4-8-v1",
])
def test_current_claude_thinks_adaptively_with_effort(model: str) -> None:
    caps = capabilities(model)
    assert caps.thinking == {"adaptive", "disabled"} and "xhigh" in caps.effort and cache_points(caps)


def test_claude_4_6_takes_both_thinking_types() -> None:
    assert {"enabled", "adaptive"} <= capabilities("us.anthropic.claude-sonnet-4-6").thinking


@pytest.mark.parametrize("model", [
    "anthropic.claude-3-5-sonnet-20240620-v1:0",
    "anthropic.claude-3-haiku-20240307-v1:0",
    "anthropic.claude-v2:1",
    "anthropic.claude-instant-v1",
])
def test_older_claude_neither_thinks_nor_caches(model: str) -> None:
    caps = capabilities(model)
    assert is_claude(model) and not caps.thinks and not cache_points(caps)
    assert caps.lifecycle == "retired"


@pytest.mark.parametrize("model", [
    "us.amazon.nova-micro-v1:0",
    "meta.llama3-70b-instruct-v1:0",
    "openai.gpt-oss-120b-1:0",
    "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
])
def test_other_models_are_not_claude(model: str) -> None:
    caps = capabilities(model)
    assert not is_claude(model)
    assert not caps.thinks and not caps.effort and not caps.structured_output and not cache_points(caps)


def test_bedrock_has_no_server_side_web_search_even_for_claude() -> None:
    assert not capabilities("global.anthropic.claude-sonnet-5-5").web_search
