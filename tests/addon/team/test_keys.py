"""addon/team/keys.py: the clients file, who a request is, the per-minute window, the command, and
the warning for a listener others can reach."""

from __future__ import annotations

import asyncio
import base64
import io
import logging
from pathlib import Path

import pytest
from mitmproxy import exceptions, http
from mitmproxy.test import taddons, tflow

from addon.team import keys as clients
from addon.team.keys import Client, ClientsError, Gate

ANA = clients.KEY_PREFIX + "ana-unit-key-0123456789"
BOB = clients.KEY_PREFIX + "bob-unit-key-0123456789"


def _file(tmp_path: Path, *extra: Client) -> Path:
    path = tmp_path / "clients.toml"
    path.write_text("".join(clients.table(c) for c in (Client("ana", clients.hash_key(ANA), ("gpt-5*",)),
                                                        Client("bob", clients.hash_key(BOB)), *extra)))
    return path


def _flow(headers: dict[str, str]) -> http.HTTPFlow:
    flow = tflow.tflow()
    flow.request.headers.clear()
    for name, value in headers.items():
        flow.request.headers[name] = value
    return flow


# -- the file -------------------------------------------------------------------------------------
def test_a_file_reads_into_clients_with_their_limits() -> None:
    text = ('[[client]]\nname = "ana"\nkey_sha256 = "' + "A" * 64 + '"\nmodels = ["gpt-5*"]\n'
            'tokens_per_day = 1000\nrequests_per_minute = 6\n')
    (ana,) = clients.parse(text)
    assert ana == Client("ana", "a" * 64, ("gpt-5*",), 1000, 6)
    assert ana.allows("gpt-5.5") and not ana.allows("o3")


