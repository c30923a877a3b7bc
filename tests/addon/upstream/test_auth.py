"""addon/upstream/auth.py: which client headers may leave, where each vendor's key goes, redaction."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest
from botocore.credentials import Credentials
from mitmproxy.http import Headers

from addon.routes.routing import Route
from addon.upstream import auth
from translators import dialect as dialects
from translators.bedrock.credentials import Identity
from translators.dialect import Settings


@pytest.mark.parametrize(("url", "ours"), [
    ("https://api.openai.com/v1", True),
    ("https://chatgpt.com/backend-api/codex", True),
    ("https://eu.api.openai.com/v1", True),
    ("https://api.openai.com.evil.example/v1", False),
    ("https://openrouter.ai/api/v1", False),
    ("http://127.0.0.1:8080/v1", False),
])
def test_only_openai_hosts_get_the_clients_own_credentials_on_a_responses_route(url: str, ours: bool) -> None:
    assert auth.takes_client_credentials(dialects.get("responses"), url) is ours


@pytest.mark.parametrize("dialect", ["anthropic", "chat", "gemini", "bedrock"])
def test_no_other_dialect_gets_the_clients_own_credentials_even_at_openai(dialect: str) -> None:
    assert auth.takes_client_credentials(dialects.get(dialect), "https://api.openai.com/v1") is False


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
    assert auth.key_headers(dialects.get(dialect), "k") == expected


def test_no_key_no_header() -> None:
    assert auth.key_headers(dialects.get("anthropic"), None) == {}


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


def test_redact_keeps_every_field_in_place_whatever_its_case() -> None:
    """Two cookies stay two fields; a name written in capitals is still a secret's."""
    headers = Headers([(b"Cookie", b"a=b"), (b"accept", b"*/*"), (b"cookie", b"c=d"), (b"X-Api-Key", b"k")])
    auth.redact_request(headers)
    assert headers.fields == ((b"Cookie", b"<redacted>"), (b"accept", b"*/*"), (b"cookie", b"<redacted>"),
                              (b"X-Api-Key", b"<redacted>"))


BEDROCK_URL = "https://bedrock-runtime.ap-south-1.amazonaws.com/model/m/converse-stream"
LOCAL_URL = "http://127.0.0.1:8080/model/m/converse"
KEYS = Credentials("AKIDAUTHTEST0000001", "auth-test-secret")


@dataclass(frozen=True)
class Source:
    """A credential source in place of the AWS chain (`Signing.source`)."""

    find: Callable[[], Identity]
    name: str = "test"


@pytest.fixture
def bedrock_source(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], Identity]], None]:
    """Bedrock as shipped, but asking `find` for its credentials: the source is the dialect's,
    so the test swaps the dialect, never the addon."""

    def use(find: Callable[[], Identity]) -> None:
        shipped = dialects.get("bedrock")
        assert shipped.signing is not None
        signing = replace(shipped.signing, source=Source(find))
        monkeypatch.setitem(dialects._REGISTERED, "bedrock", replace(shipped, signing=signing))

    return use


Use = Callable[[Callable[[], Identity]], None]


def _signed_region(use: Use, url: str, option: str = "", environ: dict[str, str] | None = None,
                   profile: str | None = None) -> str:
    """The region a Bedrock request is signed for, read back from its Authorization scope."""
    use(lambda: Identity(KEYS, profile))  # before the route is built: it holds the dialect it is given
    route = Route("*", dialects.get("bedrock"), url.rsplit("/model", 1)[0], None, None)
    settings = {"bedrock": Settings(options={"gateway_aws_region": option}, environ=environ or {})}
    secret, _ = auth.upstream_credentials(route, {"content-type": "application/json"}, url, b"{}", settings)
    return secret["Authorization"].split("/")[2]


def test_aws_region_option_wins_over_the_url_and_the_environment(bedrock_source: Use) -> None:
    region = _signed_region(bedrock_source, BEDROCK_URL, "us-west-2", {"AWS_REGION": "eu-west-3"})
    assert region == "us-west-2"


def test_aws_region_of_a_bedrock_host_wins_over_the_environment(bedrock_source: Use) -> None:
    assert _signed_region(bedrock_source, BEDROCK_URL, "", {"AWS_REGION": "eu-west-3"}) == "ap-south-1"


def test_aws_region_of_another_host_is_aws_region_then_aws_default_region(bedrock_source: Use) -> None:
    assert _signed_region(bedrock_source, LOCAL_URL, "", {"AWS_DEFAULT_REGION": "eu-north-1"}) == "eu-north-1"
    both = {"AWS_DEFAULT_REGION": "eu-north-1", "AWS_REGION": "eu-west-3"}
    assert _signed_region(bedrock_source, LOCAL_URL, "", both) == "eu-west-3"


def test_without_any_region_setting_the_aws_profiles_region_signs(bedrock_source: Use) -> None:
    assert _signed_region(bedrock_source, LOCAL_URL, "", {}, profile="ap-northeast-2") == "ap-northeast-2"


def test_a_signing_dialect_is_signed_at_the_time_the_clock_gives(bedrock_source: Use) -> None:
    bedrock_source(lambda: Identity(KEYS, None))
    route = Route("*", dialects.get("bedrock"), BEDROCK_URL.rsplit("/model", 1)[0], None, None)
    headers = {"content-type": "application/json"}
    auth.upstream_credentials(route, headers, BEDROCK_URL, b"{}", {},
                              now=lambda: datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.UTC))
    assert headers["X-Amz-Date"] == "20300102T030405Z"


def test_a_bedrock_route_with_a_key_sends_it_as_a_bearer_and_asks_no_credential_source(
        monkeypatch: pytest.MonkeyPatch, bedrock_source: Use) -> None:
    monkeypatch.setenv("AUTH_TEST_BEDROCK_KEY", "ABSKauthtest")

    def no_source() -> Identity:
        raise AssertionError("the AWS chain was asked though the route has a key")

    bedrock_source(no_source)
    route = Route("*", dialects.get("bedrock"), BEDROCK_URL.rsplit("/model", 1)[0], None,
                  "AUTH_TEST_BEDROCK_KEY")
    secret, note = auth.upstream_credentials(route, {}, BEDROCK_URL, b"{}", {})
    assert (secret, note) == ({"Authorization": "Bearer ABSKauthtest"}, None)


def test_the_credential_source_is_the_one_the_dialect_brings(bedrock_source: Use) -> None:
    """addon/upstream/auth.py names no source: whatever the route's dialect supplies is asked."""
    asked: list[str] = []

    def found() -> Identity:
        asked.append("asked")
        return Identity(KEYS, "eu-west-1")

    bedrock_source(found)
    route = Route("*", dialects.get("bedrock"), LOCAL_URL.rsplit("/model", 1)[0], None, None)
    secret, _ = auth.upstream_credentials(route, {}, LOCAL_URL, b"{}", {})
    assert asked == ["asked"]
    assert "AKIDAUTHTEST0000001/" in secret["Authorization"]
