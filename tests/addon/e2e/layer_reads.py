"""A test's mitmdump script: how many reads mitmproxy's layers got from the server's side of each
flow while its answer's body streamed (the `DataReceived` events of its server connection between
`responseheaders` and `response`), written as one JSON line per flow, `{"reads": N}`, to the file
`GATEWAY_TEST_LAYER_READS` names. tests/addon/e2e/test_body_relay.py reads it: a piece the gateway's
body relay (addon/patches/body_relay.py) writes to the client straight is no such read."""

from __future__ import annotations

import collections
import json
import os
from typing import Any

from mitmproxy import connection, http
from mitmproxy.proxy import events, server

_reads: collections.Counter[str] = collections.Counter()
_at_head: dict[str, int] = {}
_original = server.ConnectionHandler.server_event


async def _counting(self: Any, event: events.Event) -> None:
    if isinstance(event, events.DataReceived) and isinstance(event.connection, connection.Server):
        _reads[event.connection.id] += 1
    await _original(self, event)


def load(_loader: Any) -> None:
    server.ConnectionHandler.server_event = _counting  # type: ignore[method-assign]


def responseheaders(flow: http.HTTPFlow) -> None:
    _at_head[flow.id] = _reads[flow.server_conn.id]


def response(flow: http.HTTPFlow) -> None:
    reads = _reads[flow.server_conn.id] - _at_head.pop(flow.id, 0)
    with open(os.environ["GATEWAY_TEST_LAYER_READS"], "a") as out:
        out.write(json.dumps({"reads": reads}) + "\n")
