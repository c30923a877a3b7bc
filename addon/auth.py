"""Upstream credentials. They come from the environment (or, for Bedrock, the AWS chain), never
from the flow: the client's OpenAI key, ChatGPT account headers and cookies are removed before
a request leaves for another vendor. Which variable a route reads is `routing.key_env_for`;
the headers built here go on the wire only (`addon/credentials.py`), never into the flow."""

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
    """Only OpenAI's own hosts, over HTTPS, may see the client's OpenAI key and ChatGPT account
    headers."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    return parts.scheme == "https" and any(host == h or host.endswith("." + h) for h in _OPENAI_HOSTS)


_CLIENT_CREDENTIALS = ("authorization", "cookie", "chatgpt-account-id")
"""What identifies the client's own OpenAI or ChatGPT account."""


def client_credentials(headers: dict[str, str]) -> dict[str, str]:
    """Take the client's own credentials out of `headers` (a `responses` route to OpenAI that
    names no key: they go along, on the wire only)."""
    return {name: headers.pop(name) for name in list(headers) if name.lower() in _CLIENT_CREDENTIALS}


def upstream_credentials(route: Any, headers: dict[str, str], url: str, content: bytes,
                         region_option: str) -> tuple[dict[str, str], str | None]:
    """The credential headers of one upstream request, and a note when the route's key is
    missing. `headers` (the request's other headers) loses the client's credentials if the
    route replaces them, and gains Bedrock's `x-amz-date`."""
    key = read_key(route.key_env) if route.key_env else None
    note = f"no upstream key: ${route.key_env} is not set" if route.key_env and key is None else None
    if route.dialect == "bedrock":
        from translators.bedrock import auth as bedrock_auth

        # signed last, over the final URL, headers and body bytes; nothing changes after. No
        # key: the AWS chain (a signature, never the secret itself), whatever the host
        signed = bedrock_auth.sign("POST", url, headers, content, region=aws_region(region_option, url),
                                   bearer_token=key, environment_bearer=False)
        secret = {k: v for k, v in signed.items() if k.lower() in ("authorization", "x-amz-security-token")}
        headers.update({k: v for k, v in signed.items() if k not in secret})
        return secret, None  # no bearer key: the AWS chain signed it
    if route.dialect == "responses" and is_openai(route.base_url):
        own = client_credentials(headers)
        if key is None and route.key_env is None:
            return own, None  # the client's own account, as it would reach OpenAI without us
    return key_headers(route.dialect, key), note


def key_headers(dialect: str, key: str | None) -> dict[str, str]:
    """Where each vendor wants its key (docs/anthropic.md "Headers and auth"; docs/gemini.md "Endpoints and
    auth"; docs/bedrock.md "Endpoint, signing and API keys")."""
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
