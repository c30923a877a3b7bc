"""Credentials through the real proxy, checked where they could leak.

- At the upstream: the client's Authorization, ChatGPT account header, cookies and other
  OpenAI/Codex headers never reach a non-OpenAI upstream, in reverse or regular (CONNECT) mode;
  the upstream gets its own key in its own header; `client_metadata` is never forwarded.
- Credentials follow the route: on a `responses` route to OpenAI the client's own Authorization
  (API key or ChatGPT bearer) goes along and an exported OPENAI_API_KEY never replaces it (nor
  stands in when the client sent none); a route to another host that names no `key_env` gets no
  key, whatever the dialect's default variable holds; a key over plain http to a remote host and
  a password in a base URL stop mitmdump at start-up.
- On disk and on screen: no upstream key in flow metadata, comments, mitmdump's output (at the
  most verbose settings), the saved `-w` flow file (read back with FlowReader and grepped as
  bytes) or a `gateway_capture_dir` capture (every file scanned); the client's own credentials
  are not kept in translated flows either. An upstream error that repeats the key it was sent
  (a value of no known shape, in a variable of no known name) reaches none of these, nor the
  client, whole or in a stream.
- While a stream is in flight: mitmweb's `/flows` and `/flows/dump` hold no key, and a
  `mitmdump -w` stopped with SIGINT mid-stream writes none, though the upstream got it.
- Flows the gateway does not match (other paths, other hosts, models without a route) are passed
  on byte for byte, both ways.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from mitmproxy import io as mitmio

from tests.reliability.conftest import (
    ACCOUNT_ID,
    CLIENT_HEADERS,
    CLIENT_KEY,
    COOKIE,
    GUARD,
    UPSTREAM_KEYS,
    free_port,
    routes_toml,
    sdk,
    start_gateway,
)
from tests.reliability.fault_upstream import Fault, FaultUpstream, dialect_of, events
from tests.support import conformance
from tests.support.loopback_http import Loopback, Received, RecordingHandler
from tests.support.mitmdump import GATEWAY, MitmDump
from translators import dialect as dialects

pytestmark = pytest.mark.timeout(180)

DIALECTS = dialects.names()
"""Every dialect in the registry, the toy one included (tests/conftest.py)."""
CLIENT_METADATA = {
    "installation_id": "inst-reliability-SECRET-4d3c2b",
    "session_id": "sess-reliability-SECRET-1a",
}
OPENAI_HEADERS = {
    "openai-organization": "org-reliability-SECRET",
    "openai-project": "proj_reliability_SECRET",
    "session_id": "sess-header-reliability-SECRET",
    "x-openai-subagent": "review-reliability-SECRET",
}
CLIENT_SECRETS = [
    CLIENT_KEY,
    ACCOUNT_ID,
    COOKIE.split("=", 1)[1],
    *CLIENT_METADATA.values(),
    *OPENAI_HEADERS.values(),
]
ODD_ENV = "RELIABILITY_ODD_SECRET"
ODD_KEY = "odd-credential-of-no-known-shape-7f3e9a"
"""A key no shape or variable-name heuristic finds: only the exact value sent can scrub it."""
ODD_ROUTE = """
[[route]]
model = "oddkey-*"
upstream = "anthropic"
base_url = "{url}/odd"
target_model = "claude-sonnet-4-6"
key_env = "RELIABILITY_ODD_SECRET"
"""
ODD_ERROR = json.dumps({"type": "error", "error": {"type": "authentication_error",
                                                   "message": f"invalid x-api-key: {ODD_KEY}"}}).encode()
ODD_STREAM = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
              b'"role":"assistant","model":"claude-sonnet-4-6","content":[],"stop_reason":null,'
              b'"usage":{"input_tokens":1,"output_tokens":0}}}\n\n'
              # some text first: an error before any content is tried again (docs/pools.md)
              b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
              b'"content_block":{"type":"text","text":""}}\n\n'
              b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
              b'"delta":{"type":"text_delta","text":"partial"}}\n\n'
              b"event: error\ndata: "
              + json.dumps({"type": "error", "error": {
                  "type": "api_error", "message": f"key {ODD_KEY} was revoked mid-stream"}}).encode()
              + b"\n\n")
ALL_KEYS = {**UPSTREAM_KEYS, ODD_ENV: ODD_KEY}


@dataclass
class Run:
    proxy: MitmDump
    upstream: FaultUpstream
    flows: Path
    captures: Path
    client_saw: list[str]
    """What the client got from the upstream errors that repeat the key."""


def _turns(client: openai.OpenAI) -> None:
    """Every kind of flow: streamed, whole, upstream error, cut, unreachable, refused by us."""
    for dialect in DIALECTS:
        extra = {"client_metadata": CLIENT_METADATA}
        events = list(
            client.responses.create(model=f"{dialect}-cred", input="hi", stream=True, extra_body=extra)
        )
        assert events[-1].type == "response.completed", (dialect, [e.type for e in events])
        assert (
            client.responses.create(model=f"{dialect}-cred", input="hi", extra_body=extra).status
            == "completed"
        )


def _key_echoes(client: openai.OpenAI, upstream: FaultUpstream) -> list[str]:
    """The upstream repeats the key it was sent: in a 401's message, and in a stream's error event."""
    seen = []
    upstream.plan(Fault("body", status=401, body=ODD_ERROR))
    with pytest.raises(openai.AuthenticationError) as caught:
        client.responses.create(model="oddkey-whole", input="hi", stream=True)
    seen.append(caught.value.response.text)
    upstream.plan(Fault("body", status=200, headers={"content-type": "text/event-stream"}, body=ODD_STREAM))
    events = list(client.responses.create(model="oddkey-stream", input="hi", stream=True))
    seen.append(json.dumps([event.model_dump() for event in events]))
    return seen


def _faults(client: openai.OpenAI, upstream: FaultUpstream) -> None:
    upstream.plan(Fault("status", status=429, headers={"retry-after": "1"}))
    list(client.responses.create(model="anthropic-cred", input="hi", stream=True))  # tried again after it
    upstream.plan(Fault("status", status=400))
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="anthropic-cred", input="hi", stream=True)
    upstream.plan(Fault("cut", after=2))
    list(client.responses.create(model="bedrock-cred", input="hi", stream=True))
    with pytest.raises(openai.APIStatusError):
        client.responses.create(model="refused-cred", input="hi", stream=True)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="anthropic-cred", input="hi", previous_response_id="resp_1")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """One verbose mitmdump (`flow_detail=4`, debug log) saving flows and captures, driven with
    every kind of flow in reverse mode; stopped before the tests read what it wrote."""
    tmp = tmp_path_factory.mktemp("credentials")
    flows, captures = tmp / "flows.mitm", tmp / "captures"
    with FaultUpstream() as upstream:
        routes = tmp / "routes.toml"
        dead = f"http://127.0.0.1:{free_port()}"
        routes.write_text(routes_toml(upstream.url, refused_url=dead, garbage_url=dead, plain_http_url=dead)
                          + ODD_ROUTE.format(url=upstream.url))
        proxy = start_gateway(
            tmp / "conf",
            routes,
            args=("-w", str(flows)),
            options={"gateway_capture_dir": str(captures), "flow_detail": "4", "termlog_verbosity": "debug"},
            env={ODD_ENV: ODD_KEY},
        )
        with proxy:
            client = sdk(proxy, **OPENAI_HEADERS)
            _turns(client)
            _faults(client, upstream)
            seen = _key_echoes(client, upstream)
        yield Run(proxy, upstream, flows, captures, seen)


def _raw(received: Any) -> bytes:
    return json.dumps(received.headers).encode() + b"\n" + received.path.encode() + b"\n" + received.body


# -- at the upstream ------------------------------------------------------------------------------


def test_client_credentials_never_reach_a_non_openai_upstream(run: Run) -> None:
    assert len(run.upstream.received) >= 2 * len(DIALECTS)
    for received in run.upstream.received:
        raw = _raw(received)
        for secret in CLIENT_SECRETS:
            assert secret.encode() not in raw, f"{secret!r} reached {received.path}"
        for name in ("cookie", "chatgpt-account-id", "originator", "x-codex-turn-metadata", *OPENAI_HEADERS):
            assert name not in received.headers, f"{name} reached {received.path}"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_upstream_gets_its_own_key_in_its_own_header(run: Run, dialect: str) -> None:
    declared = conformance.of(dialect)
    name, template = declared.key_header
    mine = [r for r in run.upstream.received if dialect_of(r.path) == dialect]
    assert mine
    for received in mine:
        assert received.headers.get(name) == template.format(key=UPSTREAM_KEYS[declared.key_env])
        others = [k for env, k in UPSTREAM_KEYS.items() if env != declared.key_env]
        assert not [k for k in others if k.encode() in _raw(received)], "another vendor's key was sent"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_client_metadata_is_never_forwarded(run: Run, dialect: str) -> None:
    bodies = [r.json for r in run.upstream.received if dialect_of(r.path) == dialect]
    assert bodies
    for body in bodies:
        assert "client_metadata" not in body
        assert CLIENT_METADATA["installation_id"] not in json.dumps(body)


def test_regular_mode_connect_requests_lose_client_credentials_too(tmp_path: Path) -> None:
    """Codex's built-in provider goes through the proxy with CONNECT api.openai.com:443 and its
    ChatGPT login headers; the translated flow still reaches only the local upstream, cleaned."""
    with FaultUpstream() as upstream:
        routes = tmp_path / "routes.toml"
        dead = f"http://127.0.0.1:{free_port()}"
        routes.write_text(routes_toml(upstream.url, refused_url=dead, garbage_url=dead, plain_http_url=dead))
        with start_gateway(tmp_path / "conf", routes, mode="regular") as proxy:
            http_client = httpx.Client(
                proxy=proxy.url, timeout=30, verify=ssl.create_default_context(cafile=str(proxy.ca_cert))
            )
            client = openai.OpenAI(
                base_url="https://api.openai.com/v1",
                api_key=CLIENT_KEY,
                max_retries=0,
                http_client=http_client,
                default_headers={**CLIENT_HEADERS, **OPENAI_HEADERS},
            )
            for dialect in DIALECTS:
                events = list(
                    client.responses.create(
                        model=f"{dialect}-connect",
                        input="hi",
                        stream=True,
                        extra_body={"client_metadata": CLIENT_METADATA},
                    )
                )
                assert events[-1].type == "response.completed"
            assert "offline-guard blocked" not in proxy.log
        assert len(upstream.received) == len(DIALECTS)
        for received in upstream.received:
            for secret in CLIENT_SECRETS:
                assert secret.encode() not in _raw(received), f"{secret!r} reached {received.path}"


# -- on disk and on screen ------------------------------------------------------------------------


def _saved_flows(path: Path) -> list[Any]:
    with path.open("rb") as f:
        return list(mitmio.FlowReader(f).stream())


def test_upstream_keys_are_not_in_the_saved_flow_file(run: Run) -> None:
    data = run.flows.read_bytes()
    assert data, "no flows were saved"
    assert b"oddkey-stream" in data, "the flows that repeat a key were not saved"
    for env, key in ALL_KEYS.items():
        assert key.encode() not in data, f"{env} is in the -w file"


def test_upstream_keys_are_not_in_any_saved_flow_state_metadata_or_comment(run: Run) -> None:
    flows = _saved_flows(run.flows)
    assert len(flows) >= 2 * len(DIALECTS) + 4
    for flow in flows:
        state = repr(flow.get_state()).encode() + repr(flow.metadata).encode() + flow.comment.encode()
        for env, key in ALL_KEYS.items():
            assert key.encode() not in state, f"{env} is in the saved flow {flow.request.pretty_url}"


def test_translated_flows_keep_none_of_the_clients_credentials(run: Run) -> None:
    translated = [f for f in _saved_flows(run.flows) if "gateway" in f.metadata]
    assert translated
    for flow in translated:
        headers = repr(flow.request.headers.fields).encode()
        for secret in (CLIENT_KEY, ACCOUNT_ID, COOKIE.split("=", 1)[1]):
            assert secret.encode() not in headers, f"client credential kept in {flow.request.pretty_url}"


def test_upstream_keys_are_not_in_mitmdumps_output(run: Run) -> None:
    assert "POST" in run.proxy.log  # flow_detail=4 printed the flows
    for env, key in ALL_KEYS.items():
        assert key not in run.proxy.log, f"{env} is in mitmdump's output"


def test_capture_folders_hold_no_secret(run: Run) -> None:
    files = [p for p in run.captures.rglob("*") if p.is_file()]
    assert len(files) >= 3 * len(DIALECTS), files
    for path in files:
        data = path.read_bytes()
        for secret in [*ALL_KEYS.values(), *CLIENT_SECRETS]:
            assert secret.encode() not in data, f"{secret!r} is in the capture file {path}"


def test_an_upstream_error_that_repeats_the_key_reaches_the_client_without_it(run: Run) -> None:
    whole, stream = run.client_saw
    assert "invalid x-api-key: <redacted>" in whole
    assert "response.failed" in stream and "key <redacted> was revoked mid-stream" in stream
    assert ODD_KEY not in whole + stream
    (odd_whole, odd_stream) = [r for r in run.upstream.received if r.path.startswith("/odd/")]
    assert odd_whole.headers["x-api-key"] == odd_stream.headers["x-api-key"] == ODD_KEY


def test_an_upstream_error_that_repeats_the_key_is_noted_without_it(run: Run) -> None:
    odd = [f for f in _saved_flows(run.flows) if "oddkey" in f.metadata.get("gateway.client_request", "")]
    assert len(odd) == 2
    whole = next(f for f in odd if f.response.status_code == 401)
    assert whole.comment.endswith("authentication_error: invalid x-api-key: <redacted>"), whole.comment
    for flow in odd:  # the upstream's own answer, kept for the views and captures
        assert b"<redacted>" in flow.metadata["gateway.upstream_response"]


# -- flows the gateway does not match ---------------------------------------------------------------


@pytest.fixture(scope="module")
def plain_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MitmDump, FaultUpstream]]:
    """Regular mode, `gateway_match=/v1/responses` (any host), so a loopback request can be
    matched by path and still have no route (its model), next to paths that do not match. One
    for the module: each test compares the last two requests the upstream received."""
    tmp_path = tmp_path_factory.mktemp("plain")
    with FaultUpstream() as upstream:
        routes = tmp_path / "routes.toml"
        dead = f"http://127.0.0.1:{free_port()}"
        routes.write_text(routes_toml(upstream.url, refused_url=dead, garbage_url=dead, plain_http_url=dead))
        with start_gateway(
            tmp_path / "conf",
            routes,
            mode="regular",
            args=("-w", str(tmp_path / "flows.mitm")),
            options={"gateway_match": "/v1/responses"},
        ) as proxy:
            yield proxy, upstream


UNMATCHED = [
    ("GET", "/v1/models", b""),
    ("POST", "/v1/chat/completions", b'{"model": "anthropic-x",   "messages": [] }'),
    ("POST", "/v1/responses", b'{"model":"gpt-no-route", "input" : "hi",\n "client_metadata": {"a": 1}}'),
    ("POST", "/v1/responses/resp_1/cancel", b"{}"),
]


@pytest.mark.parametrize(("method", "path", "body"), UNMATCHED, ids=[f"{m} {p}" for m, p, _ in UNMATCHED])
def test_a_flow_the_gateway_does_not_match_passes_byte_for_byte(
    plain_proxy: tuple[MitmDump, FaultUpstream], method: str, path: str, body: bytes
) -> None:
    proxy, upstream = plain_proxy
    headers = {"authorization": f"Bearer {CLIENT_KEY}", **CLIENT_HEADERS, "content-type": "application/json"}
    with httpx.Client(proxy=proxy.url, timeout=30) as client:
        response = client.request(method, f"{upstream.url}{path}", content=body, headers=headers)
    with httpx.Client(timeout=30) as client:
        direct = client.request(method, f"{upstream.url}{path}", content=body, headers=headers)
    (through, straight) = upstream.received[-2:]
    assert through.body == straight.body == body
    for name, value in headers.items():
        assert through.headers.get(name.lower()) == value, name
    assert response.status_code == direct.status_code
    assert response.content == direct.content
    assert {k: v for k, v in response.headers.items() if k not in ("date",)} == {
        k: v for k, v in direct.headers.items() if k not in ("date",)
    }
    assert "offline-guard blocked" not in proxy.log


# -- credentials follow the route ------------------------------------------------------------------

TO_LOOPBACK = Path(__file__).with_name("to_loopback.py")
OPERATOR_OPENAI_KEY = "sk-proj-operator-EXPORTED-must-not-relay-0123"
CHATGPT_BEARER = "eyJhbGciOi.chatgpt-login-token.reliability"
ROUTE_RULES = """
[[route]]
model = "openai-*"
upstream = "responses"

