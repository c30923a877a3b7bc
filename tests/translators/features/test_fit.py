"""translators/features/fit.py: the output limit a request goes upstream with, at most what the
model writes and what its context window leaves (docs/models.md "Output limits")."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.data import CODEX
from translators import dialect as dialects
from translators import translate_request
from translators.core.capabilities import ModelCapabilities
from translators.core.report import Report
from translators.features import fit
from translators.ir.request import Message, Request, Text
from translators.ir.size import estimate_tokens
from translators.responses_client.request import decode


def _request(limit: int | None, text: str = "hi") -> Request:
    return Request(model="m", items=[Message(role="user", parts=[Text(text=text)])], max_output_tokens=limit)


def _limit(limit: int | None, caps: ModelCapabilities, **kwargs) -> tuple[int | None, list[str]]:
    report = Report()
    return fit.output_limit(_request(limit, kwargs.pop("text", "hi")), caps, report, **kwargs), report.notes


def test_a_limit_the_model_takes_goes_as_asked_without_a_note() -> None:
    assert _limit(1000, ModelCapabilities(model="m", max_output_tokens=8192)) == (1000, [])


def test_a_limit_above_the_models_own_is_lowered_to_it_with_a_note() -> None:
    assert _limit(128000, ModelCapabilities(model="deepseek-chat", max_output_tokens=8192)) == (
        8192, ["output limit 128000 lowered to 8192: deepseek-chat's output limit"])


def test_a_limit_above_what_the_window_leaves_is_lowered_to_that() -> None:
    text = "x" * 40_000  # 10,000 tokens at four characters each
    caps = ModelCapabilities(model="local", context_window=32_768, max_output_tokens=65_536)
    assert _limit(30_000, caps, text=text) == (22_768, [
        "output limit 30000 lowered to 22768: what local's 32768-token context window leaves after an input "
        "of about 10000 tokens"])


def test_the_window_never_lowers_a_limit_below_the_floor() -> None:
    caps = ModelCapabilities(model="local", context_window=10_500)
    assert _limit(4096, caps, text="x" * 40_000)[0] == fit.MIN_ROOM


def test_an_input_estimated_past_the_window_sets_no_ceiling_of_the_window() -> None:
    """Past the window the upstream refuses the request whatever the limit, or has a larger window
    than the one known: a cut limit would only cost the answer."""
    caps = ModelCapabilities(model="claude-opus-4-6", context_window=8_000, max_output_tokens=128_000)
    assert _limit(64_000, caps, text="x" * 40_000) == (64_000, [])


def test_without_a_limit_none_is_sent_unless_the_upstream_needs_one() -> None:
    caps = ModelCapabilities(model="m", context_window=32_768, max_output_tokens=8192)
    assert _limit(None, caps) == (None, [])
    assert _limit(None, caps, default=32_000) == (8192, [])  # the default, under the ceiling, unsaid
    assert _limit(None, ModelCapabilities(model="m"), default=32_000) == (32_000, [])


def test_nothing_known_of_the_model_leaves_the_limit_as_asked() -> None:
    assert _limit(128_000, ModelCapabilities(model="m")) == (128_000, [])


def test_the_route_figure_is_what_the_capabilities_carry() -> None:
    """The route's `max_output_tokens` reaches the encoder as the capabilities' own figure
    (addon/routes/routing.py `stated`), so it wins over the table's."""
    codec = dialects.get("chat").codec
    assert codec is not None and codec.capabilities is not None
    caps = codec.capabilities("deepseek-chat")
    translated = translate_request({"model": "m", "input": "hi", "max_output_tokens": 9000}, "chat",
                                   "deepseek-chat", capabilities=replace(caps, max_output_tokens=4096))
    assert translated.body["max_tokens"] == 4096


CODEX_FILES = sorted(p.name for p in CODEX.glob("request_*.json"))
TARGETS = [("anthropic", "claude-sonnet-4-5"), ("chat", "deepseek-chat"), ("gemini", "gemini-3-pro-preview"),
           ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
           ("bedrock", "us.amazon.nova-micro-v1:0")]


@pytest.mark.parametrize("name", CODEX_FILES)
@pytest.mark.parametrize(("target", "model"), TARGETS)
def test_codexs_requests_get_a_limit_only_where_the_upstream_needs_one(name, target, model) -> None:
    raw = json.loads((CODEX / name).read_bytes())
    assert "max_output_tokens" not in raw
    body = translate_request(raw, target, model).body
    config = body.get("inferenceConfig") or body.get("generationConfig") or {}
    limit = body.get("max_tokens", config.get("maxTokens", config.get("maxOutputTokens")))
    if target == "anthropic" or "claude" in model:
        assert limit == 32_000  # the default rule: Claude needs one, and the model takes it
    else:
        assert limit is None


def test_a_required_default_is_kept_within_the_window_left() -> None:
    raw = json.loads((CODEX / "request_classic_gpt55.json").read_bytes())
    codec = dialects.get("anthropic").codec
    assert codec is not None and codec.capabilities is not None
    window = 20_000
    caps = replace(codec.capabilities("claude-sonnet-4-5"), context_window=window)
    translated = translate_request(raw, "anthropic", "claude-sonnet-4-5", capabilities=caps)
    left = window - estimate_tokens(decode(raw, Report()))
    # the encoder estimates the request it writes (the hosted web search tool is declined first)
    assert left <= translated.body["max_tokens"] <= left + 10
    assert not [note for note in translated.notes if "output limit" in note]  # none was asked for
