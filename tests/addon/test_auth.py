"""addon/auth.py: which client headers may leave, where each vendor's key goes, redaction."""

from __future__ import annotations

import pytest
from mitmproxy.http import Headers

from addon import auth


@pytest.mark.parametrize(("url", "ours"), [
    ("https://api.openai.com/v1", True),
    ("https://chatgpt.com/backend-api/codex", True),
    ("https://eu.api.openai.com/v1", True),
    ("https://api.openai.com.evil.example/v1", False),
    ("https://openrouter.ai/api/v1", False),
    ("http://127.0.0.1:8080/v1", False),
])
def test_only_openai_hosts_count_as_openai(url: str, ours: bool) -> None:
    assert auth.is_openai(url) is ours


def test_clean_headers_keep_only_the_user_agent() -> None:
    client = {"User-Agent": "codex_cli_rs/0.169.0", "Authorization": "Bearer sk-x", "Cookie": "a=b",
              "chatgpt-account-id": "acct", "x-codex-turn-metadata": "{}", "session_id": "s",
              "OpenAI-Beta": "responses=experimental"}
    assert auth.clean_headers(client) == {"User-Agent": "codex_cli_rs/0.169.0"}


@pytest.mark.parametrize(("dialect", "expected"), [
    ("anthropic", {"x-api-key": "k"}),
    ("gemini", {"x-goog-api-key": "k"}),
    ("chat", {"authorization": "Bearer k"}),
    ("responses", {"authorization": "Bearer k"}),
])
def test_each_vendor_gets_the_key_where_it_looks(dialect: str, expected: dict[str, str]) -> None:
    assert auth.key_headers(dialect, "k") == expected


def test_no_key_no_header() -> None:
    assert auth.key_headers("anthropic", None) == {}


def test_blank_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLANK_KEY", "  ")
    assert auth.read_key("BLANK_KEY") is None
    assert auth.read_key("SURELY_NOT_SET_ANYWHERE_KEY") is None


def test_redact_replaces_every_secret_header() -> None:
    headers = Headers(authorization="Bearer sk-x", x_api_key="k", cookie="a=b", accept="*/*")
    headers["x-goog-api-key"] = "g"
    headers["chatgpt-account-id"] = "acct"
    auth.redact_request(headers)
    assert headers["accept"] == "*/*"
    for name in ("authorization", "x-api-key", "cookie", "x-goog-api-key", "chatgpt-account-id"):
        assert headers[name] == "<redacted>"
