"""Authenticating a Bedrock runtime request: SigV4 or a Bedrock API key (docs/bedrock.md "Endpoint, signing
and API keys").

Usage, once the body bytes, URL and headers are final (the signature covers them)::

    from translators.bedrock.auth import sign

    extra = sign("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/m%3A0/converse-stream",
                 {"content-type": "application/json"}, body)
    headers.update(extra)            # Authorization, X-Amz-Date[, X-Amz-Security-Token]

Which credentials, in order:
1. `bearer_token=` given: `Authorization: Bearer <token>` (a Bedrock API key).
2. `credentials=` given (anything with `access_key`, `secret_key`, `token`, e.g. botocore
   `Credentials`; refreshable ones are frozen first): SigV4.
3. Neither given: the environment. `AWS_BEARER_TOKEN_BEDROCK` wins, as in botocore (the env name
   is `AWS_BEARER_TOKEN_` + the signing name); otherwise the standard AWS chain (env keys, shared
   profile, SSO, container / instance role) through one process-wide botocore session.

The region is `region=`, else the one in a `bedrock-runtime.{region}.amazonaws.com` host, else
(only in case 3) the session's configured region. SigV4 signs `host`, `content-type` and the
caller's `x-amz-*` headers only: hop-by-hop or proxy-managed headers (`content-length`,
`accept-encoding`, `user-agent`...) may then change on the way without breaking the signature,
which is allowed since SignedHeaders must include only `host` and the `x-amz-*` headers. The
payload hash is over `body` exactly, so sign the bytes that are sent.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import botocore.session
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from translators.errors import TranslatorError

SERVICE = "bedrock"
"""The SigV4 signing name of bedrock-runtime (service model `signingName`)."""
BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"
_REGION_HOST = re.compile(
    r"(?:^|\.)bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$")
# Set by the signer itself; a stale copy from the caller must not be signed or sent twice.
_SIGNER_HEADERS = {"authorization", "x-amz-date", "x-amz-security-token", "date"}
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class AuthError(TranslatorError):
    """No usable credentials or region: the gateway's configuration, not the client's request."""

    code = "missing_credentials"
    status = 401


@functools.cache
def default_session() -> botocore.session.Session:
    """One session per process: it caches (and refreshes) what the chain finds, so a role or SSO
    profile is not assumed again for every request. `default_session.cache_clear()` forgets it."""
    return botocore.session.Session()


def region_from_url(url: str) -> str | None:
    match = _REGION_HOST.search(urlsplit(url).hostname or "")
    return match.group(1) if match else None


def sign(method: str, url: str, headers: Mapping[str, str], body: bytes, *, region: str | None = None,
         credentials: Any = None, bearer_token: str | None = None,
         environment_bearer: bool = True) -> dict[str, str]:
    """The headers to add to this exact request so Bedrock accepts it (see the module doc).
    `environment_bearer=False` skips `AWS_BEARER_TOKEN_BEDROCK` in case 3: the AWS chain only."""
    from_environment = credentials is None and bearer_token is None
    if from_environment and environment_bearer:
        bearer_token = os.environ.get(BEARER_ENV) or None
    if bearer_token:
        _require_tls(url)
        return {"Authorization": f"Bearer {bearer_token}"}
    if credentials is None:
        credentials = default_session().get_credentials()
        if credentials is None:
            raise AuthError(f"no AWS credentials found (set {BEARER_ENV}, AWS_ACCESS_KEY_ID/"
                            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run with a role)")
    if hasattr(credentials, "get_frozen_credentials"):  # refreshable: one consistent key triple
        credentials = credentials.get_frozen_credentials()
    key = Credentials(credentials.access_key, credentials.secret_key, credentials.token)
    region = region or region_from_url(url) or (
        default_session().get_config_variable("region") if from_environment else None)
    if not region:
        raise AuthError(f"no AWS region for {urlsplit(url).hostname!r}: pass region= or use a "
                        "bedrock-runtime.{region}.amazonaws.com URL")
    request = AWSRequest(method=method.upper(), url=url, data=body, headers=_signable(headers))
    SigV4Auth(key, SERVICE, region).add_auth(request)
    out = {"Authorization": request.headers["Authorization"], "X-Amz-Date": request.headers["X-Amz-Date"]}
    if key.token:
        out["X-Amz-Security-Token"] = key.token
    return out


def _signable(headers: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower in ("host", "content-type") or (lower.startswith("x-amz-") and lower not in _SIGNER_HEADERS):
            out[lower] = value
    return out


def _require_tls(url: str) -> None:
    """A bearer key is sent in clear: only over HTTPS (as botocore's BearerAuth insists), or to
    a loopback test server."""
    parts = urlsplit(url)
    if parts.scheme != "https" and (parts.hostname or "") not in _LOOPBACK:
        raise AuthError("a Bedrock API key may only be sent over HTTPS")
