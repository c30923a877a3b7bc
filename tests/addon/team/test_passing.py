"""What passes a team gateway without being taken on (addon/team/passing.py; issue 35, cases 4 and 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mitmproxy import connection, exceptions, http
from mitmproxy.proxy.mode_specs import ProxyMode
from mitmproxy.test import taddons, tflow

from addon.serve.flow import Flows
from addon.team import clients_file, keys, passing

KEY = clients_file.KEY_PREFIX + "ana-passing-0123456789"


@pytest.fixture
def door(tmp_path: Path) -> passing.Passing:
    flows = Flows()
    gate = keys.Keys(flows)
    door = passing.Passing(gate, flows, lambda: ("api.openai.com",))
    with taddons.context(gate, door) as tctx:
        (tmp_path / "clients.toml").write_text(
            clients_file.table(clients_file.Client("ana", clients_file.hash_key(KEY))))
        tctx.configure(gate, gateway_clients=str(tmp_path / "clients.toml"))
        tctx.configure(door, gateway_pass=["pypi.org", "internal.example/health", "/status"])
        yield door


def _flow(url: str, mode: str, headers: dict[str, str] | None = None) -> http.HTTPFlow:
    flow = tflow.tflow(req=http.Request.make("GET", url, b"", headers or {}))
    flow.client_conn.proxy_mode = ProxyMode.parse(mode)
    return flow


def test_a_keyless_request_where_the_client_names_the_host_is_407(door: passing.Passing) -> None:
    flow = _flow("http://10.0.0.5/admin", "regular")
    assert door.check(flow)
    assert flow.response is not None and flow.response.status_code == 407
    assert flow.response.headers["proxy-authenticate"].startswith("Basic")


def test_a_keyed_request_passes_without_its_key(door: passing.Passing) -> None:
    flow = _flow("http://10.0.0.5/x", "regular", {"authorization": f"Bearer {KEY}", "x-api-key": "gwk-old"})
    assert not door.check(flow)
    assert flow.response is None
    assert "authorization" not in flow.request.headers and "x-api-key" not in flow.request.headers


def test_a_request_the_gateway_does_not_serve_is_refused_in_reverse_mode_key_or_not(
        door: passing.Passing) -> None:
    flow = _flow("https://api.openai.com//v1/files", "reverse:https://api.openai.com",
                 {"authorization": f"Bearer {KEY}"})
    assert door.check(flow)
    assert flow.response is not None and flow.response.status_code == 404
    assert KEY not in str(flow.request.headers)


@pytest.mark.parametrize("url", ["https://pypi.org/simple/x", "http://internal.example/health",
                                 "https://api.openai.com/status"])
def test_what_gateway_pass_lists_passes_without_a_key(door: passing.Passing, url: str) -> None:
    assert not door.check(_flow(url, "reverse:https://api.openai.com"))
    assert not door.check(_flow(url, "regular"))


def _connect(door: passing.Passing, host: str, headers: dict[str, str] | None = None) -> http.HTTPFlow:
    flow = tflow.tflow(req=http.Request.make("CONNECT", f"http://{host}:443", b"", headers or {}))
    flow.request.host, flow.request.port = host, 443
    flow.client_conn = connection.Client(peername=("127.0.0.1", 5000), sockname=("127.0.0.1", 8080))
    door.gate.http_connect(flow)
    door.http_connect(flow)
    return flow


def test_a_keyless_connect_is_407_unless_the_gateway_serves_or_gateway_pass_lists_its_host(
        door: passing.Passing) -> None:
    refused = _connect(door, "127.0.0.1")
    assert refused.response is not None and refused.response.status_code == 407
    assert _connect(door, "api.openai.com").response is None  # each request inside is checked
    assert _connect(door, "pypi.org").response is None
    import base64
    password = base64.b64encode(f"ana:{KEY}".encode()).decode()
    assert _connect(door, "127.0.0.1", {"proxy-authorization": f"Basic {password}"}).response is None


def test_nothing_changes_without_client_keys() -> None:
    flows = Flows()
    gate = keys.Keys(flows)
    door = passing.Passing(gate, flows, lambda: ())
    with taddons.context(gate, door):
        flow = _flow("http://10.0.0.5/admin", "regular", {"authorization": "Bearer sk-own"})
        assert not door.check(flow)
        assert flow.request.headers["authorization"] == "Bearer sk-own"


def test_a_pass_entry_with_a_port_is_refused() -> None:
    with pytest.raises(exceptions.OptionsError):
        passing.parse(["pypi.org:443"])