[[route]]
model = "vllm-*"
upstream = "chat"
base_url = "{url}/v1"
target_model = "qwen3"

[[route]]
model = "proxy-*"
upstream = "anthropic"
base_url = "{url}"
target_model = "claude-sonnet-4-6"
"""


@pytest.fixture(scope="module")
def route_rules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MitmDump, FaultUpstream]]:
    """Routes that name no key_env (to OpenAI itself, a local vLLM, a local Anthropic proxy), with
    every dialect's default variable exported; flows to api.openai.com are moved to the local
    upstream after the gateway decided their credentials (`to_loopback.py`)."""
    tmp = tmp_path_factory.mktemp("route-rules")
    with FaultUpstream() as upstream:
        routes = tmp / "routes.toml"
        routes.write_text(ROUTE_RULES.format(url=upstream.url))
        env = {"OPENAI_API_KEY": OPERATOR_OPENAI_KEY,
               "DEEPSEEK_API_KEY": UPSTREAM_KEYS["RELIABILITY_CHAT_KEY"],
               "ANTHROPIC_API_KEY": UPSTREAM_KEYS["RELIABILITY_ANTHROPIC_KEY"],
               "TO_LOOPBACK_PORT": str(upstream.port)}
        with start_gateway(tmp / "conf", routes, scripts=(TO_LOOPBACK,), env=env) as proxy:
            yield proxy, upstream


def _sent(route_rules: tuple[MitmDump, FaultUpstream], model: str, headers: dict[str, str]) -> Received:
    """What the upstream received for one streamed turn with these client headers."""
    proxy, upstream = route_rules
    before = len(upstream.received)
    with httpx.Client(timeout=30) as client:
        body = {"model": model, "input": "hi", "stream": True}
        answer = client.post(f"{proxy.url}/v1/responses", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    assert "offline-guard blocked" not in proxy.log
    (received,) = upstream.received[before:]
    return received


@pytest.mark.parametrize("bearer", [CLIENT_KEY, CHATGPT_BEARER], ids=["api-key", "chatgpt-login"])
def test_to_openai_the_clients_own_authorization_goes_along_not_the_exported_key(
        route_rules: tuple[MitmDump, FaultUpstream], bearer: str) -> None:
    client = {"authorization": f"Bearer {bearer}", "chatgpt-account-id": ACCOUNT_ID}
    received = _sent(route_rules, "openai-x", client)
    assert received.path == "/v1/responses"
    assert received.headers["authorization"] == f"Bearer {bearer}"
    assert received.headers["chatgpt-account-id"] == ACCOUNT_ID
    assert OPERATOR_OPENAI_KEY.encode() not in _raw(received)


def test_to_openai_a_client_without_credentials_gets_none_of_the_operators(
        route_rules: tuple[MitmDump, FaultUpstream]) -> None:
    """Not an open relay on the operator's account."""
    received = _sent(route_rules, "openai-x", {})
    assert "authorization" not in received.headers
    assert OPERATOR_OPENAI_KEY.encode() not in _raw(received)


