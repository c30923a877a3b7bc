"""Which Chat dialect features the upstream model takes, read off its name."""

from __future__ import annotations

import pytest

from translators.chat.models import target_for


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-5.5", "o3-mini", "o4-mini", "chatgpt-4o-latest"])
def test_openai_models_are_openai_targets(model: str) -> None:
    assert target_for(model).openai


@pytest.mark.parametrize(
    "model", ["gpt-oss-120b", "gpt-oss:20b", "qwen3-coder", "deepseek-chat", "openai/gpt-5"]
)
def test_compatible_server_models_are_not_openai_targets(model: str) -> None:
    assert not target_for(model).openai


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("gpt-5.5", "max_completion_tokens"),
        ("o3", "max_completion_tokens"),
        ("deepseek-chat", "max_tokens"),
        ("llama3.1", "max_tokens"),
    ],
)
def test_openai_models_take_max_completion_tokens_others_max_tokens(model: str, key: str) -> None:
    assert target_for(model).max_tokens_key == key


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-5", True),
        ("gpt-5.5-mini", True),
        ("gpt-10", True),
        ("gpt-4.1", False),
        ("o3", False),
        ("qwen3", False),
    ],
)
def test_verbosity_is_understood_from_gpt5_on(model: str, expected: bool) -> None:
    assert target_for(model).verbosity is expected


@pytest.mark.parametrize(
    "model", ["deepseek-chat", "deepseek-reasoner", "DeepSeek-V4-Pro", "deepseek-ai/DeepSeek-V3.2"]
)
def test_deepseek_is_recognised_by_name(model: str) -> None:
    target = target_for(model)
    assert target.deepseek and not target.images