@pytest.mark.parametrize(("text", "said"), [
    ('[[client]]\nname = "ana"\n', "key_sha256 must be 64 hex digits"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\nkey = "x"\n', "unknown field(s) key"),
    ('[[client]]\nname = "a b"\nkey_sha256 = "' + "a" * 64 + '"\n', "name must be"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\ntokens_per_day = -1\n', "tokens_per_day"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\nmodels = "gpt-5*"\n', "models must be"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\n[[client]]\nname = "ana"\n'
     'key_sha256 = "' + "b" * 64 + '"\n', "used twice"),
    ('[[client]]\nname = "ana"\nkey_sha256 = "' + "a" * 64 + '"\n[[client]]\nname = "bob"\n'
     'key_sha256 = "' + "a" * 64 + '"\n', "same key_sha256"),
    ("[route]\n", "write [[client]] tables only"),
    ("[[client]\n", "is not TOML"),
])
def test_a_file_that_cannot_be_used_is_refused_with_what_to_change(text: str, said: str) -> None:
    with pytest.raises(ClientsError, match=said.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        clients.parse(text)


def test_a_key_matches_its_clients_hash_only() -> None:
    known = (Client("ana", clients.hash_key(ANA)), Client("bob", clients.hash_key(BOB)))
    assert clients.match(known, ANA).name == "ana"
    assert clients.match(known, BOB).name == "bob"
    assert clients.match(known, ANA + "x") is None
    assert clients.match(known, clients.hash_key(ANA)) is None  # the hash itself is no key


def test_the_key_is_a_bearer_token_or_the_proxy_password() -> None:
    basic = base64.b64encode(f"ana:{ANA}".encode()).decode()
    assert clients.presented({"authorization": f"Bearer {ANA}"}) == (ANA, "authorization")
    assert clients.presented({"proxy-authorization": f"Basic {basic}", "authorization": "Bearer other"}) \
        == (ANA, "proxy-authorization")
    assert clients.presented({"authorization": f"Basic {basic}"}) == (None, "")
    assert clients.presented({"proxy-authorization": "Basic %%%"}) == (None, "")
    assert clients.presented({}) == (None, "")


# -- budgets --------------------------------------------------------------------------------------
def test_the_minute_window_counts_requests_and_says_when_the_next_may_go() -> None:
    now = [100.0]
    window = clients.RateWindow(lambda: now[0])
    assert window.take("ana", 2) == 0 and window.take("ana", 2) == 0
    assert window.take("ana", 2) == pytest.approx(60.0)
    assert window.take("bob", 2) == 0  # another client's own window
    now[0] += 30
    assert window.take("ana", 2) == pytest.approx(30.0)
    now[0] += 30
    assert window.take("ana", 2) == 0
    assert window.take("ana", 0) == 0  # no limit
    assert clients.retry_after(0.2) == "1" and clients.retry_after(30.5) == "31"


# -- the proxy's side -----------------------------------------------------------------------------
@pytest.fixture
def gate(tmp_path: Path):
    gate = Gate()
    with taddons.context(gate) as tctx:
        tctx.configure(gate, gateway_clients=str(_file(tmp_path)))
        yield gate


def test_a_known_key_names_the_flows_client_and_leaves_the_flow(gate: Gate) -> None:
    flow = _flow({"authorization": f"Bearer {ANA}", "user-agent": "codex"})
    assert gate.identify(flow).name == "ana"
    assert flow.metadata[clients.METADATA] == "ana"
    assert "authorization" not in flow.request.headers  # never upstream, never saved
    assert flow.response is None


@pytest.mark.parametrize("headers", [{}, {"authorization": "Bearer gwk-unknown-0123456789"},
                                     {"authorization": f"Basic {ANA}"}])
def test_a_missing_or_unknown_key_is_answered_401(gate: Gate, headers: dict[str, str]) -> None:
    flow = _flow(headers)
    assert gate.identify(flow) is None
    assert flow.response.status_code == 401
    assert flow.response.json()["error"]["code"] == "invalid_api_key"
    assert ANA not in str(flow.request.headers)


def test_a_connects_proxy_password_names_the_client_of_the_requests_inside(gate: Gate) -> None:
    connect = _flow({"proxy-authorization": "Basic " + base64.b64encode(f"bob:{BOB}".encode()).decode()})
    connect.request.method = "CONNECT"
    gate.http_connect(connect)
    assert connect.request.headers["proxy-authorization"] == "<redacted>"
    inside = _flow({"authorization": "Bearer chatgpt-login-token-0123"})
    inside.client_conn = connect.client_conn
    assert gate.identify(inside).name == "bob"
    # the client's own ChatGPT token is not a gateway key: it stays for a route to OpenAI itself
    assert inside.request.headers["authorization"] == "Bearer chatgpt-login-token-0123"


def test_a_model_outside_the_patterns_is_403_and_a_busy_minute_429(tmp_path: Path) -> None:
    gate = Gate()
    with taddons.context(gate) as tctx:
        tctx.configure(gate, gateway_clients=str(_file(tmp_path, Client("cy", "c" * 64, (), 0, 1))))
        ana, cy = gate.clients[0], gate.clients[2]
        assert gate.refusal(ana, "o3")[0] == 403
        assert gate.refusal(ana, "gpt-5.5") is None
        assert gate.refusal(cy, "o3") is None
        status, code, _message, headers = gate.refusal(cy, "o3")
        assert (status, code) == (429, "rate_limit_exceeded") and int(headers["retry-after"]) >= 1


def test_the_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    now = [0.0]
    gate = Gate(clock=lambda: now[0])
    path = _file(tmp_path)
    with taddons.context(gate) as tctx:
        tctx.configure(gate, gateway_clients=str(path))
        assert clients.main(["--file", str(path), "remove", "bob"], out=io.StringIO()) == 0
        now[0] += 2
        flow = _flow({"authorization": f"Bearer {BOB}"})
        assert gate.identify(flow) is None and flow.response.status_code == 401


def test_an_unusable_file_stops_the_option(tmp_path: Path) -> None:
    gate = Gate()
    (tmp_path / "bad.toml").write_text("[[client]]\nname = 1\n")
    with taddons.context(gate) as tctx:
        with pytest.raises(exceptions.OptionsError, match="name must be"):
            tctx.configure(gate, gateway_clients=str(tmp_path / "bad.toml"))
        with pytest.raises(exceptions.OptionsError, match="cannot be read"):
            tctx.configure(gate, gateway_clients=str(tmp_path / "missing.toml"))


def test_without_the_option_every_request_is_the_anonymous_client() -> None:
    gate = Gate()
    with taddons.context(gate):
        flow = _flow({"authorization": "Bearer sk-proj-own-key-0123"})
        assert gate.identify(flow) is clients.ANONYMOUS
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
    assert clients.exposed_listeners(modes, host) == exposed


def test_a_listener_others_reach_without_client_keys_is_warned_about_at_start(
        caplog: pytest.LogCaptureFixture) -> None:
    gate = Gate()
    with taddons.context(gate) as tctx, caplog.at_level(logging.WARNING):
        tctx.options.update(listen_host="0.0.0.0")
        gate.running()
    assert "listens on 0.0.0.0 without gateway_clients" in caplog.text
    assert "spends your upstream keys" in caplog.text


# -- the command ----------------------------------------------------------------------------------
def test_add_prints_a_key_once_and_keeps_its_hash_only(tmp_path: Path) -> None:
    path = tmp_path / "clients.toml"
    out = io.StringIO()
    assert clients.main(["--file", str(path), "add", "ana", "--models", "gpt-5*,o4*",
                         "--tokens-per-day", "500"], out=out) == 0
    key = out.getvalue().strip().splitlines()[-1]
    assert key.startswith(clients.KEY_PREFIX)
    assert key not in path.read_text()
    (ana,) = clients.load(str(path))
    assert clients.match((ana,), key) == ana
    assert (ana.models, ana.tokens_per_day) == (("gpt-5*", "o4*"), 500)
    assert path.stat().st_mode & 0o777 == 0o600


def test_rotate_gives_a_new_key_and_keeps_the_limits_and_remove_revokes(tmp_path: Path) -> None:
    path = tmp_path / "clients.toml"
    first, second, listed = io.StringIO(), io.StringIO(), io.StringIO()
    clients.main(["--file", str(path), "add", "ana", "--requests-per-minute", "5"], out=first)
    clients.main(["--file", str(path), "add", "bob"], out=io.StringIO())
    assert clients.main(["--file", str(path), "add", "ana"], out=io.StringIO()) == 2
    assert clients.main(["--file", str(path), "rotate", "ana"], out=second) == 0
    old, new = first.getvalue().split()[-1], second.getvalue().split()[-1]
    known = clients.load(str(path))
    assert clients.match(known, old) is None and clients.match(known, new).requests_per_minute == 5
    assert clients.main(["--file", str(path), "remove", "ana"], out=io.StringIO()) == 0
    assert [c.name for c in clients.load(str(path))] == ["bob"]
    assert clients.main(["--file", str(path), "list"], out=listed) == 0
    assert listed.getvalue().startswith("bob\t")
    assert clients.main(["--file", str(path), "remove", "ana"], out=io.StringIO()) == 2


def test_the_operators_replay_of_a_saved_flow_keeps_its_client(gate: Gate) -> None:
    flow = _flow({"authorization": "<redacted>"})
    flow.metadata[clients.METADATA] = "bob"
    flow.is_replay = "request"
    assert gate.identify(flow).name == "bob"
    forged = _flow({})
    forged.metadata[clients.METADATA] = "bob"  # a live request cannot name itself
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
    assert saved_again.metadata[clients.METADATA] == "ana"
    assert saved_again.metadata["gateway"]["client"] == "ana"
    assert "replayed" in saved_again.metadata["gateway"]["notes"][0]


def _saved_copy(flow: http.HTTPFlow) -> http.HTTPFlow:
    from mitmproxy import io as mio

    buffer = io.BytesIO()
    mio.FlowWriter(buffer).add(flow)
    (loaded,) = mio.FlowReader(io.BytesIO(buffer.getvalue())).stream()
    assert isinstance(loaded, http.HTTPFlow)
    return loaded


def test_the_file_may_be_named_after_the_command_as_the_docs_write_it(tmp_path: Path) -> None:
    path = tmp_path / "clients.toml"
    assert clients.main(["add", "ana", "--file", str(path)], out=io.StringIO()) == 0
    assert clients.main(["rotate", "ana", "--file", str(path)], out=io.StringIO()) == 0
    listed = io.StringIO()
    assert clients.main(["list", "--file", str(path)], out=listed) == 0
    assert "ana" in listed.getvalue()
    assert clients.main(["remove", "ana", "--file", str(path)], out=io.StringIO()) == 0
    assert not clients.load(str(path))