@pytest.mark.parametrize(("model", "header"), [("vllm-x", "authorization"), ("proxy-x", "x-api-key")])
def test_a_route_to_another_host_that_names_no_key_gets_none(
        route_rules: tuple[MitmDump, FaultUpstream], model: str, header: str) -> None:
    """A local vLLM is not DeepSeek, a local proxy is not Anthropic: their default keys stay home."""
    received = _sent(route_rules, model, {"authorization": f"Bearer {CLIENT_KEY}"})
    assert header not in received.headers
    for key in UPSTREAM_KEYS.values():
        assert key.encode() not in _raw(received)


@pytest.mark.parametrize(("route", "said", "secret"), [
    ('upstream = "chat"\nbase_url = "http://192.0.2.10:8000/v1"\nkey_env = "GPU_KEY"\n',
     "is plain http to a host that is not loopback, and $GPU_KEY would cross the network in clear", None),
    ('upstream = "chat"\nbase_url = "https://team:pa55-in-url-0123@llm.example/v1"\n',
     "has a user:password@ part", "pa55-in-url-0123"),
], ids=["key-over-plain-http", "password-in-base-url"])
def test_a_credential_that_would_leak_stops_mitmdump_at_start_up(tmp_path: Path, route: str, said: str,
                                                                 secret: str | None) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text("[[route]]\n" + route)
    with pytest.raises(RuntimeError, match="did not start") as caught, \
            MitmDump(tmp_path / "conf", options={"gateway_config": str(routes)}):
        pass
    assert said in str(caught.value)
    if secret:
        assert secret not in str(caught.value)


