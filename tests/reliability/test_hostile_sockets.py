"""Issue 35, cases 1, 2 and 9, through real mitmdump: what one client connection may hold.

- A WebSocket message past its bound closes the socket with 1009 as it arrives, before mitmproxy
  buffers it (addon/patches/websocket_bound.py). Before: a 200 MiB fragmented message was kept
  whole first; one 100 MiB frame held the loop for about 40 s.
- Connections that never finish their head are closed after `gateway_header_timeout`; one
  address may hold `gateway_max_connections_per_address`, the process what its descriptor limit
  leaves room for; what is refused gets a 503 and no traceback (addon/serve/connections.py).
  Before: 19,985 half-open connections reached the descriptor limit, and 125,000 tracebacks.
- An HTTP/1 head past `gateway_max_head_bytes` is a 431 (addon/patches/head_bound.py). Before:
  buffered without end, never answered.
- 500 WebSocket upgrades of one client at once are all served (addon/serve/websocket/endpoint.py).
  Before: 143 of them got 404.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from tests.addon.e2e.upstream import Upstream
from tests.reliability.hostile import (
    KEY,
    MiB,
    answered,
    connect,
    descriptors,
    rss_mib,
    team,
    turn_body,
)
from tests.support.mitmdump import MitmDump
from tests.support.wait import until

pytestmark = pytest.mark.timeout(240)
HEADERS = {"authorization": f"Bearer {KEY}"}
PREWARM = json.dumps({"type": "response.create", "model": "gpt-5.5", "generate": False, "input": []})


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(scope="module")
def target() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory, target: Upstream,
          upstream: Upstream) -> Iterator[MitmDump]:
    """Short timeouts and a small per-address bound, so the test sees them act; per-address is
    off for 127.0.0.1, the well-behaved client's own address, by giving attackers others."""
    tmp = tmp_path_factory.mktemp("sockets")
    options = {"gateway_header_timeout": "2", "gateway_keepalive_timeout": "2", "gateway_body_timeout": "2",
               "gateway_max_connections_per_address": "600"}
    with team(tmp, target, upstream, options=options) as proxy:
        yield proxy


def _ws_url(proxy: MitmDump) -> str:
    return proxy.url.replace("http://", "ws://") + "/v1/responses"


async def _prewarms(proxy: MitmDump, done: list[int], stop: asyncio.Event) -> None:
    """Another client on its own socket: prewarm after prewarm while the attack runs."""
    async with ws_connect(_ws_url(proxy), additional_headers=HEADERS, proxy=None) as ws:
        while not stop.is_set():
            await ws.send(PREWARM)
            while json.loads(await ws.recv())["type"] != "response.completed":
                pass
            done.append(1)
            await asyncio.sleep(0.02)


