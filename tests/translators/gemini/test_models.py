"""What a model name says about thinking controls (translators/gemini/models.py)."""

from __future__ import annotations

import pytest

from translators.gemini import models


@pytest.mark.parametrize(("model", "expected"), [
    ("gemini-3-pro-preview", (3, 0)), ("models/gemini-2.5-flash", (2, 5)), ("gemini-3.1-flash-lite", (3, 1)),
    ("gemini-flash-latest", None)])
def test_version_is_read_from_the_model_name(model: str, expected: tuple[int, int] | None) -> None:
    assert models.version(model) == expected


def test_gemini_3_uses_levels_and_2_5_budgets() -> None:
    flash, pro = "gemini-3-flash-preview", "gemini-2.5-pro"
    assert (models.uses_levels(flash), models.uses_budget(flash)) == (True, False)
    assert (models.uses_levels(pro), models.uses_budget(pro)) == (False, True)


def test_models_before_2_5_have_no_thinking_control() -> None:
    assert not (models.uses_levels("gemini-2.0-flash") or models.uses_budget("gemini-2.0-flash"))


@pytest.mark.parametrize(("effort", "level"), [
    ("none", "MINIMAL"), ("minimal", "MINIMAL"), ("low", "LOW"), ("medium", "MEDIUM"), ("high", "HIGH"),
    ("xhigh", "HIGH")])
def test_flash_levels_follow_the_effort_table(effort: str, level: str) -> None:
    assert models.thinking_level("gemini-3-flash-preview", effort) == level


@pytest.mark.parametrize(("effort", "level"), [("minimal", "LOW"), ("medium", "HIGH"), ("xhigh", "HIGH")])
def test_gemini_3_pro_gets_its_nearest_level_at_or_above(effort: str, level: str) -> None:
    assert models.thinking_level("gemini-3-pro-preview", effort) == level


def test_unknown_effort_has_no_level_or_budget() -> None:
    assert models.thinking_level("gemini-3-flash", "ultra") is None
    assert models.thinking_budget("gemini-2.5-flash", "ultra") is None


@pytest.mark.parametrize(("model", "effort", "budget"), [
    ("gemini-2.5-flash", "low", 1024), ("gemini-2.5-flash", "xhigh", 24576), ("gemini-2.5-flash", "none", 0),
    ("gemini-2.5-pro", "none", 128), ("gemini-2.5-pro", "xhigh", 32768),
    ("gemini-2.5-flash-lite", "minimal", 512)])
def test_budgets_are_clamped_to_the_model_range(model: str, effort: str, budget: int) -> None:
    assert models.thinking_budget(model, effort) == budget


def test_approximation_is_flagged_when_the_setting_is_not_what_the_effort_means() -> None:
    assert models.approximated("gemini-2.5-pro", "none")
    assert not models.approximated("gemini-2.5-flash", "medium")