# -- while a stream is in flight --------------------------------------------------------------------

HELD_ENV = "RELIABILITY_HELD_SECRET"
HELD_KEY = "held-credential-in-flight-4c1d9e7b"


class HeldUpstream(Loopback[None]):
    """An Anthropic stream that sends its first events (its first text among them: the opening
    events alone are held back, docs/pools.md), then stays open until `release` is set."""

    thread_name = "held-upstream"

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def answer(self, handler: RecordingHandler, received: Received) -> None:
        chunks = events("anthropic")
        handler.start_chunked(200, {"content-type": "text/event-stream"})
        for chunk in chunks[:4]:
            handler.send_chunk(chunk)
        self.release.wait(60)
        for chunk in chunks[4:]:
            handler.send_chunk(chunk)
        handler.end_chunked()


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[HeldUpstream, Path]]:
    with HeldUpstream() as upstream:
        routes = tmp_path / "routes.toml"
        routes.write_text(f'[[route]]\nupstream = "anthropic"\nbase_url = "{upstream.url}"\n'
                          f'target_model = "claude-sonnet-4-6"\nkey_env = "{HELD_ENV}"\n')
        try:
            yield upstream, routes
        finally:
            upstream.release.set()


def _open_stream(client: httpx.Client, url: str) -> Iterator[bytes]:
    """Start a streamed turn and return once the client has its first events (the upstream holds)."""
    body = {"model": "gpt-5.5", "input": "hi", "stream": True}
    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    with client.stream("POST", f"{url}/v1/responses", json=body, headers=headers) as answer:
        seen = b""
        for chunk in answer.iter_raw():
            seen += chunk
            if b"response.created" in seen:
                yield seen
                return


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"mitmweb exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"nothing listens on {port} after {timeout}s")


