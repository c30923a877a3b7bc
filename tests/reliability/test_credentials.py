"""Credentials through the real proxy, checked where they could leak.

- At the upstream: the client's Authorization, ChatGPT account header, cookies and other
  OpenAI/Codex headers never reach a non-OpenAI upstream, in reverse or regular (CONNECT) mode;
  the upstream gets its own key in its own header; `client_metadata` is never forwarded.
- On disk and on screen: no upstream key in flow metadata, comments, mitmdump's output (at the
  most verbose settings), the saved `-w` flow file (read back with FlowReader and grepped as
  bytes) or a `gateway_capture_dir` capture (every file scanned); the client's own credentials
  are not kept in translated flows either.
- Flows the gateway does not match (other paths, other hosts, models without a route) are passed
  on byte for byte, both ways.
"""

from __future__ import annotations

import json
import ssl
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
    UPSTREAM_KEYS,
    free_port,
    routes_toml,
    sdk,
    start_gateway,
)
from tests.reliability.fault_upstream import Fault, FaultUpstream, dialect_of
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(180)

DIALECTS = ("anthropic", "chat", "gemini", "bedrock", "responses")
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
KEY_HEADER = {
    "anthropic": ("x-api-key", "{key}"),
    "chat": ("authorization", "Bearer {key}"),
    "gemini": ("x-goog-api-key", "{key}"),
    "bedrock": ("authorization", "Bearer {key}"),
    "responses": ("authorization", "Bearer {key}"),
}
KEY_ENV = {
    "anthropic": "RELIABILITY_ANTHROPIC_KEY",
    "chat": "RELIABILITY_CHAT_KEY",
    "gemini": "RELIABILITY_GEMINI_KEY",
    "bedrock": "AWS_BEARER_TOKEN_BEDROCK",
    "responses": "RELIABILITY_OPENAI_KEY",
}


@dataclass
class Run:
    proxy: MitmDump
    upstream: FaultUpstream
    flows: Path
    captures: Path


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


def _faults(client: openai.OpenAI, upstream: FaultUpstream) -> None:
    upstream.plan(Fault("status", status=429, headers={"retry-after": "1"}))
    with pytest.raises(openai.RateLimitError):
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
        routes.write_text(routes_toml(upstream.url, refused_url=dead, garbage_url=dead, plain_http_url=dead))
        proxy = start_gateway(
            tmp / "conf",
            routes,
            args=("-w", str(flows)),
            options={"gateway_capture_dir": str(captures), "flow_detail": "4", "termlog_verbosity": "debug"},
        )
        with proxy:
            client = sdk(proxy, **OPENAI_HEADERS)
            _turns(client)
            _faults(client, upstream)
        yield Run(proxy, upstream, flows, captures)


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
    name, template = KEY_HEADER[dialect]
    mine = [r for r in run.upstream.received if dialect_of(r.path) == dialect]
    assert mine
    for received in mine:
        assert received.headers.get(name) == template.format(key=UPSTREAM_KEYS[KEY_ENV[dialect]])
        others = [k for env, k in UPSTREAM_KEYS.items() if env != KEY_ENV[dialect]]
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
    for env, key in UPSTREAM_KEYS.items():
        assert key.encode() not in data, f"{env} is in the -w file"


def test_upstream_keys_are_not_in_any_saved_flow_state_metadata_or_comment(run: Run) -> None:
    flows = _saved_flows(run.flows)
    assert len(flows) >= 2 * len(DIALECTS) + 4
    for flow in flows:
        state = repr(flow.get_state()).encode() + repr(flow.metadata).encode() + flow.comment.encode()
        for env, key in UPSTREAM_KEYS.items():
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
    for env, key in UPSTREAM_KEYS.items():
        assert key not in run.proxy.log, f"{env} is in mitmdump's output"


def test_capture_folders_hold_no_secret(run: Run) -> None:
    files = [p for p in run.captures.rglob("*") if p.is_file()]
    assert len(files) >= 3 * len(DIALECTS), files
    for path in files:
        data = path.read_bytes()
        for secret in [*UPSTREAM_KEYS.values(), *CLIENT_SECRETS]:
            assert secret.encode() not in data, f"{secret!r} is in the capture file {path}"


# -- flows the gateway does not match ---------------------------------------------------------------


@pytest.fixture
def plain_proxy(tmp_path: Path) -> Iterator[tuple[MitmDump, FaultUpstream]]:
    """Regular mode, `gateway_match=/v1/responses` (any host), so a loopback request can be
    matched by path and still have no route (its model), next to paths that do not match."""
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
