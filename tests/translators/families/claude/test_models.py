"""translators/families/claude/models.py: the shipped Claude table, read by Claude id (an Anthropic
id, or the one a Bedrock id or ARN carries)."""

from __future__ import annotations

import pytest

from translators.families.claude.models import claude_id, lookup


@pytest.mark.parametrize(("model", "thinking"), [
    ("claude-sonnet-4-5-20250929", {"enabled", "disabled"}),
    ("claude-opus-4-5", {"enabled", "disabled"}),
    ("claude-sonnet-4-6", {"enabled", "adaptive", "disabled"}),
    ("claude-opus-4-7", {"adaptive", "disabled"}),
    ("claude-opus-4-8", {"adaptive", "disabled"}),
    ("claude-sonnet-5", {"adaptive", "disabled"}),
    ("claude-opus-5-5", {"adaptive", "disabled"}),
    ("claude-haiku-5-5", {"adaptive", "disabled"}),
])
def test_the_table_knows_which_thinking_each_claude_takes(model: str, thinking: set[str]) -> None:
    caps = lookup(model)
    assert caps.source == "table" and caps.thinking == thinking


def test_a_family_id_followed_by_another_version_is_not_that_family() -> None:
    # claude-opus-4-9 is not Opus 4 (budget-only): an unknown newer Claude gets today's defaults
    caps = lookup("claude-opus-4-9")
    assert caps.source == "guess" and caps.thinking == {"adaptive", "disabled"}


def test_a_dated_or_latest_id_is_its_family() -> None:
    assert lookup("claude-opus-4-20250514").thinking == {"enabled", "disabled"}
    assert lookup("claude-3-7-sonnet-latest").source == "table"


def test_a_name_that_is_not_claude_gets_an_anthropic_compatible_servers_defaults() -> None:
    caps = lookup("kimi-k2-thinking")
    assert caps.source == "guess" and caps.thinking == {"enabled", "disabled"} and not caps.effort


@pytest.mark.parametrize(("model", "expected"), [
    ("claude-opus-4-6", "claude-opus-4-6"),
    ("anthropic.claude-opus-4-6-v1", "claude-opus-4-6"),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929"),
    ("global.anthropic.claude-sonnet-5-5", "claude-sonnet-5-5"),
    ("anthropic.claude-v2:1", "claude-v2"),
    ("arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-opus-4-1-20250805-v1:0",
     "claude-opus-4-1-20250805"),
    ("us.amazon.nova-micro-v1:0", None),
])
def test_the_claude_id_inside_a_bedrock_id(model: str, expected: str | None) -> None:
    assert claude_id(model) == expected
