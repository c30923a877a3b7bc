"""translators/chat/request.py: `max_tokens` / `max_completion_tokens` fitted to the model
(translators/features/fit.py; docs/models.md "Output limits")."""

from __future__ import annotations

from dataclasses import replace

from tests.translators.chat.chatdata import assert_chat_request, codex_request
from tests.translators.messages_client.messages import claude_code_request, decoded
from translators import translate_request
from translators.chat.models import capabilities
from translators.core.capabilities import ModelCapabilities
from translators.ir.size import estimate_tokens


def test_claude_codes_128000_goes_to_deepseek_chat_as_8192_with_a_note() -> None:
    """DeepSeek answers 400 "the valid range of max_tokens is [1, 8192]" to more (docs/chat.md)."""
    translated = translate_request(claude_code_request(), "chat", "deepseek-chat", client="messages")
    assert translated.body["max_tokens"] == 8192
    assert "output limit 128000 lowered to 8192: deepseek-chat's output limit" in translated.notes
    assert "max_tokens" not in translated.dropped
    assert_chat_request(translated.body)


def test_an_openai_models_max_completion_tokens_is_fitted_too() -> None:
    body = translate_request(claude_code_request(), "chat", "gpt-4o", client="messages").body
    assert body["max_completion_tokens"] == 16_384 and "max_tokens" not in body


def test_a_limit_the_model_takes_goes_unchanged() -> None:
    raw = {**claude_code_request(), "max_tokens": 4000}
    translated = translate_request(raw, "chat", "deepseek-chat", client="messages")
    assert translated.body["max_tokens"] == 4000
    assert not [note for note in translated.notes if "output limit" in note]


def test_the_routes_stated_limit_wins_over_the_table() -> None:
    caps = replace(capabilities("deepseek-reasoner"), max_output_tokens=12_000)
    body = translate_request(claude_code_request(), "chat", "deepseek-reasoner", client="messages",
                             capabilities=caps).body
    assert body["max_tokens"] == 12_000


def test_a_self_hosted_model_gets_what_its_stated_window_leaves() -> None:
    """vLLM refuses input plus max_tokens past its `max_model_len` (docs/models.md)."""
    raw = claude_code_request()
    request, _ = decoded(raw)
    window = 32_768
    translated = translate_request(raw, "chat", "my-model", client="messages",
                                   capabilities=ModelCapabilities(model="my-model", context_window=window))
    assert translated.body["max_tokens"] == window - estimate_tokens(request)


def test_codex_sets_no_limit_and_none_is_sent() -> None:
    assert "max_tokens" not in translate_request(codex_request("request_classic_gpt55.json"), "chat",
                                                 "deepseek-chat").body
