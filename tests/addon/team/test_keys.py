"""addon/team/keys.py: who a request is (its key, the proxy password of its tunnel), what it may ask,
and the warning for a listener others can reach."""

from __future__ import annotations

import asyncio
import base64
import io
import logging
from pathlib import Path

import pytest
from mitmproxy import exceptions, http
from mitmproxy.test import taddons, tflow

from addon.observe import flowinfo
from addon.team import clients_file, keys
from addon.team.clients_file import Client
from addon.team.keys import Keys

ANA = clients_file.KEY_PREFIX + "ana-unit-key-0123456789"
BOB = clients_file.KEY_PREFIX + "bob-unit-key-0123456789"


def _file(tmp_path: Path, *extra: Client) -> Path:
    path = tmp_path / "clients.toml"
    known = (Client("ana", clients_file.hash_key(ANA), ("gpt-5*",)),
             Client("bob", clients_file.hash_key(BOB)))
    path.write_text("".join(clients_file.table(c) for c in (*known, *extra)))
    return path


def _flow(headers: dict[str, str]) -> http.HTTPFlow:
    flow = tflow.tflow()
    flow.request.headers.clear()
    for name, value in headers.items():
        flow.request.headers[name] = value
    return flow


# -- who a key names ------------------------------------------------------------------------------
def test_a_key_matches_its_clients_hash_only() -> None:
    known = (Client("ana", clients_file.hash_key(ANA)), Client("bob", clients_file.hash_key(BOB)))
    assert keys.match(known, ANA).name == "ana"
    assert keys.match(known, BOB).name == "bob"
    assert keys.match(known, ANA + "x") is None
    assert keys.match(known, clients_file.hash_key(ANA)) is None  # the hash itself is no key


def test_the_key_is_a_bearer_token_or_the_proxy_password() -> None:
    basic = base64.b64encode(f"ana:{ANA}".encode()).decode()
    assert keys.presented({"authorization": f"Bearer {ANA}"}) == (ANA, "authorization")
    assert keys.presented({"proxy-authorization": f"Basic {basic}", "authorization": "Bearer other"}) \
        == (ANA, "proxy-authorization")
    assert keys.presented({"authorization": f"Basic {basic}"}) == (None, "")
    assert keys.presented({"proxy-authorization": "Basic %%%"}) == (None, "")
    assert keys.presented({}) == (None, "")


# -- the proxy's side -----------------------------------------------------------------------------
@pytest.fixture
def gate(tmp_path: Path):
    gate = Keys()
    with taddons.context(gate) as tctx:
        tctx.configure(gate, gateway_clients=str(_file(tmp_path)))
        yield gate


def test_a_known_key_names_the_flows_client_and_leaves_the_flow(gate: Keys) -> None:
    flow = _flow({"authorization": f"Bearer {ANA}", "user-agent": "codex"})
    assert gate.identify(flow).name == "ana"
    assert flow.metadata[flowinfo.CLIENT] == "ana"
    assert "authorization" not in flow.request.headers  # never upstream, never saved
    assert flow.response is None


@pytest.mark.parametrize("headers", [{}, {"authorization": "Bearer gwk-unknown-0123456789"},
                                     {"authorization": f"Basic {ANA}"}])
def test_a_missing_or_unknown_key_is_answered_401(gate: Keys, headers: dict[str, str]) -> None:
    flow = _flow(headers)
    assert gate.identify(flow) is None
    assert flow.response.status_code == 401
    assert flow.response.json()["error"]["code"] == "invalid_api_key"
    assert ANA not in str(flow.request.headers)


def test_a_connects_proxy_password_names_the_client_of_the_requests_inside(gate: Keys) -> None:
    connect = _flow({"proxy-authorization": "Basic " + base64.b64encode(f"bob:{BOB}".encode()).decode()})
    connect.request.method = "CONNECT"
    gate.http_connect(connect)
    assert connect.request.headers["proxy-authorization"] == "<redacted>"
    inside = _flow({"authorization": "Bearer chatgpt-login-token-0123"})
    inside.client_conn = connect.client_conn
    assert gate.identify(inside).name == "bob"
    # the client's own ChatGPT token is not a gateway key: it stays for a route to OpenAI itself
    assert inside.request.headers["authorization"] == "Bearer chatgpt-login-token-0123"


