"""translators/gemini/request.py: `generationConfig.maxOutputTokens` fitted to the model
(translators/features/fit.py; docs/models.md "Output limits")."""

from __future__ import annotations

import json

import pytest

from tests.data import CODEX
from tests.translators.messages_client.messages import claude_code_request
from translators import translate_request
from translators.gemini.models import from_model


@pytest.mark.parametrize("model", ["gemini-3-pro-preview", "gemini-2.5-pro", "gemini-2.5-flash"])
def test_claude_codes_128000_goes_as_65536_the_most_gemini_writes(model: str) -> None:
    translated = translate_request(claude_code_request(), "gemini", model, client="messages")
    assert translated.body["generationConfig"]["maxOutputTokens"] == 65_536
    assert f"output limit 128000 lowered to 65536: {model}'s output limit" in translated.notes


def test_the_vendors_output_token_limit_wins_over_the_table() -> None:
    caps = from_model({"name": "models/gemini-2.5-flash", "inputTokenLimit": 1_048_576,
                       "outputTokenLimit": 32_768}, "gemini-2.5-flash")
    body = translate_request(claude_code_request(), "gemini", "gemini-2.5-flash", client="messages",
                             capabilities=caps).body
    assert body["generationConfig"]["maxOutputTokens"] == 32_768


def test_codex_sets_no_limit_and_none_is_sent() -> None:
    raw = json.loads((CODEX / "request_classic_gpt55.json").read_bytes())
    config = translate_request(raw, "gemini", "gemini-3-pro-preview").body.get("generationConfig", {})
    assert "maxOutputTokens" not in config
