"""Revoking a client key closes its open WebSockets (docs/team.md "Revoking a key"): real
mitmdump with client keys, a Codex-style socket (the Responses WebSocket, docs/websocket.md) that
has served a turn; `python -m addon clients remove` (or `rotate`) while it is open closes it within
5 s with code 1008 and a reason the client can read, and a new socket with the old key is refused
at its upgrade (401)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from addon.team import clients_file as clients
from tests.addon.e2e.conftest import StartProxy
from tests.addon.e2e.upstream import Upstream

pytestmark = pytest.mark.timeout(90)

KEYS = {name: clients.KEY_PREFIX + f"{name}-revoked-e2e-0123456789" for name in ("ana", "bob", "cy")}
TURN = json.dumps({"type": "response.create", "model": "gpt-5.5", "store": False, "stream": True,
                   "input": [{"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                              "text": "hello"}]}]})


async def _turn(ws: ClientConnection) -> str:
    await ws.send(TURN)
    while True:
        event = json.loads(await ws.recv())
        if event["type"] in ("response.completed", "response.failed", "error"):
            return event["type"]


@pytest.mark.parametrize("command", ["remove", "rotate"])
def test_a_revoked_clients_open_socket_is_closed_within_five_seconds(
        start_proxy: StartProxy, module_dir: Path, upstream: Upstream, command: str) -> None:
    path = module_dir / f"revoke-{command}.toml"
    path.write_text("".join(clients.table(clients.Client(name, clients.hash_key(key)))
                            for name, key in KEYS.items()), encoding="utf-8")
    proxy = start_proxy(f"revoke-{command}", "reverse:https://api.openai.com", gateway_clients=str(path))
    url = proxy.url.replace("http://", "ws://") + "/v1/responses"

    def socket(name: str) -> Any:
        return connect(url, proxy=None, additional_headers={"authorization": f"Bearer {KEYS[name]}"})

    async def scenario() -> tuple[Any, ...]:
        async with socket("bob") as bob, socket("cy") as cy:
            assert await _turn(bob) == "response.completed"
            assert await _turn(cy) == "response.completed"
            assert clients.main(["--file", str(path), command, "bob"], out=io.StringIO()) == 0
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(bob.recv(), 5)  # the gateway closes it; nothing else comes
            code, reason = bob.close_code, bob.close_reason
            still = await _turn(cy)  # another client's socket goes on
        with pytest.raises(InvalidStatus) as refused:
            async with socket("bob"):
                pass
        return code, reason, still, refused.value.response.status_code

    code, reason, still, status = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert (code, reason) == (1008, "gateway client key revoked")
    assert still == "response.completed"
    assert status == 401
