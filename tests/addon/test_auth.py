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


BEDROCK_URL = "https://bedrock-runtime.ap-south-1.amazonaws.com/model/m/converse-stream"


@pytest.fixture
def no_region(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    return monkeypatch


def test_aws_region_option_wins_over_the_url_and_the_environment(no_region: pytest.MonkeyPatch) -> None:
    no_region.setenv("AWS_REGION", "eu-west-3")
    assert auth.aws_region("us-west-2", BEDROCK_URL) == "us-west-2"


def test_aws_region_of_a_bedrock_host_wins_over_the_environment(no_region: pytest.MonkeyPatch) -> None:
    no_region.setenv("AWS_REGION", "eu-west-3")
    assert auth.aws_region("", BEDROCK_URL) == "ap-south-1"


def test_aws_region_of_another_host_is_aws_region_then_aws_default_region(
        no_region: pytest.MonkeyPatch) -> None:
    no_region.setenv("AWS_DEFAULT_REGION", "eu-north-1")
    assert auth.aws_region("", "http://127.0.0.1:8080/model/m/converse") == "eu-north-1"
    no_region.setenv("AWS_REGION", "eu-west-3")
    assert auth.aws_region("", "http://127.0.0.1:8080/model/m/converse") == "eu-west-3"


def test_no_aws_region_anywhere_is_none(no_region: pytest.MonkeyPatch) -> None:
    """The signer then falls back to the AWS profile's region (or says what to set)."""
    assert auth.aws_region("", "http://127.0.0.1:8080/model/m/converse") is None
