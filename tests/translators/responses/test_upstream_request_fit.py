"""translators/responses/upstream_request.py: `max_output_tokens` fitted to what the route states
for a Messages client's request (translators/features/fit.py; docs/models.md "Output limits")."""

from __future__ import annotations

from tests.translators.messages_client.messages import claude_code_request
from translators import translate_request
from translators.core.capabilities import ModelCapabilities


def test_claude_codes_limit_is_lowered_to_the_routes_stated_figure() -> None:
    caps = ModelCapabilities(model="gpt-5.5", max_output_tokens=32_768)
    translated = translate_request(claude_code_request(), "responses", "gpt-5.5", client="messages",
                                   capabilities=caps)
    assert translated.body["max_output_tokens"] == 32_768
    assert "output limit 128000 lowered to 32768: gpt-5.5's output limit" in translated.notes


def test_without_a_stated_figure_the_limit_goes_as_asked() -> None:
    body = translate_request(claude_code_request(), "responses", "gpt-5.5", client="messages").body
    assert body["max_output_tokens"] == 128_000
