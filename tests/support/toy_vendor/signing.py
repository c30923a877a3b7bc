"""Tokenline's request signature: pure, over the final method, path and body bytes (the addon
passes what the credential source found as `ToSign.identity`)."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from translators.core.errors import TranslatorError
from translators.dialect import Signed, ToSign

SIGNATURE = "x-tokenline-signature"
TOKEN_ID = "x-tokenline-token-id"


class NoToken(TranslatorError):
    code = "missing_credentials"
    status = 401


def signature(token: str, method: str, path: str, body: bytes) -> str:
    message = method.upper().encode() + b"\n" + path.encode() + b"\n" + body
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


def token_id(token: str) -> str:
    """Which token signed (a digest prefix: names it without revealing it)."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


def sign(request: ToSign) -> Signed:
    token = request.key or request.identity
    if not isinstance(token, str) or not token:
        raise NoToken("no Tokenline token: set $TOKENLINE_TOKEN_FILE to a file holding one")
    path = urlsplit(request.url).path
    return Signed(secret={SIGNATURE: signature(token, request.method, path, request.body)},
                  headers={TOKEN_ID: token_id(token)})
