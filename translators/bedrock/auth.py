"""Authenticating a Bedrock runtime request: SigV4 or a Bedrock API key (docs/bedrock.md "Endpoint, signing
and API keys").

Pure: the caller passes the credentials and the time. Usage, once the body bytes, URL and headers
are final (the signature covers them)::

    from translators.bedrock.auth import sign

    extra = sign("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/m%3A0/converse-stream",
                 {"content-type": "application/json"}, body, credentials=keys, now=utc_now)
    headers.update(extra)            # Authorization, X-Amz-Date[, X-Amz-Security-Token]

Which credentials: `bearer_token=` (a Bedrock API key) becomes `Authorization: Bearer <token>`;
else `credentials=` (anything with `access_key`, `secret_key`, `token`, e.g. botocore's frozen
`Credentials`) sign with SigV4. Finding them (the environment, the AWS chain) is the dialect's
credential source (`credentials.py`), which the addon asks: never this module.

The region is `region=`, else the one in a `bedrock-runtime.{region}.amazonaws.com` host. SigV4
signs `host`, `content-type` and the caller's `x-amz-*` headers only: hop-by-hop or proxy-managed
headers (`content-length`, `accept-encoding`, `user-agent`...) may then change on the way without
breaking the signature, which is allowed since SignedHeaders must include only `host` and the
`x-amz-*` headers. The payload hash is over `body` exactly, so sign the bytes that are sent.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from translators.core.errors import TranslatorError
from translators.dialect import Signed, ToSign

SERVICE = "bedrock"
"""The SigV4 signing name of bedrock-runtime (service model `signingName`)."""
BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"
"""botocore's variable for a Bedrock API key (`AWS_BEARER_TOKEN_` + the signing name)."""
REGION_OPTION = "gateway_aws_region"
REGION_ENV = ("AWS_REGION", "AWS_DEFAULT_REGION")
"""The region the AWS tools read from the environment, in order (botocore itself reads only
AWS_DEFAULT_REGION; the SDKs and the CLI also honour AWS_REGION, which wins)."""
_REGION_HOST = re.compile(
    r"(?:^|\.)bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$")
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$")
# Set by the signer itself; a stale copy from the caller must not be signed or sent twice.
_SIGNER_HEADERS = {"authorization", "x-amz-date", "x-amz-security-token", "date"}
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}
_TIMESTAMP = "%Y%m%dT%H%M%SZ"


class AuthError(TranslatorError):
    """No usable credentials or region: the gateway's configuration, not the client's request."""

    code = "missing_credentials"
    status = 401


def region_from_url(url: str) -> str | None:
    match = _REGION_HOST.search(urlsplit(url).hostname or "")
    return match.group(1) if match else None


def check_region(value: Any) -> str | None:
    """What is wrong with a `gateway_aws_region` value, or None."""
    region = str(value).strip()
    if region and not _REGION.match(region):
        return f"gateway_aws_region {region!r} is not an AWS region: write e.g. us-east-1, or leave it empty"
    return None


def configured_region(options: Mapping[str, Any], environ: Mapping[str, str]) -> str | None:
    """The `gateway_aws_region` option, else the environment's region."""
    region = str(options.get(REGION_OPTION) or "").strip()
    if region:
        return region
    return next((environ[name].strip() for name in REGION_ENV if environ.get(name, "").strip()), None)


def sign(method: str, url: str, headers: Mapping[str, str], body: bytes, *, now: datetime.datetime,
         region: str | None = None, credentials: Any = None,
         bearer_token: str | None = None) -> dict[str, str]:
    """The headers to add to this exact request so Bedrock accepts it (see the module doc)."""
    if bearer_token:
        _require_tls(url)
        return {"Authorization": f"Bearer {bearer_token}"}
    if credentials is None:
        raise AuthError(f"no AWS credentials found (set {BEARER_ENV}, AWS_ACCESS_KEY_ID/"
                        "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run with a role)")
    key = Credentials(credentials.access_key, credentials.secret_key, credentials.token)
    region = region or region_from_url(url)
    if not region:
        raise AuthError(f"no AWS region for {urlsplit(url).hostname!r}: pass region= or use a "
                        "bedrock-runtime.{region}.amazonaws.com URL")
    timestamp = now.astimezone(datetime.UTC).strftime(_TIMESTAMP) if now.tzinfo else now.strftime(_TIMESTAMP)
    request = AWSRequest(method=method.upper(), url=url, data=body, headers=_signable(headers))
    request.context["timestamp"] = timestamp
    request.headers["X-Amz-Date"] = timestamp
    if key.token:
        request.headers["X-Amz-Security-Token"] = key.token
    # SigV4Auth's public steps, with the caller's time (its `add_auth` reads the clock itself)
    signer = SigV4Auth(key, SERVICE, region)
    signature = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    signed = signer.signed_headers(signer.headers_to_sign(request))
    out = {"Authorization": f"AWS4-HMAC-SHA256 Credential={signer.scope(request)}, "
                            f"SignedHeaders={signed}, Signature={signature}",
           "X-Amz-Date": timestamp}
    if key.token:
        out["X-Amz-Security-Token"] = key.token
    return out


def sign_request(request: ToSign) -> Signed:
    """The dialect's signing hook: a route's key is a Bedrock API key; without one, the AWS chain's
    credentials (`request.identity`, credentials.py) sign, in the region of the option, the host,
    the environment, or the AWS profile (in that order)."""
    settings = request.settings
    option = str(settings.options.get(REGION_OPTION) or "").strip()
    profile_region = getattr(request.identity, "region", None) if request.key is None else None
    region = (option or region_from_url(request.url)
              or configured_region({}, settings.environ) or profile_region)
    identity = getattr(request.identity, "credentials", None)
    signed = sign(request.method, request.url, request.headers, request.body, now=request.now, region=region,
                  credentials=identity, bearer_token=request.key)
    secret = {k: v for k, v in signed.items() if k.lower() in ("authorization", "x-amz-security-token")}
    return Signed(secret=secret, headers={k: v for k, v in signed.items() if k not in secret})


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
