"""translators/bedrock/models.py: what a Bedrock model id says about thinking, effort and prompt
caching (Claude ids answer from the Anthropic table)."""

from __future__ import annotations

import pytest

from translators.bedrock.models import CachePoints, cache_points, capabilities, is_claude


@pytest.mark.parametrize("model", [
    "anthropic.claude-sonnet-4-20250514-v1:0",
    "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
    "global.anthropic.claude-haiku-4-5-20251001-v1:0",
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-1-20250805-v1:0",
])
def test_claude_3_7_to_4_5_think_with_a_budget_and_cache(model: str) -> None:
    caps = capabilities(model)
    assert is_claude(model) and "enabled" in caps.thinking and "adaptive" not in caps.thinking
    assert cache_points(model) == CachePoints(tools=True, ttl=True, lookback=True)


@pytest.mark.parametrize("model", [
    "anthropic.claude-opus-4-7",
    "global.anthropic.claude-sonnet-5-5",
    "eu.anthropic.claude-opus-4-8-v1",
])
def test_current_claude_thinks_adaptively_with_effort(model: str) -> None:
    caps = capabilities(model)
    assert caps.thinking == {"adaptive", "disabled"} and "xhigh" in caps.effort and cache_points(model)


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
    assert is_claude(model) and not caps.thinks and cache_points(model) is None
    assert caps.lifecycle == "retired"


def test_claude_3_5_haiku_does_not_think_but_caches() -> None:
    """AWS's prompt-caching guide lists Claude 3.5 Haiku (docs/bedrock.md "Prompt caching")."""
    assert cache_points("anthropic.claude-3-5-haiku-20241022-v1:0") is not None


@pytest.mark.parametrize("model", ["us.amazon.nova-micro-v1:0", "amazon.nova-lite-v1:0",
                                   "eu.amazon.nova-pro-v1:0", "us.amazon.nova-premier-v1:0"])
def test_nova_takes_cache_points_in_system_and_messages_at_five_minutes(model: str) -> None:
    assert cache_points(model) == CachePoints(tools=False, ttl=False, lookback=False)


@pytest.mark.parametrize("model", ["meta.llama3-70b-instruct-v1:0", "openai.gpt-oss-120b-1:0",
                                   "amazon.nova-2-lite-v1:0", "amazon.titan-text-premier-v1:0"])
def test_models_the_guide_does_not_list_get_no_cache_points(model: str) -> None:
    assert cache_points(model) is None


@pytest.mark.parametrize("model", [
    "us.amazon.nova-micro-v1:0",
    "meta.llama3-70b-instruct-v1:0",
    "openai.gpt-oss-120b-1:0",
    "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
])
def test_other_models_are_not_claude(model: str) -> None:
    caps = capabilities(model)
    assert not is_claude(model)
    assert not caps.thinks and not caps.effort and not caps.structured_output


def test_bedrock_has_no_server_side_web_search_even_for_claude() -> None:
    assert not capabilities("global.anthropic.claude-sonnet-5-5").web_search
