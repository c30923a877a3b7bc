"""translators/bedrock/auth.py: SigV4 and API-key headers, verified the way the service would. The
signer is pure: credentials and the time are passed in (the AWS chain is the dialect's credential
source, credentials.py, which the addon asks).

The verifier rebuilds the request from what is sent (method, URL, body, the headers named in
SignedHeaders, X-Amz-Date) and recomputes the signature with botocore's SigV4 primitives, as the
service does from the received request; it never reuses the signer's own request object.
"""

from __future__ import annotations

import datetime
import hmac
import re
from collections.abc import Mapping
from typing import Any

import botocore.auth
import botocore.session
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from translators.bedrock.auth import AuthError, region_from_url, sign
from translators.core.errors import TranslatorError

URL = "https://bedrock-runtime.us-west-2.amazonaws.com/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
BODY = b'{"messages":[{"role":"user","content":[{"text":"hi"}]}]}'
KEYS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
NOW = datetime.datetime(2026, 5, 4, 3, 2, 1, tzinfo=datetime.UTC)
HEADERS = {"content-type": "application/json", "user-agent": "codex", "content-length": str(len(BODY))}
_AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                   r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})")


def verify(method: str, url: str, sent: Mapping[str, str], body: bytes, keys: Credentials) -> bool:
    headers = {k.lower(): v for k, v in sent.items()}
    match = _AUTH.fullmatch(headers["authorization"])
    assert match is not None, headers["authorization"]
    access_key, date, region, service, signed, signature = match.groups()
    assert (access_key, service) == (keys.access_key, "bedrock")
    assert headers["x-amz-date"].startswith(date)
    names = signed.split(";")
    request = AWSRequest(method=method, url=url, data=body,
                         headers={n: headers[n] for n in names if n in headers})
    request.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(keys, service, region)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    return signer.signed_headers(signer.headers_to_sign(request)) == signed and hmac.compare_digest(
        expected, signature)


def test_sigv4_signature_verifies_for_the_exact_request() -> None:
    added = sign("POST", URL, HEADERS, BODY, credentials=KEYS, now=NOW)
    assert verify("POST", URL, {**HEADERS, **added}, BODY, KEYS)