def _big_message(proxy: MitmDump, size: int, fragment: int | None) -> tuple[int | None, int, float]:
    """Send one message of `size` bytes (in fragments of `fragment`, or one frame); (the close code
    the sender got, prewarms the other client completed meanwhile, proxy RSS growth in MiB)."""
    async def main() -> tuple[int | None, int, float]:
        done: list[int] = []
        stop = asyncio.Event()
        other = asyncio.create_task(_prewarms(proxy, done, stop))
        await until_async(lambda: done, "the other client's first prewarm")
        before = rss_mib(proxy.pid)
        code = None
        async with ws_connect(_ws_url(proxy), additional_headers=HEADERS, proxy=None, max_size=None,
                              write_limit=4 * MiB) as ws:
            try:
                if fragment:
                    async def pieces() -> Any:
                        for _ in range(size // fragment):
                            yield "x" * fragment
                    await ws.send(pieces())
                else:
                    await ws.send("x" * size)
                await asyncio.wait_for(ws.recv(), 120)
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else None
        grown = rss_mib(proxy.pid) - before
        seen = len(done)
        stop.set()
        await asyncio.wait_for(other, 30)
        return code, seen, grown

    return asyncio.run(asyncio.wait_for(main(), 200))


async def until_async(condition: Any, what: str, timeout: float = 60) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        await asyncio.sleep(0.01)


def test_a_fragmented_message_past_the_bound_closes_its_socket_before_it_is_kept(proxy: MitmDump) -> None:
    code, others, grown = _big_message(proxy, 200 * MiB, MiB)
    assert code == 1009
    assert grown < 100, f"the proxy grew {grown:.0f} MiB: the message was kept before the bound"
    assert others > 0


def test_one_frame_past_the_bound_closes_its_socket_at_once(proxy: MitmDump) -> None:
    code, others, grown = _big_message(proxy, 100 * MiB, None)
    assert code == 1009, "the socket was not closed for its message (1009)"
    assert grown < 100
    assert others > 0, "the other client was served nothing meanwhile"


def _half_open(port: int, source: str, n: int) -> list[socket.socket]:
    """`n` connections that send the start of a head and never its end."""
    socks = []
    for _ in range(n):
        sock = connect(port, source)
        sock.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: gateway.test\r\n")
        socks.append(sock)
    return socks


def _closed_by_proxy(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_connections_that_never_finish_their_head_are_closed_and_their_descriptors_freed(
        proxy: MitmDump) -> None:
    base = descriptors(proxy.pid)
    socks = _half_open(proxy.port, "127.0.0.2", 200)
    try:
        until(lambda: descriptors(proxy.pid) >= base + 150, "the proxy to hold the half-open connections")
        until(lambda: all(_closed_by_proxy(s) for s in socks),
              "the proxy to close every half-open connection")
        until(lambda: descriptors(proxy.pid) <= base + 10, "the proxy's descriptors to be freed")
    finally:
        for sock in socks:
            sock.close()
    assert "Traceback" not in proxy.log


def test_one_address_past_its_bound_gets_a_503_and_the_others_are_served(
        tmp_path: Path, target: Upstream, upstream: Upstream) -> None:
    with team(tmp_path, target, upstream, options={"gateway_max_connections_per_address": "20"}) as proxy:
        socks = _half_open(proxy.port, "127.0.0.3", 40)
        try:
            until(lambda: sum(_peek(s) for s in socks) >= 20, "20 connections to be refused")
            refused = [a for s in socks if _peek(s) and (a := answered(s))]
            assert len(refused) == 20
            assert all(a.startswith(b"HTTP/1.1 503 ") and b"too_many_connections" in a for a in refused)
            served = httpx.post(f"{proxy.url}/v1/responses", content=turn_body(),
                                headers={**HEADERS, "content-type": "application/json"}, timeout=30)
            assert served.status_code == 200
        finally:
            for sock in socks:
                sock.close()
        assert "Traceback" not in proxy.log
        until(lambda: "past gateway_max_connections_per_address; from 127.0.0.3 (20)" in proxy.log,
              "one line saying what was refused")


def _peek(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return bool(sock.recv(1, socket.MSG_PEEK))
    except (BlockingIOError, OSError):
        return False


def test_past_the_descriptor_limit_connections_are_refused_without_a_traceback(
        tmp_path: Path, target: Upstream, upstream: Upstream) -> None:
    with team(tmp_path, target, upstream, options={"gateway_max_connections_per_address": "10"}) as proxy:
        subprocess.run(["prlimit", f"--pid={proxy.pid}", "--nofile=400:400"], check=True)
        socks: list[socket.socket] = []
        try:
            for n in range(40):  # 400 connections from 40 addresses: each address within its bound
                socks += _half_open(proxy.port, f"127.0.1.{n + 1}", 10)
            until(lambda: sum(_peek(s) for s in socks) >= 200, "the connections past the limit to be refused")
            assert descriptors(proxy.pid) < 400
        finally:
            for sock in socks:
                sock.close()
        served = httpx.post(f"{proxy.url}/v1/responses", content=turn_body(),
                            headers={**HEADERS, "content-type": "application/json"}, timeout=30)
        assert served.status_code == 200
        assert "Traceback" not in proxy.log and "Too many open files" not in proxy.log


def test_a_head_past_its_bound_is_431_and_not_kept(proxy: MitmDump) -> None:
    before = rss_mib(proxy.pid)
    sock = connect(proxy.port)
    sock.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: gateway.test\r\n")
    got = b""
    try:
        for _ in range(200):  # 200 MiB of header lines at most
            sock.sendall((b"X-Pad: " + b"a" * 1000 + b"\r\n") * 1024)
            if got := answered(sock):
                break
    except OSError:
        pass
    got = got or sock.recv(65536)
    sock.close()
    assert got.startswith(b"HTTP/1.1 431 "), got[:100]
    assert rss_mib(proxy.pid) - before < 32


def test_a_burst_of_500_upgrades_from_one_client_is_served_whole(proxy: MitmDump) -> None:
    async def one() -> str:
        async with ws_connect(_ws_url(proxy), additional_headers=HEADERS, proxy=None, open_timeout=60) as ws:
            await ws.send(PREWARM)
            while (event := json.loads(await ws.recv()))["type"] != "response.completed":
                pass
            return event["type"]

    async def main() -> list[Any]:
        return await asyncio.gather(*(one() for _ in range(500)), return_exceptions=True)

    results = asyncio.run(asyncio.wait_for(main(), 200))
    failed = [r for r in results if r != "response.completed"]
    assert not failed, f"{len(failed)} of 500 upgrades failed, e.g. {failed[0]!r}"
