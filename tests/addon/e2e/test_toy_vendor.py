"""A vendor with its own credential source needs only its folder (docs/adding-a-dialect.md): the
toy Tokenline dialect (tests/support/toy_vendor/), registered by `$GATEWAY_DIALECTS`, is served
through real mitmdump to a local Tokenline that lets in only requests signed with the token its
source reads from a file; nothing in `addon/` names it."""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from mitmproxy import http, io

from tests.addon.e2e.conftest import StartProxy, reverse_client
from tests.addon.e2e.upstream import Received, Reply, Upstream, json_reply, raw_stream
from tests.support import toy_dialect, toy_vendor
from tests.support.mitmdump import ROOT, MitmDump
from tests.support.toy_vendor import credentials, signing

pytestmark = pytest.mark.timeout(90)

TOKEN = "tokenline-e2e-secret-token-0123456789"
ROTATED = "tokenline-e2e-rotated-token-9876543210"
MODEL = "lines-1"
STREAM_TEXT = "Hello from lines."


class Door:
    """The local Tokenline's check: the signature must be the HMAC of the request as it arrived,
    under one of the tokens it knows; the token itself must never be on the wire."""

    def __init__(self) -> None:
        self.tokens = {signing.token_id(t): t for t in (TOKEN, ROTATED)}
        self.accepted: list[str] = []
        self.rejected: list[str] = []

    def __call__(self, received: Received) -> Reply | None:
        token = self.tokens.get(received.header(signing.TOKEN_ID))
        given = received.header(signing.SIGNATURE)
        wire = b"".join(f"{k}: {v}".encode() for k, v in received.headers.items()) + received.body
        if token is None or any(t.encode() in wire for t in self.tokens.values()):
            reason = "unknown token, or a token in clear"
        elif not hmac.compare_digest(given, signing.signature(token, received.method, received.path,
                                                              received.body)):
            reason = "signature does not match"
        else:
            self.accepted.append(received.header(signing.TOKEN_ID))
            return None
        self.rejected.append(reason)
        return json_reply({"error": reason}, status=403)


def _default(received: Received) -> Reply:
    if isinstance(received.json, dict) and received.json.get("stream"):
        return raw_stream(list(toy_dialect.SAMPLE.stream), "application/x-ndjson", delay=0.01)
    return json_reply(toy_dialect.SAMPLE.whole)


@pytest.fixture(scope="module")
def door() -> Door:
    return Door()


@pytest.fixture(scope="module")
def upstream_server(door: Door) -> Iterator[Upstream]:
    with Upstream(guard=door, default=_default) as server:
        yield server


@pytest.fixture(scope="module")
def token_file(module_dir: Path) -> Path:
    path = module_dir / "tokenline.token"
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, upstream_server: Upstream, token_file: Path) -> MitmDump:
    return start_proxy("tokenline", "reverse:https://api.openai.com",
                       env={"GATEWAY_DIALECTS": toy_vendor.__name__,
                            credentials.TOKEN_FILE_ENV: str(token_file)},
                       gateway_upstream=toy_vendor.NAME, gateway_base_url=upstream_server.url,
                       gateway_model=MODEL, gateway_key_env="")


@pytest.fixture
def client(proxy: MitmDump, door: Door, token_file: Path) -> Iterator[openai.OpenAI]:
    door.accepted.clear()
    door.rejected.clear()
    token_file.write_text(TOKEN + "\n")
    with reverse_client(proxy) as sdk:
        yield sdk


def test_a_stream_is_signed_by_the_token_the_dialects_own_source_read(
        client: openai.OpenAI, upstream: Upstream, door: Door) -> None:
    events = list(client.responses.create(model="gpt-5.5", input="hi", stream=True))
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == STREAM_TEXT
    assert door.accepted == [signing.token_id(TOKEN)] and door.rejected == []
    (received,) = upstream.received
    assert received.path == toy_dialect.PATH
    assert received.header("authorization") == ""  # the client's own key stayed behind


def test_the_source_is_asked_again_for_every_request(
        client: openai.OpenAI, upstream: Upstream, door: Door, token_file: Path) -> None:
    assert client.responses.create(model="gpt-5.5", input="hi").output_text == "Hello whole."
    token_file.write_text(ROTATED)
    assert client.responses.create(model="gpt-5.5", input="hi").output_text == "Hello whole."
    assert door.accepted == [signing.token_id(TOKEN), signing.token_id(ROTATED)]


def test_no_token_is_the_dialects_own_refusal_and_nothing_goes_upstream(
        client: openai.OpenAI, upstream: Upstream, token_file: Path) -> None:
    token_file.write_text("")
    with pytest.raises(openai.AuthenticationError) as refused:
        client.responses.create(model="gpt-5.5", input="hi")
    assert "TOKENLINE_TOKEN_FILE" in str(refused.value)
    assert upstream.received == []


def test_a_saved_flow_keeps_no_token_and_no_signature(start_proxy: StartProxy, upstream: Upstream,
                                                      token_file: Path, module_dir: Path) -> None:
    token_file.write_text(TOKEN)
    saving = start_proxy("tokenline-saved", "reverse:https://api.openai.com",
                         env={"GATEWAY_DIALECTS": toy_vendor.__name__,
                              credentials.TOKEN_FILE_ENV: str(token_file)},
                         gateway_upstream=toy_vendor.NAME, gateway_base_url=upstream.url,
                         gateway_model=MODEL, gateway_key_env="")
    with reverse_client(saving) as sdk:
        sdk.responses.create(model="gpt-5.5", input="hi")
    (received,) = upstream.received
    sent = received.header(signing.SIGNATURE)
    assert saving.stop() == 0, saving.log
    with (module_dir / "tokenline-saved.flows").open("rb") as f:
        (flow,) = [flow for flow in io.FlowReader(f).stream() if isinstance(flow, http.HTTPFlow)]
    assert flow.request.headers[signing.SIGNATURE] == "<redacted>"
    saved = (module_dir / "tokenline-saved.flows").read_bytes() + saving.log.encode()
    assert sent and sent.encode() not in saved and TOKEN.encode() not in saved


def test_nothing_in_the_addon_names_the_toy_vendor() -> None:
    addon = "\n".join(path.read_text() for path in (ROOT / "addon").rglob("*.py")).lower()
    for name in (toy_vendor.NAME, "toy_vendor", credentials.TOKEN_FILE_ENV.lower()):
        assert name not in addon
