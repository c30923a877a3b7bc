"""Upstream credentials. They come from the environment (or, for Bedrock, the AWS chain), never
from the flow: the client's OpenAI key, ChatGPT account headers and cookies are removed before
a request leaves for another vendor."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

# The only client headers a translated request keeps; everything else (authorization, cookies,
# chatgpt-account-id, openai-*, x-codex-*, session ids) stays behind.
_KEEP = {"user-agent"}


def clean_headers(client: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in client.items() if k.lower() in _KEEP}


_OPENAI_HOSTS = ("api.openai.com", "chatgpt.com")


def is_openai(base_url: str) -> bool:
    """Only OpenAI's own hosts may see the client's OpenAI key and ChatGPT account headers."""
    host = urlsplit(base_url).hostname or ""
    return any(host == h or host.endswith("." + h) for h in _OPENAI_HOSTS)


def key_headers(dialect: str, key: str | None) -> dict[str, str]:
    """Where each vendor wants its key (notes/dialects.md §A.1, §C.1, §D.1)."""
    if not key:
        return {}
    if dialect == "anthropic":
        return {"x-api-key": key}
    if dialect == "gemini":
        return {"x-goog-api-key": key}
    return {"authorization": f"Bearer {key}"}


def read_key(env_name: str) -> str | None:
    value = os.environ.get(env_name, "").strip()
    return value or None


_SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "x-amz-security-token", "cookie",
                   "chatgpt-account-id"}


def redact_request(headers: Any) -> None:
    """Before a flow is saved (`-w` writes after the addon's `response` hook): no key on disk."""
    for name in list(headers.keys()):
        if name.lower() in _SECRET_HEADERS:
            headers[name] = "<redacted>"


def env_aws_region() -> str | None:
    """The region the AWS tools read from the environment (botocore itself reads only
    AWS_DEFAULT_REGION; the SDKs and the CLI also honour AWS_REGION, which wins)."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def aws_region(option: str, url: str) -> str | None:
    """The region a Bedrock request is signed for: the `gateway_aws_region` option, else the one
    in a `bedrock-runtime.{region}.amazonaws.com` host, else the environment's. None lets the
    signer fall back to the AWS profile's configured region."""
    from translators.bedrock.auth import region_from_url

    return option.strip() or region_from_url(url) or env_aws_region()
