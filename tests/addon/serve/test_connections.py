"""addon/serve/connections.py: admission, timeouts and reports, with stand-in connection handlers
(issue 35, case 2; the real proxy: tests/reliability/test_hostile_sockets.py)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from mitmproxy import connection
from mitmproxy.proxy.server import ConnectionIO
from mitmproxy.test import tflow

from addon.patches import early_answer
from addon.serve import connections
from addon.work import limits


class Task:
    def __init__(self) -> None:
        self.cancelled: str | None = None

    def cancel(self, why: str) -> None:
        self.cancelled = why


def _handler(address: str = "192.0.2.1") -> Any:
    client = connection.Client(peername=(address, 40000), sockname=("127.0.0.1", 8080), timestamp_start=0)
    return SimpleNamespace(client=client, transports={client: ConnectionIO(handler=Task())},  # type: ignore[arg-type]
                           timeout_watchdog=SimpleNamespace(last_activity=0.0))


@pytest.fixture
def door() -> connections.Connections:
    door = connections.Connections()
    door._total, door._per_address, door._timeouts = 3, 2, (30.0, 120.0, 60.0)
    return door


def test_connections_past_either_bound_get_a_503_that_says_which(door: connections.Connections) -> None:
    a1, a2, a3, b1, b2 = (_handler("192.0.2.1"), _handler("192.0.2.1"), _handler("192.0.2.1"),
                          _handler("192.0.2.2"), _handler("192.0.2.3"))
    assert door.admit(a1) is None and door.admit(a2) is None
    third = door.admit(a3)
    assert third is not None and third.startswith(b"HTTP/1.1 503 ")
    assert b"gateway_max_connections_per_address" in third
    assert door.admit(b1) is None
    total = door.admit(b2)
    assert total is not None and b"(gateway_max_connections)" in total
    door.leave(a1)
    assert door.admit(b2) is None  # room again


def test_the_total_follows_the_descriptor_limit_unless_set() -> None:
    assert connections.connection_limit(42) == 42
    assert connections.connection_limit(0) >= 16


def _swept(door: connections.Connections, handler: Any, now: float, wall: float = 0.0) -> str | None:
    door.sweep(now, wall)
    return handler.transports[handler.client].handler.cancelled


def test_a_connection_without_a_whole_head_is_closed_after_the_header_timeout(
        door: connections.Connections) -> None:
    door.admit(handler := _handler())
    watch = door.watches[handler.client]
    assert _swept(door, handler, watch.since + 29) is None
    assert "gateway_header_timeout" in (_swept(door, handler, watch.since + 31) or "")
    assert handler.client not in door.watches


def test_an_idle_connection_after_an_answer_has_the_keepalive_timeout(door: connections.Connections) -> None:
    door.admit(handler := _handler())
    flow = tflow.tflow(resp=True)
    flow.client_conn = handler.client
    door.requestheaders(flow)
    door.request(flow)
    assert _swept(door, handler, door.watches[handler.client].since + 500) is None  # in flight: no bound
    door.response(flow)
    since = door.watches[handler.client].since
    assert _swept(door, handler, since + 100) is None
    assert "gateway_keepalive_timeout" in (_swept(door, handler, since + 121) or "")


def test_a_body_that_pauses_past_the_body_timeout_is_closed(door: connections.Connections) -> None:
    door.admit(handler := _handler())
    flow = tflow.tflow()
    flow.client_conn = handler.client
    door.requestheaders(flow)
    handler.timeout_watchdog.last_activity = 1000.0
    assert _swept(door, handler, 0, wall=1059.0) is None
    assert "gateway_body_timeout" in (_swept(door, handler, 0, wall=1061.0) or "")


def test_a_websocket_has_no_timeout_until_it_ends(door: connections.Connections) -> None:
    door.admit(handler := _handler())
    flow = tflow.twebsocketflow()
    flow.client_conn = handler.client
    door.requestheaders(flow)
    door.request(flow)
    door.response(flow)  # the 101: the socket follows
    assert _swept(door, handler, 10_000) is None
    door.websocket_end(flow)
    assert _swept(door, handler, door.watches[handler.client].since + 121) is not None


def test_a_connection_lingering_after_an_early_answer_is_closed(door: connections.Connections) -> None:
    door.admit(handler := _handler())
    early_answer.lingering[handler.client] = 100.0
    assert _swept(door, handler, 100 + limits.LINGER_SECONDS - 1) is None
    assert "lingered" in (_swept(door, handler, 100 + limits.LINGER_SECONDS + 1) or "")


def test_what_is_refused_or_closed_is_said_in_one_line_per_kind(
        door: connections.Connections, caplog: pytest.LogCaptureFixture) -> None:
    for n in range(50):
        door.admit(_handler(f"192.0.2.{n % 7}"))
    with caplog.at_level(logging.WARNING):
        door.report(door._reported + connections.REPORT_SECONDS + 1)
        door.report(door._reported + 1)  # within the interval: nothing more
    (line,) = caplog.messages
    assert line.startswith("gateway: refused 47 connection(s)") and "and 2 more addresses" in line
