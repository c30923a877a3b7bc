"""Issue 35, cases 4, 5 and 7, through real mitmdump with client keys.

- Case 4: a variant of a path the gateway serves (`//v1/responses`, `/v1/Responses`, `%72esponses`,
  dot segments, a trailing slash, `//v1/messages`, `//gateway/usage`, `/GATEWAY/usage`) is served
  by the gateway under its normal form: checked, translated, its key gone; a path the gateway does
  not serve is refused in reverse mode, unless `gateway_pass` lists it (addon/serve/paths.py,
  addon/team/passing.py). Before: each went to the reverse target untranslated, unchecked, with
  the client's gateway key in it and in the saved flow.
- Case 5: a model name that is a dot segment or holds a control character is refused on every
  client dialect and endpoint before any upstream URL is made. Before: `/v1/messages` and
  `count_tokens` called `GET /v1beta/models/..` with the operator's key.
- Case 7: in regular mode a request or a tunnel without a client key is 407, unless
  `gateway_pass` lists its host. Before: an open proxy (a keyless GET to an internal host got 200,
  a keyless CONNECT was tunnelled).
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import h11
import httpx
import pytest
from mitmproxy import io as mio

from tests.addon.e2e.upstream import Upstream
from tests.reliability.hostile import KEY, team, turn_body
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(120)
BEARER = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
VARIANTS = ["//v1/responses", "/v1/Responses", "/V1/responses", "/v1/%72esponses", "/./v1/responses",
            "/x/../v1/responses", "/v1/responses/"]


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(scope="module")
def target() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh(upstream: Upstream, target: Upstream) -> None:
    upstream.reset()
    target.reset()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("paths")


@pytest.fixture(scope="module")
def proxy(workdir: Path, target: Upstream, upstream: Upstream) -> Iterator[MitmDump]:
    with team(workdir / "reverse", target, upstream, options={"gateway_pass": "/health"}) as proxy:
        yield proxy


def _raw(proxy: MitmDump, method: str, path: str, headers: dict[str, str],
         body: bytes = b"") -> tuple[int, bytes]:
    """One request with its path exactly as written (an HTTP client would normalise it); the status
    and the whole body (h11 reads where it ends)."""
    client = h11.Connection(h11.CLIENT)
    fields = [("host", "gateway.test"), ("content-length", str(len(body))), *headers.items()]
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=30) as sock:
        sock.sendall(client.send(h11.Request(method=method, target=path, headers=fields))
                     + client.send(h11.Data(data=body)) + client.send(h11.EndOfMessage()))
        status, data = 0, b""
        while True:
            event = client.next_event()
            if event is h11.NEED_DATA:
                client.receive_data(sock.recv(65536))
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                data += event.data
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                return status, data


@pytest.mark.parametrize("path", VARIANTS)
def test_a_variant_of_the_turn_path_is_the_gateways_with_a_key(
        proxy: MitmDump, upstream: Upstream, target: Upstream, path: str) -> None:
    status, data = _raw(proxy, "POST", path, BEARER, turn_body())
    assert status == 200 and b"response.completed" in data
    assert len(upstream.received) == 1 and target.received == []
    assert KEY not in json.dumps(upstream.received[0].headers)


@pytest.mark.parametrize("path", [*VARIANTS, "//v1/messages", "/v1/Messages/"])
def test_a_variant_without_a_key_is_401_and_goes_nowhere(
        proxy: MitmDump, upstream: Upstream, target: Upstream, path: str) -> None:
    status, _ = _raw(proxy, "POST", path, {"content-type": "application/json"}, turn_body())
    assert status == 401
    assert upstream.received == [] and target.received == []


def test_a_variant_of_the_messages_path_is_the_gateways(proxy: MitmDump, upstream: Upstream,
                                                        target: Upstream) -> None:
    body = json.dumps({"model": "claude-x", "max_tokens": 16, "stream": True,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    status, data = _raw(proxy, "POST", "//v1/messages", {"x-api-key": KEY, "anthropic-version": "2023-06-01",
                                                         "content-type": "application/json"}, body)
    assert status == 200 and b"message_stop" in data
    assert len(upstream.received) == 1 and target.received == []


@pytest.mark.parametrize("path", ["//gateway/usage", "/GATEWAY/usage", "/gateway/Usage/"])
def test_a_variant_of_the_usage_path_is_the_gateways(proxy: MitmDump, target: Upstream, path: str) -> None:
    status, data = _raw(proxy, "GET", path, {"authorization": f"Bearer {KEY}"})
    assert status == 200 and b'"client":"ana"' in data.replace(b" ", b"")
    assert _raw(proxy, "GET", path, {})[0] == 401
    assert target.received == []


@pytest.mark.parametrize("path", ["//gateway/codex/models", "/Gateway/Codex/Models/"])
def test_a_variant_of_the_catalog_path_is_the_gateways(proxy: MitmDump, target: Upstream, path: str) -> None:
    status, data = _raw(proxy, "GET", path, {"authorization": f"Bearer {KEY}"})
    assert status == 200 and b'"models"' in data
    assert _raw(proxy, "GET", path, {})[0] == 401
    assert target.received == []


@pytest.mark.parametrize("path", ["//v1/responses/resp_AbC", "/V1/Responses/resp_AbC/",
                                  "/x/../v1/conversations/conv_XyZ"])
def test_a_variant_of_a_store_path_is_the_stores(proxy: MitmDump, target: Upstream, path: str) -> None:
    status, data = _raw(proxy, "GET", path, {"authorization": f"Bearer {KEY}"})
    assert status == 404 and b"not found" in data  # the store's own answer: no such id of this client
    assert b"_AbC" in data or b"_XyZ" in data  # the id's case kept
    assert target.received == []


def test_a_path_the_gateway_does_not_serve_is_refused_and_its_key_goes_nowhere(
        proxy: MitmDump, target: Upstream) -> None:
    for path in ("/v1/files", "//v1/files", "/v1/embeddings"):
        status, data = _raw(proxy, "GET", path, {"authorization": f"Bearer {KEY}"})
        assert status == 404 and b"not_served" in data
    assert target.received == []


def test_what_gateway_pass_lists_passes_without_any_gateway_key(proxy: MitmDump, target: Upstream) -> None:
    status, _ = _raw(proxy, "GET", "/health", {"authorization": f"Bearer {KEY}", "x-api-key": KEY})
    assert status == 200
    (received,) = target.received
    assert KEY not in json.dumps(received.headers)


def test_no_saved_flow_holds_the_key(proxy: MitmDump, workdir: Path) -> None:
    _raw(proxy, "POST", "//v1/responses", BEARER, turn_body())
    with (workdir / "reverse" / "flows.mitm").open("rb") as saved:
        flows = list(mio.FlowReader(saved).stream())
    assert flows
    for flow in flows:
        assert KEY not in str(flow.request.headers) and KEY.encode() not in (flow.request.raw_content or b"")


# -- case 5 -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def keeps_model(workdir: Path, target: Upstream, upstream: Upstream) -> Iterator[MitmDump]:
    """A route that sends the client's own model name on, to Gemini (whose URLs hold the model), with
    capabilities read from the vendor (a URL with the model too)."""
    options = {"gateway_upstream": "gemini", "gateway_model": "", "gateway_key_env": "GEMINI_API_KEY",
               "gateway_capabilities": "vendor", "gateway_capabilities_timeout": "1"}
    with team(workdir / "gemini", target, upstream, options=options,
              env={"GEMINI_API_KEY": "gemini-operator-key-0123"}) as proxy:
        yield proxy


@pytest.mark.parametrize("model", ["..", "models/..", "x\u0000y", "a/../../b", "."])
@pytest.mark.parametrize("path", ["/v1/messages", "/v1/messages/count_tokens", "/v1/responses"])
def test_a_model_name_that_would_change_an_upstream_url_is_refused_on_every_path(
        keeps_model: MitmDump, upstream: Upstream, path: str, model: str) -> None:
    if path == "/v1/responses":
        body = turn_body(model=model)
    else:
        body = json.dumps({"model": model, "max_tokens": 16,
                           "messages": [{"role": "user", "content": "hi"}]}).encode()
    status, data = _raw(keeps_model, "POST", path, {"x-api-key": KEY, "anthropic-version": "2023-06-01",
                                                    "content-type": "application/json"}, body)
    assert status == 400, data[:300]
    assert upstream.received == [], [r.path for r in upstream.received]


# -- case 7 -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def regular(workdir: Path, target: Upstream, upstream: Upstream) -> Iterator[MitmDump]:
    with team(workdir / "regular", target, upstream, mode="regular",
              options={"gateway_pass": "127.0.0.1/public/*"}) as proxy:
        yield proxy


def _password() -> str:
    return "Basic " + base64.b64encode(f"ana:{KEY}".encode()).decode()


def test_a_keyless_request_through_the_proxy_is_407(regular: MitmDump, target: Upstream) -> None:
    with httpx.Client(proxy=regular.url, timeout=30) as client:
        answer = client.get(f"{target.url}/internal/admin")
    assert answer.status_code == 407
    assert answer.headers["proxy-authenticate"].startswith("Basic")
    assert target.received == []


def test_a_keyless_tunnel_is_407_and_opens_nothing(regular: MitmDump) -> None:
    with socket.create_connection(("127.0.0.1", regular.port), timeout=30) as sock:
        sock.sendall(b"CONNECT 127.0.0.5:9 HTTP/1.1\r\nHost: 127.0.0.5:9\r\n\r\n")
        status_line = sock.recv(65536).split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 407 "), status_line


def test_a_request_with_the_proxy_password_passes_without_it(regular: MitmDump, target: Upstream) -> None:
    with httpx.Client(proxy=regular.url.replace("http://", f"http://ana:{KEY}@"), timeout=30) as client:
        answer = client.get(f"{target.url}/internal/x")
    assert answer.status_code == 200
    (received,) = target.received
    assert "proxy-authorization" not in received.headers and KEY not in json.dumps(received.headers)


def test_what_gateway_pass_lists_passes_without_a_key_and_the_start_up_says_so(
        regular: MitmDump, target: Upstream) -> None:
    with httpx.Client(proxy=regular.url, timeout=30) as client:
        assert client.get(f"{target.url}/public/page").status_code == 200
        assert client.get(f"{target.url}/private/page").status_code == 407
    assert len(target.received) == 1
    assert "passing without a key: 127.0.0.1/public/*" in regular.log