def test_mitmweb_shows_and_dumps_no_key_while_a_stream_is_open(
        tmp_path: Path, held: tuple[HeldUpstream, Path]) -> None:
    upstream, routes = held
    token, web, port = secrets.token_hex(8), free_port(), free_port()
    command = [str(Path(sys.executable).parent / "mitmweb"),
               "--web-host", "127.0.0.1", "--web-port", str(web), "--no-web-open-browser",
               "--listen-host", "127.0.0.1", "-p", str(port),
               "--mode", "reverse:https://api.openai.com", "--set", f"confdir={tmp_path / 'conf'}",
               "--set", f"web_password={token}", "--set", f"gateway_config={routes}",
               "-s", str(GATEWAY), "-s", str(GUARD)]
    with (tmp_path / "mitmweb.log").open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, HELD_ENV: HELD_KEY})
    try:
        _wait_for_port(web, process)
        _wait_for_port(port, process)
        with httpx.Client(timeout=30) as client:
            for _ in _open_stream(client, f"http://127.0.0.1:{port}"):
                assert upstream.received[-1].headers["x-api-key"] == HELD_KEY  # it was sent
                shown = client.get(f"http://127.0.0.1:{web}/flows", params={"token": token})
                dumped = client.get(f"http://127.0.0.1:{web}/flows/dump", params={"token": token})
                assert shown.status_code == dumped.status_code == 200
                assert "/v1/messages" in shown.text and b"/v1/messages" in dumped.content  # the open flow
                assert HELD_KEY not in shown.text
                assert HELD_KEY.encode() not in dumped.content
                upstream.release.set()
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_mitmdump_stopped_mid_stream_writes_no_key(tmp_path: Path, held: tuple[HeldUpstream, Path]) -> None:
    upstream, routes = held
    flows = tmp_path / "flows.mitm"
    proxy = MitmDump(tmp_path / "conf", mode="reverse:https://api.openai.com", args=("-w", str(flows)),
                     options={"gateway_config": str(routes)}, env={HELD_ENV: HELD_KEY})
    with proxy, httpx.Client(timeout=30) as client:
        for _ in _open_stream(client, proxy.url):
            assert upstream.received[-1].headers["x-api-key"] == HELD_KEY
            proxy.stop()  # SIGINT, while the upstream holds the stream open
    assert proxy.returncode is not None
    (flow,) = _saved_flows(flows)
    assert flow.request.path == "/v1/messages" and "gateway" in flow.metadata  # the flow in flight
    assert flow.request.headers["x-api-key"] == "<redacted>"
    assert HELD_KEY.encode() not in flows.read_bytes()
