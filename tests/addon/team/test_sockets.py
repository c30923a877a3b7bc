"""addon/team/sockets.py: a removed or rotated client's open WebSockets are closed (1008, with a
reason), and a request arriving on one is refused 401; another client's socket goes on."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from mitmproxy.test import taddons, tflow

from addon.observe import flowinfo
from addon.team import clients_file, sockets
from addon.team.clients_file import Client
from addon.team.keys import Keys

ANA = clients_file.KEY_PREFIX + "ana-unit-key-0123456789"
BOB = clients_file.KEY_PREFIX + "bob-unit-key-0123456789"


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def _request_of(socket_id: str, client: str) -> Any:
    """A request of a socket, as addon/serve/websocket/turn.py makes it."""
    flow = tflow.tflow()
    flow.is_replay = "request"
    flow.metadata[flowinfo.CLIENT] = client
    flow.metadata[flowinfo.WEBSOCKET] = socket_id
    return flow


def _revoke(tmp_path: Path, command: str) -> list[tuple[str, int, str]]:
    path = tmp_path / "clients.toml"
    path.write_text("".join(clients_file.table(c) for c in (Client("ana", clients_file.hash_key(ANA)),
                                                            Client("bob", clients_file.hash_key(BOB)))))
    clock, registry, closed = Clock(), sockets.Sockets(), []
    keys = Keys(clock=clock)
    with taddons.context(keys) as tctx:
        tctx.configure(keys, gateway_clients=str(path))
        sockets.Revocations(keys, registry)
        for name in ("ana", "bob"):
            registry.register(f"ws_{name}", name,
                              lambda code, why, name=name: closed.append((name, code, why)))
        registry.register("ws_anonymous", None, lambda code, why: closed.append(("", code, why)))
        assert registry.sweep() == [] and keys.identify(_request_of("ws_ana", "ana")).name == "ana"
        assert clients_file.main(["--file", str(path), command, "ana"], out=io.StringIO()) == 0
        clock.now += 2  # the clients file is looked at again
        assert registry.sweep() == ["ws_ana"]
        assert registry.sweep() == []  # closed once
        late = _request_of("ws_ana", "ana")
        assert keys.identify(late) is None
        assert late.response.status_code == 401 and b"revoked" in late.response.content
        assert keys.identify(_request_of("ws_bob", "bob")).name == "bob"
        registry.unregister("ws_ana")
        assert len(registry) == 1
    return closed


def test_removing_a_client_closes_its_sockets_and_refuses_their_requests(tmp_path: Path) -> None:
    assert _revoke(tmp_path, "remove") == [("ana", 1008, "gateway client key revoked")]


def test_rotating_a_clients_key_closes_its_sockets_too(tmp_path: Path) -> None:
    assert _revoke(tmp_path, "rotate") == [("ana", 1008, "gateway client key revoked")]