def test_headers_equal_what_the_botocore_client_itself_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen = datetime.datetime(2026, 11, 29, 12, 0, 0)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: frozen)
    client = botocore.session.get_session().create_client(
        "bedrock-runtime", region_name="us-west-2", aws_access_key_id=KEYS.access_key,
        aws_secret_access_key=KEYS.secret_key, aws_session_token="TOKEN")
    sent: dict[str, Any] = {}

    def capture(request: Any, **_: Any) -> None:
        sent.update(url=request.url, body=request.body, headers=dict(request.headers))
        raise _Captured

    client.meta.events.register("before-send", capture)
    with pytest.raises(_Captured):
        client.converse_stream(modelId="us.anthropic.claude-sonnet-4-20250514-v1:0",
                               messages=[{"role": "user", "content": [{"text": "hi"}]}])
    headers = {k: v.decode() if isinstance(v, bytes) else v for k, v in sent["headers"].items()}
    added = sign("POST", sent["url"], headers, sent["body"],
                 credentials=Credentials(KEYS.access_key, KEYS.secret_key, "TOKEN"), now=frozen)
    assert added == {k: headers[k] for k in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")}


class _Captured(Exception):
    """Stops the botocore client before it opens a connection."""


def test_changing_one_body_byte_breaks_the_signature() -> None:
    added = sign("POST", URL, HEADERS, BODY, credentials=KEYS, now=NOW)
    tampered = BODY[:-3] + b"X" + BODY[-2:]
    assert not verify("POST", URL, {**HEADERS, **added}, tampered, KEYS)


def test_changing_the_model_in_the_path_breaks_the_signature() -> None:
    added = sign("POST", URL, HEADERS, BODY, credentials=KEYS, now=NOW)
    assert not verify("POST", URL.replace("sonnet", "opus"), {**HEADERS, **added}, BODY, KEYS)


def test_signature_scope_names_the_region_of_the_host_and_the_bedrock_service() -> None:
    authorization = sign("POST", URL, HEADERS, BODY, credentials=KEYS, now=NOW)["Authorization"]
    assert "/us-west-2/bedrock/aws4_request" in authorization


def test_explicit_region_wins_over_the_host() -> None:
    url = "http://127.0.0.1:8999/model/m/converse"
    added = sign("POST", url, HEADERS, BODY, credentials=KEYS, region="eu-central-1", now=NOW)
    assert "/eu-central-1/bedrock/" in added["Authorization"]
    assert verify("POST", url, {**HEADERS, **added}, BODY, KEYS)


def test_only_host_content_type_and_amz_headers_are_signed() -> None:
    headers = {**HEADERS, "x-amz-trace": "t1", "accept-encoding": "gzip"}
    added = sign("POST", URL, headers, BODY, credentials=KEYS, now=NOW)
    signed = _AUTH.fullmatch(added["Authorization"]).group(5).split(";")  # type: ignore[union-attr]
    assert signed == ["content-type", "host", "x-amz-date", "x-amz-trace"]


def test_stale_auth_headers_from_the_caller_are_not_signed() -> None:
    stale = {**HEADERS, "Authorization": "Bearer sk-client", "X-Amz-Date": "20000101T000000Z"}
    added = sign("POST", URL, stale, BODY, credentials=KEYS, now=NOW)
    assert added["Authorization"].startswith("AWS4-HMAC-SHA256")
    assert added["X-Amz-Date"] != "20000101T000000Z"
    assert verify("POST", URL, {**stale, **added}, BODY, KEYS)


def test_session_token_is_returned_and_signed() -> None:
    keys = Credentials(KEYS.access_key, KEYS.secret_key, "FwoGZXIvYXdzEXAMPLETOKEN")
    added = sign("POST", URL, HEADERS, BODY, credentials=keys, now=NOW)
    assert added["X-Amz-Security-Token"] == keys.token
    assert "x-amz-security-token" in added["Authorization"]
    assert verify("POST", URL, {**HEADERS, **added}, BODY, keys)


def test_bearer_token_becomes_an_authorization_header() -> None:
    added = sign("POST", URL, HEADERS, BODY, bearer_token="ABSKexample", now=NOW)
    assert added == {"Authorization": "Bearer ABSKexample"}


def test_bearer_token_is_refused_over_plain_http_to_a_remote_host() -> None:
    with pytest.raises(AuthError):
        sign("POST", "http://bedrock.example.com/model/m/converse", HEADERS, BODY, bearer_token="ABSK",
             now=NOW)


def test_bearer_token_may_go_to_a_loopback_test_server_over_http() -> None:
    added = sign("POST", "http://127.0.0.1:9000/model/m/converse", HEADERS, BODY, bearer_token="ABSK",
                 now=NOW)
    assert added == {"Authorization": "Bearer ABSK"}


def test_no_credentials_raise_the_package_error() -> None:
    with pytest.raises(AuthError) as caught:
        sign("POST", URL, HEADERS, BODY, now=NOW)
    assert isinstance(caught.value, TranslatorError)


def test_the_signature_states_the_time_it_is_given() -> None:
    added = sign("POST", URL, HEADERS, BODY, credentials=KEYS, now=NOW)
    assert added["X-Amz-Date"] == "20260504T030201Z"
    assert "/20260504/us-west-2/bedrock/" in added["Authorization"]
    later = sign("POST", URL, HEADERS, BODY, credentials=KEYS, now=NOW + datetime.timedelta(seconds=1))
    assert later["Authorization"] != added["Authorization"]


def test_no_region_for_passed_credentials_and_a_foreign_host_raises() -> None:
    with pytest.raises(AuthError, match="region"):
        sign("POST", "https://proxy.internal/model/m/converse", HEADERS, BODY, credentials=KEYS, now=NOW)


@pytest.mark.parametrize(("host", "region"), [
    ("bedrock-runtime.us-east-1.amazonaws.com", "us-east-1"),
    ("bedrock-runtime-fips.us-gov-west-1.amazonaws.com", "us-gov-west-1"),
    ("vpce-0abc.bedrock-runtime.eu-west-3.vpce.amazonaws.com", "eu-west-3"),
    ("bedrock-runtime.cn-north-1.amazonaws.com.cn", "cn-north-1"),
    ("example.com", None),
])
def test_region_is_read_from_a_bedrock_runtime_host(host: str, region: str | None) -> None:
    assert region_from_url(f"https://{host}/model/m/converse") == region
