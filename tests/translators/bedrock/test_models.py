"""translators/bedrock/models.py: what a model id says about thinking and prompt caching."""

from __future__ import annotations

import pytest

from translators.bedrock.models import capabilities


@pytest.mark.parametrize("model", [
    "anthropic.claude-sonnet-4-20250514-v1:0",
    "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
    "global.anthropic.claude-haiku-4-5-20251001-v1:0",
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-1-20250805-v1:0",
])
def test_claude_3_7_and_later_think_and_cache(model: str) -> None:
    caps = capabilities(model)
    assert caps.claude and caps.thinking and caps.cache_points


@pytest.mark.parametrize("model", [
    "anthropic.claude-3-5-sonnet-20240620-v1:0",
    "anthropic.claude-3-haiku-20240307-v1:0",
    "anthropic.claude-v2:1",
    "anthropic.claude-instant-v1",
])
def test_older_claude_neither_thinks_nor_caches(model: str) -> None:
    caps = capabilities(model)
    assert caps.claude and not caps.thinking and not caps.cache_points


@pytest.mark.parametrize("model", [
    "us.amazon.nova-micro-v1:0",
    "meta.llama3-70b-instruct-v1:0",
    "openai.gpt-oss-120b-1:0",
    "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
])
def test_other_models_are_not_claude(model: str) -> None:
    assert capabilities(model) == capabilities("us.amazon.nova-micro-v1:0")
    assert not capabilities(model).claude
