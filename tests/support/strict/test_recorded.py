"""Every recorded client request (real Codex 0.169 and Claude Code 2.1.328 requests, tests/data/),
translated by the gateway for each upstream and model the suites route to, is taken by that upstream's
strict fake: the validators refuse what the services refuse, and nothing the gateway rightly sends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.data import CODEX, DATA
from tests.support import strict
from translators import translate_request

REQUESTS = {f"codex/{p.name}": ("responses", p) for p in sorted(CODEX.glob("request_*.json"))}
REQUESTS |= {
    f"claude_code/{p.name}": ("messages", p) for p in sorted((DATA / "claude_code").glob("request_*.json"))
}

TARGETS = [
    ("anthropic", "claude-sonnet-4-6"),
    ("anthropic", "claude-opus-4-7"),
    ("anthropic", "claude-haiku-4-5"),
    ("chat", "deepseek-chat"),
    ("chat", "gpt-5.5"),
    ("chat", "qwen3-coder"),
    ("gemini", "gemini-3-flash-preview"),
    ("gemini", "gemini-2.5-flash"),
    ("bedrock", "us.anthropic.claude-sonnet-4-6"),
    ("bedrock", "amazon.nova-pro-v1:0"),
    ("bedrock", "meta.llama3-70b-instruct-v1:0"),
    ("responses", "gpt-5.5"),
]


def recorded_issued(body: dict[str, Any]) -> strict.Issued:
    """What the session a capture was recorded in was handed by OpenAI (its reasoning items)."""
    items = body.get("input") if isinstance(body.get("input"), list) else []
    return strict.Issued(
        encrypted={
            i["encrypted_content"] for i in items if isinstance(i, dict) and i.get("encrypted_content")
        }
    )


@pytest.mark.parametrize(
    ("name", "target", "model"),
    [(name, target, model) for name in REQUESTS for target, model in TARGETS],
    ids=[f"{name}->{target}:{model}" for name in REQUESTS for target, model in TARGETS],
)
def test_the_gateways_translation_is_taken(name: str, target: str, model: str) -> None:
    client, path = REQUESTS[name]
    body = json.loads(path.read_text())
    translation = translate_request(body, target, model, client=client)
    refusal = strict.check(
        "POST",
        translation.path,
        translation.headers,
        json.dumps(translation.body).encode(),
        issued=recorded_issued(body),
    )
    assert refusal is None, refusal[2].decode()
