"""translators/anthropic/request.py: `max_tokens` fitted to the model, the client's or the 32k
default (translators/families/claude/thinking.py, translators/features/fit.py; docs/models.md
"Output limits")."""

from __future__ import annotations

import json
from dataclasses import replace

from tests.data import CODEX
from tests.support.vendor_types import assert_anthropic_request
from tests.translators.messages_client.messages import claude_code_request, decoded
from translators import translate_request
from translators.core.report import Report
from translators.families.claude.models import lookup
from translators.ir.size import estimate_tokens
from translators.responses_client.request import decode


def test_claude_codes_128000_goes_as_the_models_own_limit() -> None:
    translated = translate_request(claude_code_request(), "anthropic", "claude-sonnet-4-5", client="messages")
    assert translated.body["max_tokens"] == 64_000
    assert "output limit 128000 lowered to 64000: claude-sonnet-4-5's output limit" in translated.notes
    assert_anthropic_request(translated.body)


def test_the_limit_is_lowered_to_what_the_window_leaves() -> None:
    """Anthropic refuses "input length and `max_tokens` exceed context limit" (docs/models.md)."""
    raw = claude_code_request()
    request, _ = decoded(raw)
    used = estimate_tokens(request)
    caps = replace(lookup("claude-opus-4-6"), context_window=used + 20_000)
    body = translate_request(raw, "anthropic", "claude-opus-4-6", client="messages", capabilities=caps).body
    assert body["max_tokens"] == 20_000
    assert_anthropic_request(body)


def test_codexs_request_gets_the_default_within_the_window_left() -> None:
    raw = json.loads((CODEX / "request_local_compaction.json").read_bytes())
    used = estimate_tokens(decode(raw, Report()))
    caps = replace(lookup("claude-sonnet-4-5"), context_window=used + 10_000)
    body = translate_request(raw, "anthropic", "claude-sonnet-4-5", capabilities=caps).body
    assert 10_000 <= body["max_tokens"] < 10_050  # the encoder's own estimate, the web search tool declined