def test_the_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    now = [0.0]
    gate = Keys(clock=lambda: now[0])
    path = _file(tmp_path)
    with taddons.context(gate) as tctx:
        tctx.configure(gate, gateway_clients=str(path))
        assert clients_file.main(["--file", str(path), "remove", "bob"], out=io.StringIO()) == 0
        now[0] += 2
        flow = _flow({"authorization": f"Bearer {BOB}"})
        assert gate.identify(flow) is None and flow.response.status_code == 401


def test_an_unusable_file_stops_the_option(tmp_path: Path) -> None:
    gate = Keys()
    (tmp_path / "bad.toml").write_text("[[client]]\nname = 1\n")
    with taddons.context(gate) as tctx:
        with pytest.raises(exceptions.OptionsError, match="name must be"):
            tctx.configure(gate, gateway_clients=str(tmp_path / "bad.toml"))
        with pytest.raises(exceptions.OptionsError, match="cannot be read"):
            tctx.configure(gate, gateway_clients=str(tmp_path / "missing.toml"))


def test_without_the_option_every_request_is_the_anonymous_client() -> None:
    gate = Keys()
    with taddons.context(gate):
        flow = _flow({"authorization": "Bearer sk-proj-own-key-0123"})
        assert gate.identify(flow) is keys.ANONYMOUS
        assert flow.request.headers["authorization"] == "Bearer sk-proj-own-key-0123"


@pytest.mark.parametrize(("modes", "host", "exposed"), [
    (["regular"], "", ["every interface"]),
    (["regular"], "0.0.0.0", ["0.0.0.0"]),
    (["regular"], "127.0.0.1", []),
    (["reverse:https://api.openai.com"], "localhost", []),
    (["reverse:https://api.openai.com@10.0.0.5:8080"], "127.0.0.1", ["10.0.0.5"]),
    (["regular@[::1]:8080"], "", []),
])
def test_listeners_others_can_reach_are_named(modes: list[str], host: str, exposed: list[str]) -> None:
    assert keys.exposed_listeners(modes, host) == exposed


def test_a_listener_others_reach_without_client_keys_is_warned_about_at_start(
        caplog: pytest.LogCaptureFixture) -> None:
    gate = Keys()
    with taddons.context(gate) as tctx, caplog.at_level(logging.WARNING):
        tctx.options.update(listen_host="0.0.0.0")
        gate.running()
    assert "listens on 0.0.0.0 without gateway_clients" in caplog.text
    assert "spends your upstream keys" in caplog.text


def test_the_operators_replay_of_a_saved_flow_keeps_its_client(gate: Keys) -> None:
    flow = _flow({"authorization": "<redacted>"})
    flow.metadata[flowinfo.CLIENT] = "bob"
    flow.is_replay = "request"
    assert gate.identify(flow).name == "bob"
    forged = _flow({})
    forged.metadata[flowinfo.CLIENT] = "bob"  # a live request cannot name itself
    assert gate.identify(forged) is None


def test_a_replayed_flow_is_translated_again_for_its_own_client(gateway, tmp_path: Path) -> None:
    """mitmweb's Replay: the saved flow's key is gone (`<redacted>`), its client is not."""
    from tests.addon.test_gateway_replay import _replay

    addon, tctx = gateway
    tctx.configure(addon, gateway_clients=str(_file(tmp_path)))
    flow = _flow({"authorization": f"Bearer {ANA}", "host": "api.openai.com"})
    flow.request.url = "https://api.openai.com/v1/responses"
    flow.request.method = "POST"
    flow.request.content = b'{"model": "gpt-5.5", "input": "hi", "stream": true}'
    addon.requestheaders(flow)
    asyncio.run(addon.request(flow))
    assert flow.metadata["gateway"]["client"] == "ana"
    saved_again = _saved_copy(flow)
    _replay(addon, saved_again)
    assert saved_again.metadata[flowinfo.CLIENT] == "ana"
    assert saved_again.metadata["gateway"]["client"] == "ana"
    assert "replayed" in saved_again.metadata["gateway"]["notes"][0]


def _saved_copy(flow: http.HTTPFlow) -> http.HTTPFlow:
    from mitmproxy import io as mio

    buffer = io.BytesIO()
    mio.FlowWriter(buffer).add(flow)
    (loaded,) = mio.FlowReader(io.BytesIO(buffer.getvalue())).stream()
    assert isinstance(loaded, http.HTTPFlow)
    return loaded
