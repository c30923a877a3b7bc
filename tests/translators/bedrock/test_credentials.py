"""translators/bedrock/credentials.py: the AWS chain, Bedrock's own credential source (asked by the addon;
the signer stays pure)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from translators.bedrock import credentials as aws
from translators.dialect import get


@pytest.fixture
def no_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No AWS settings from this machine: no env keys, no config files, no instance metadata."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    aws.session.cache_clear()
    yield monkeypatch
    aws.session.cache_clear()


def test_keys_in_the_environment_are_found_frozen(no_environment: pytest.MonkeyPatch) -> None:
    no_environment.setenv("AWS_ACCESS_KEY_ID", "AKIDAWSTEST00000001")
    no_environment.setenv("AWS_SECRET_ACCESS_KEY", "aws-test-secret")
    no_environment.setenv("AWS_SESSION_TOKEN", "aws-test-token")
    found = aws.identity().credentials
    assert (found.access_key, found.secret_key, found.token) == (
        "AKIDAWSTEST00000001", "aws-test-secret", "aws-test-token")
    assert not hasattr(found, "get_frozen_credentials")  # one consistent triple, never refreshed mid-use


def test_the_profiles_region_comes_with_the_identity(no_environment: pytest.MonkeyPatch) -> None:
    no_environment.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    assert aws.identity().region == "ap-south-1"


def test_nothing_anywhere_is_an_empty_identity(no_environment: pytest.MonkeyPatch) -> None:
    assert aws.identity() == aws.Identity(None, None)


def test_bedrock_brings_the_chain_as_its_credential_source(no_environment: pytest.MonkeyPatch) -> None:
    signing = get("bedrock").signing
    assert signing is not None and signing.source.name == "aws"
    no_environment.setenv("AWS_ACCESS_KEY_ID", "AKIDAWSTEST00000002")
    no_environment.setenv("AWS_SECRET_ACCESS_KEY", "aws-test-secret")
    assert signing.source.find().credentials.access_key == "AKIDAWSTEST00000002"
