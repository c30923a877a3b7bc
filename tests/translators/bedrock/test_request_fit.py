"""translators/bedrock/request.py: `inferenceConfig.maxTokens` fitted to the model, for Claude
and the others (translators/features/fit.py; docs/models.md "Output limits")."""

from __future__ import annotations

from dataclasses import replace

from tests.support.vendor_types import assert_converse_request
from tests.translators.bedrock.support import NOVA
from tests.translators.messages_client.messages import claude_code_request, decoded
from translators import translate_request
from translators.bedrock.models import capabilities
from translators.ir.size import estimate_tokens

SONNET_4_5 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


def test_claude_codes_128000_goes_to_a_claude_id_as_the_models_own_limit() -> None:
    translated = translate_request(claude_code_request(), "bedrock", SONNET_4_5, client="messages")
    assert translated.body["inferenceConfig"]["maxTokens"] == 64_000
    assert_converse_request(translated.body, SONNET_4_5)


def test_another_models_limit_is_fitted_to_the_routes_stated_figure() -> None:
    caps = replace(capabilities(NOVA), max_output_tokens=10_000)
    translated = translate_request(claude_code_request(), "bedrock", NOVA, client="messages",
                                   capabilities=caps)
    assert translated.body["inferenceConfig"]["maxTokens"] == 10_000
    assert f"output limit 128000 lowered to 10000: {NOVA}'s output limit" in translated.notes


def test_a_model_nothing_is_known_of_gets_the_limit_as_asked() -> None:
    body = translate_request(claude_code_request(), "bedrock", NOVA, client="messages").body
    assert body["inferenceConfig"]["maxTokens"] == 128_000


def test_a_claude_limit_is_lowered_to_what_the_window_leaves() -> None:
    """Bedrock refuses "input length and `max_tokens` exceed context limit" (docs/models.md)."""
    raw = claude_code_request()
    request, _ = decoded(raw)
    caps = replace(capabilities(SONNET_4_5), context_window=estimate_tokens(request) + 30_000)
    body = translate_request(raw, "bedrock", SONNET_4_5, client="messages", capabilities=caps).body
    assert body["inferenceConfig"]["maxTokens"] == 30_000
